package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/stepd/stepd/server"
)

// servePprof serves Go's profiles (net/http/pprof: /debug/pprof/, its
// profile, heap, goroutine, trace and the rest) on a listener of its own
// at addr, for stepd serve's --pprof-addr. The listener is opt-in and
// unauthenticated: give it a loopback address. It returns the listener,
// which the caller closes.
func servePprof(addr string, log *slog.Logger, say server.Announcer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	say.Say("pprof on", fmt.Sprintf("http://%s/debug/pprof/", ln.Addr()))
	go func() {
		if err := http.Serve(ln, mux); err != nil && !errors.Is(err, net.ErrClosed) {
			log.Warn("pprof listener", "err", err)
		}
	}()
	return ln, nil
}
