package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
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
