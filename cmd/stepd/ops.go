package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/engine"
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
		r, _ := svc.Runner().Counts()
		return float64(r)
	})
	m.Gauge("timers_pending", "Timers (Waits, retry intervals, task timeouts and heartbeats) queued by the running executions.", func() float64 {
		return float64(svc.Runner().PendingTimers())
	})
	m.Gauge("executions_dormant", "Executions resumed after a restart that wait, not yet rebuilt, for their next timer.", func() float64 {
		_, d := svc.Runner().Counts()
		return float64(d)
	})
}

// withOps serves the operations endpoints (GET /metrics, /healthz and
// /readyz) before next.
func withOps(next http.Handler, m *metrics.Metrics, ready *readiness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.Handle("GET /readyz", ready)
	mux.Handle("/", next)
	return mux
}

// readyTimeout bounds the store check of /readyz.
const readyTimeout = 2 * time.Second

// readiness answers /readyz: 200 once the open executions are resumed,
// while the store answers a read and until the server begins to stop;
// 503 otherwise, with the reason.
type readiness struct {
	store   store.Store
	resumed atomic.Int64 // executions resumed at start, -1 until done
	ready   atomic.Bool  // resumed and not stopping
}

func newReadiness(st store.Store) *readiness {
	r := &readiness{store: st}
	r.resumed.Store(-1)
	return r
}

// Resumed marks the open executions resumed (n of them): ready.
func (r *readiness) Resumed(n int) {
	r.resumed.Store(int64(n))
	r.ready.Store(true)
}

// Stopping marks the server stopping: not ready any more.
func (r *readiness) Stopping() { r.ready.Store(false) }

func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body := map[string]any{"status": "ok", "resumed": r.resumed.Load()}
	if !r.ready.Load() {
		body["status"] = "not ready"
		if r.resumed.Load() < 0 {
			body["reason"] = "resuming the open executions"
		} else {
			body["reason"] = "stopping"
		}
		writeHealth(w, http.StatusServiceUnavailable, body)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
	defer cancel()
	if _, _, err := r.store.ListStateMachines(ctx, store.Page{Limit: 1}); err != nil {
		body["status"] = "not ready"
		body["reason"] = fmt.Sprintf("the store does not answer: %v", err)
		writeHealth(w, http.StatusServiceUnavailable, body)
		return
	}
	body["store"] = "ok"
	writeHealth(w, http.StatusOK, body)
}

func writeHealth(w http.ResponseWriter, code int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
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

// clockFile keeps a scaled clock's anchor in the data directory, so that
// the time of its executions stays consistent across restarts.
const clockFile = "clock.json"

// clockAnchor is what clockFile holds.
type clockAnchor struct {
	Scale    float64   `json:"scale"`
	Real0    time.Time `json:"real0"`
	Virtual0 time.Time `json:"virtual0"`
}

// serveClock returns the clock of stepd serve for the time scale: nil (the
// wall clock) at scale 1, else an engine.ScaledClock. With a data
// directory its anchor is kept there: a restart at the same scale goes on
// with the same time function (timers due while the server was down fire
// at once), and a change of scale re-anchors at the time reached, so the
// histories' times never go back. Back at scale 1, the clock returns to the
// wall clock once the wall clock has caught up with it.
func serveClock(scale float64, dir string, now time.Time) (engine.Clock, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return nil, fmt.Errorf("--time-scale (or STEPD_TIME_SCALE, WAIT_TIME_SCALE): want a number above 0, such as 0.01")
	}
	path := ""
	var old *clockAnchor
	if dir != "" {
		path = filepath.Join(dir, clockFile)
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			old = &clockAnchor{}
			if err := json.Unmarshal(b, old); err != nil || old.Scale <= 0 {
				return nil, fmt.Errorf("%s: not a clock anchor (%v); delete it to restart the clock at the wall clock's time", path, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	a := clockAnchor{Scale: scale, Real0: now, Virtual0: now}
	if old != nil {
		if old.Scale == scale {
			a = *old
		} else {
			reached := (&engine.ScaledClock{Scale: old.Scale, Real0: old.Real0, Virtual0: old.Virtual0}).At(now)
			if reached.After(now) {
				a.Virtual0 = reached
			}
		}
	}
	if scale == 1 && !a.Virtual0.After(a.Real0) {
		if old != nil {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	if path != "" && (old == nil || *old != a) {
		b, _ := json.Marshal(a)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
	}
	return &engine.ScaledClock{Scale: a.Scale, Real0: a.Real0, Virtual0: a.Virtual0}, nil
}
