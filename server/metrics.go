package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
)

// observe hooks the metrics into the service's configuration, the store
// (the SQLite store's group commits) and the API handler.
func observe(m *metrics.Metrics, cfg *service.Config, st store.Store, work *atomic.Int64) {
	cfg.Observer = counted{m, work}
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
	m.Gauge("executions_dormant", "Executions that wait for their next timer with no driver in memory (asleep, or resumed after a restart), rebuilt when it is due.", func() float64 {
		_, d := svc.Runner().Counts()
		return float64(d)
	})
}

// withEndpoints serves the operations endpoints (GET /metrics, unless
// metricsHere is false, /healthz and /readyz) before next, behind the
// API's Host check (and, for /metrics with access keys, its signature).
func withEndpoints(next http.Handler, m *metrics.Metrics, ready *readiness, h *api.Handler, metricsHere bool) http.Handler {
	mux := http.NewServeMux()
	if metricsHere {
		mux.Handle("GET /metrics", h.GuardMetrics(m.Handler()))
	} else {
		mux.Handle("GET /metrics", h.GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "this server serves /metrics on the listener of --metrics-addr", http.StatusNotFound)
		})))
	}
	mux.Handle("GET /healthz", h.GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]any{"status": "ok"})
	})))
	mux.Handle("GET /readyz", h.GuardHost(ready))
	mux.Handle("/", next)
	return mux
}

// listenMetrics serves GET /metrics alone on a listener of its own at
// addr, behind the Host check only: a scraper that cannot sign (Prometheus)
// reaches it there while the API requires signatures.
func (s *Server) listenMetrics(addr string, m *metrics.Metrics, h *api.Handler, say Announcer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	s.metricsLn = ln
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h.GuardHost(m.Handler()))
	s.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	say.Say("metrics at", fmt.Sprintf("http://%s/metrics", ln.Addr()))
	go func() {
		if err := s.metricsHTTP.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case s.errc <- fmt.Errorf("the metrics listener: %w", err):
			default:
			}
		}
	}()
	return nil
}

// MetricsAddr is the address of the listener of Config.MetricsAddr; nil
// without one.
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsLn == nil {
		return nil
	}
	return s.metricsLn.Addr()
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
	// rejoining: the node lost its lease to a shared store and is taking
	// a new one.
	rejoining atomic.Bool
}

// Rejoining marks the node as taking a new lease (not ready), or done.
func (r *readiness) Rejoining(on bool) { r.rejoining.Store(on) }

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
	if !r.ready.Load() || r.rejoining.Load() {
		body["status"] = "not ready"
		switch {
		case r.resumed.Load() < 0:
			body["reason"] = "resuming the open executions"
		case !r.ready.Load():
			body["reason"] = "stopping"
		default:
			body["reason"] = "this node lost its lease to the store and is taking a new one"
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

// counted is the metrics' observer, counting in work the executions
// started and the steps committed: the work the server's release of idle
// memory waits to stand still (api.Handler.Work).
type counted struct {
	*metrics.Metrics
	work *atomic.Int64
}

func (c counted) Started(e *store.Execution, first *store.Step) {
	c.work.Add(1)
	c.Metrics.Started(e, first)
}

func (c counted) Committed(s *store.Step, took time.Duration, err error) {
	c.work.Add(1)
	c.Metrics.Committed(s, took, err)
}
