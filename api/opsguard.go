package api

import (
	"net/http"
	"strings"
)

// The operations endpoints beside the API (GET /metrics, /healthz, /readyz
// and the web console's files) take the same Host check as the API's
// unsigned requests, with or without access keys: a web page that
// rebinds its own domain name to the server's address would otherwise
// read them from the user's browser. With access keys, /metrics also
// needs a SigV4 signature (GuardMetrics), unless it is served on a
// listener of its own (stepd serve --metrics-addr), where only the Host
// check applies.

// GuardHost answers a request whose Host header names no host the API
// answers (a loopback name or address, any IP literal, or one of
// AllowHosts) with 403 AccessDeniedException, and passes the others to
// next. An IP literal is allowed because no DNS rebinding gives one: a
// page can only be served from that address itself. Orchestrators'
// probes, which send Host: <pod IP>:<port> (Kubernetes' httpGet), pass.
func (h *Handler) GuardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, h.AllowHosts) {
			writeError(w, hostError(r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// GuardMetrics is GuardHost for /metrics when the handler has no access
// keys; with keys, a request must be signed (SigV4, service "states" as
// the API's, or "aps", Amazon Managed Service for Prometheus's, as a
// SigV4-signing scraper or proxy signs) with one of them.
func (h *Handler) GuardMetrics(next http.Handler) http.Handler {
	if h.Auth == nil || len(h.Auth.Keys) == 0 {
		return h.GuardHost(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		service := "states"
		if strings.Contains(r.Header.Get("Authorization"), "/aps/aws4_request") {
			service = "aps"
		}
		if err := h.Auth.verifyService(r, nil, service); err != nil {
			writeError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
