package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/server"
)

// logOptions are the flags of stepd serve's log.
type logOptions struct {
	format, level *string
}

// addLogFlags adds --log-format and --log-level to fs.
func addLogFlags(fs *flag.FlagSet) logOptions {
	return logOptions{
		format: fs.String("log-format", envOr("STEPD_LOG_FORMAT", "text"), "log format on standard error: text or json (env STEPD_LOG_FORMAT)"),
		level: fs.String("log-level", envOr("STEPD_LOG_LEVEL", "info"),
			"least level logged: debug (adds a line per API request), info (a line per execution end), warn or error (env STEPD_LOG_LEVEL)"),
	}
}

// json reports whether the log is JSON.
func (o logOptions) json() bool { return strings.EqualFold(*o.format, "json") }

// secondsAttr writes a duration as a number of seconds, as the JSON log
// gives them ("duration":1.25), rather than slog's integer nanoseconds.
func secondsAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key, a.Value.Duration().Seconds())
	}
	return a
}

// logger returns the logger the options ask for, writing to w.
func (o logOptions) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*o.level)); err != nil {
		return nil, fmt.Errorf("--log-level: want debug, info, warn or error, got %q", *o.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*o.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		opts.ReplaceAttr = secondsAttr
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: want text or json, got %q", *o.format)
}

// addTimeFlag adds --time-scale to fs.
func addTimeFlag(fs *flag.FlagSet) *float64 {
	return fs.Float64("time-scale", timeScaleDefault(),
		"run time this many times as fast as the wall clock's, e.g. 0.01: a Wait of 60 s takes 0.6 s; 1 is real time (env STEPD_TIME_SCALE, or Step Functions Local's WAIT_TIME_SCALE)")
}

// timeScaleDefault is the time scale the environment sets: STEPD_TIME_SCALE,
// else WAIT_TIME_SCALE (Step Functions Local's name), else 1. A value that
// is not a number is left for the flag check to refuse.
func timeScaleDefault() float64 {
	for _, name := range []string{"STEPD_TIME_SCALE", "WAIT_TIME_SCALE"} {
		if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return math.NaN()
			}
			return f
		}
	}
	return 1
}

// opsFlags are serve's flags for execution logs, status-change events and
// retention.
type opsFlags struct {
	logGroups, webhooks, command, retention, metricsAddr *string
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	return &opsFlags{
		logGroups:   fs.String("log-groups", envOr("STEPD_LOG_GROUPS", ""), "directory of execution logs: the records a state machine's loggingConfiguration asks for go to one file per log group, named from the group's name; empty: standard output (env STEPD_LOG_GROUPS)"),
		webhooks:    fs.String("events-webhook", envOr("STEPD_EVENTS_WEBHOOK", ""), "URL[,URL...]: POST each status change of a Standard execution there as an EventBridge event, at least once (env STEPD_EVENTS_WEBHOOK)"),
		command:     fs.String("events-command", envOr("STEPD_EVENTS_COMMAND", ""), "shell command run for each status change of a Standard execution, with the EventBridge event on its standard input, at least once (env STEPD_EVENTS_COMMAND)"),
		retention:   fs.String("retention", envOr("STEPD_RETENTION", "90d"), "how long finished executions and their histories are kept, e.g. 90d, 36h; 0 keeps them for good (env STEPD_RETENTION)"),
		metricsAddr: fs.String("metrics-addr", envOr("STEPD_METRICS_ADDR", ""), "HOST:PORT: serve GET /metrics on a listener of its own, unsigned even with --access-keys (the Host check still applies), and not on --addr (env STEPD_METRICS_ADDR)"),
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
	cfg.MetricsAddr = *o.metricsAddr
	return nil
}

// definitionFlags are serve's --definition files, each with the name a
// --name after it gives ("" where none does).
type definitionFlags struct {
	files, names []string
	fromEnv      int // how many of files came from STEPD_DEFINITIONS
}

func (d *definitionFlags) String() string {
	if d == nil {
		return ""
	}
	return strings.Join(d.files, ",")
}

func (d *definitionFlags) Set(s string) error {
	d.files = append(d.files, s)
	d.names = append(d.names, "")
	return nil
}

// nameFlag is serve's --name: it names the state machine of the
// --definition just before it.
type nameFlag struct{ d *definitionFlags }

func (n nameFlag) String() string { return "" }

func (n nameFlag) Set(s string) error {
	i := len(n.d.files) - 1
	switch {
	case i < n.d.fromEnv:
		return errors.New("give it after the --definition FILE whose state machine it names")
	case n.d.names[i] != "":
		return fmt.Errorf("--definition %s is already named %q", n.d.files[i], n.d.names[i])
	case s == "":
		return errors.New("want a name")
	}
	n.d.names[i] = s
	return nil
}
