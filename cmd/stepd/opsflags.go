package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/notify"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task/registry"
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

// opsSetup is what the flags set up, started once the service exists.
type opsSetup struct {
	logs       *execlog.Destination
	dispatcher *notify.Dispatcher
	retention  time.Duration
}

// setup configures cfg from the flags and the registry file's Events.
func (o *opsFlags) setup(cfg *service.Config, st store.Store, configPath string, stdout io.Writer, log *slog.Logger) (*opsSetup, error) {
	var x opsSetup
	var err error
	if x.retention, err = parseRetention(*o.retention); err != nil {
		return nil, err
	}
	if *o.logGroups != "" {
		if x.logs, err = execlog.ToDir(*o.logGroups); err != nil {
			return nil, fmt.Errorf("--log-groups: %w", err)
		}
	} else {
		x.logs = execlog.ToWriter(stdout)
	}
	cfg.ExecutionLogs = x.logs
	var targets []notify.Target
	for _, u := range strings.Split(*o.webhooks, ",") {
		if u = strings.TrimSpace(u); u != "" {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				return nil, fmt.Errorf("--events-webhook: want an http:// or https:// URL, got %q", u)
			}
			targets = append(targets, &notify.Webhook{URL: u})
		}
	}
	if c := strings.TrimSpace(*o.command); c != "" {
		targets = append(targets, &notify.Command{Argv: []string{"/bin/sh", "-c", c}})
	}
	if configPath != "" {
		rc, err := registry.ReadConfig(configPath)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		for i, t := range rc.Events {
			switch {
			case t.Url != "" && len(t.Command) == 0:
				targets = append(targets, &notify.Webhook{URL: t.Url})
			case t.Url == "" && len(t.Command) > 0:
				targets = append(targets, &notify.Command{Argv: t.Command, Env: t.Env})
			default:
				return nil, fmt.Errorf("--config %s: Events[%d]: want exactly one of Url and Command", configPath, i)
			}
		}
	}
	if len(targets) > 0 {
		ns, ok := st.(notify.Store)
		if !ok {
			return nil, fmt.Errorf("events: the store keeps no outbox")
		}
		x.dispatcher = &notify.Dispatcher{Store: ns, Targets: targets, Region: cfg.Region, Account: cfg.Account, Log: log}
		cfg.StatusEvents = x.dispatcher.Kick
	}
	return &x, nil
}

// start runs the dispatcher and the retention loop until ctx ends.
func (x *opsSetup) start(ctx context.Context, svc *service.Service) {
	if x.dispatcher != nil {
		go x.dispatcher.Run(ctx)
	}
	if x.retention > 0 {
		go svc.Retain(ctx, x.retention, retentionEvery(x.retention))
	}
}

// retentionEvery is how often retention runs: hourly, or more often for a
// short retention.
func retentionEvery(keep time.Duration) time.Duration {
	return min(time.Hour, max(keep/10, time.Second))
}
