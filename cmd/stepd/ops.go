package main

import (
	"net/http"

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
