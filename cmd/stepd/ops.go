package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
)

// observe hooks the metrics into the service's configuration, the store
// (the SQLite store's group commits) and the API handler.
func observe(m *metrics.Metrics, cfg *service.Config, st store.Store) {
	cfg.Observer = m
	if s, ok := st.(*sqlite.Store); ok {
		s.ObserveCommits(m.Commit)
	}
}

// observeService registers the gauges that read the service and hooks
// the API handler's requests.
func observeService(m *metrics.Metrics, svc *service.Service, h *api.Handler) {
	h.Observe = m.APIRequest
	m.Gauge("executions_running", "Executions whose driver runs in this process (parked ones included).", func() float64 {
		r, _ := svc.Counts()
		return float64(r)
	})
	m.Gauge("executions_dormant", "Executions resumed after a restart that wait, not yet rebuilt, for their next timer.", func() float64 {
		_, d := svc.Counts()
		return float64(d)
	})
}

// withOps serves the operations endpoints (GET /metrics) before next.
func withOps(next http.Handler, m *metrics.Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("/", next)
	return mux
}

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
