package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/server"
)

// opsFlags are serve's flags for execution logs, status-change events and
// retention.
type opsFlags struct {
	logGroups, webhooks, command, retention *string
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	return &opsFlags{
		logGroups: fs.String("log-groups", envOr("STEPD_LOG_GROUPS", ""), "directory of execution logs: the records a state machine's loggingConfiguration asks for go to one file per log group, named from the group's name; empty: standard output (env STEPD_LOG_GROUPS)"),
		webhooks:  fs.String("events-webhook", envOr("STEPD_EVENTS_WEBHOOK", ""), "URL[,URL...]: POST each status change of a Standard execution there as an EventBridge event, at least once (env STEPD_EVENTS_WEBHOOK)"),
		command:   fs.String("events-command", envOr("STEPD_EVENTS_COMMAND", ""), "shell command run for each status change of a Standard execution, with the EventBridge event on its standard input, at least once (env STEPD_EVENTS_COMMAND)"),
		retention: fs.String("retention", envOr("STEPD_RETENTION", "90d"), "how long finished executions and their histories are kept, e.g. 90d, 36h; 0 keeps them for good (env STEPD_RETENTION)"),
	}
}

// parseRetention reads a duration that may also be a number of days (90d).
func parseRetention(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--retention: want a duration such as 90d or 36h, got %q", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("--retention: want a duration such as 90d or 36h, got %q", s)
	}
	return v, nil
}

// apply sets what the flags give in cfg.
func (o *opsFlags) apply(cfg *server.Config) error {
	var err error
	if cfg.Retention, err = parseRetention(*o.retention); err != nil {
		return err
	}
	cfg.LogGroups, cfg.Webhooks, cfg.EventsCommand = *o.logGroups, splitList(*o.webhooks), *o.command
	return nil
}
