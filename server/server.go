// Package server assembles stepd's API server, as stepd serve runs it: the
// store (memory, SQLite, or PostgreSQL shared by several nodes, which claim
// each other's executions), the service with its task handlers, mocks,
// clock (--time-scale) and budget, the AWS Step Functions API and the
// EventBridge Scheduler API with its firing, the web console, metrics,
// /healthz and /readyz, execution logs, status-change events and
// retention, and the listener. Config is what stepd serve's flags give
// (its errors name the flags), Start starts a server, Wait waits for a
// reason to stop and Shutdown stops it.
//
// Only cmd/stepd (stepd serve) and tests import it. As part of the command
// layer it may import any package below it, but not cmd/stepd, conformance
// or bench, nor the packages made for tests.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/console"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/task/registry"
)

// Config is what a server is started with: what stepd serve's flags give.
type Config struct {
	// Addr is the address to listen on; with port 0 the kernel picks one,
	// which Server.Addr tells.
	Addr string
	// Data is the directory of the SQLite store (stepd.db) and of a scaled
	// clock's anchor; empty: a memory store.
	Data string
	// StoreURL, a postgres:// URL, keeps the state in PostgreSQL, shared by
	// several nodes, instead of SQLite in Data.
	StoreURL string
	// Lease is how long a node's lease lasts unrenewed, with StoreURL (0:
	// postgres.DefaultLease; stepd serve refuses less than MinLease).
	Lease time.Duration
	// Region and Account are those of the ARNs (empty: the service takes
	// arn's defaults for its ARNs).
	Region, Account string
	// Version is the version the start's log line shows.
	Version string
	// Extensions are stepd's own API operations (api.Handler.Extensions),
	// which cmd/stepd supplies: "Stepd.CaseFromHistory", the console's
	// "Download as test case", is made by a package above this one.
	Extensions map[string]func(ctx context.Context, body []byte) (any, error)
	// Log receives the server's log; nil discards it.
	Log *slog.Logger
	// Stdout receives the lines that say where the server listens, and the
	// execution logs when LogGroups is empty; nil discards them.
	Stdout io.Writer
	// StdoutJSON makes the lines that say where the server listens JSON
	// log records ({"time","level","msg":"listening on","url"}), as
	// --log-format json asks, instead of text ("listening on URL").
	StdoutJSON bool
	// Budget bounds each evaluation (zero fields: the defaults).
	Budget engine.Budget
	// Registry serves Task states with the handlers of the --config and
	// --connections files; nil: none.
	Registry *registry.Invoker
	// Mocks is an AWS Step Functions Local mock configuration, which
	// StartExecution on ARN#TestCase uses.
	Mocks *mock.Config
	// ConfigFile is the --config file, whose Events are status-change
	// event targets besides Webhooks and EventsCommand.
	ConfigFile string
	// TimeScale makes time run this many times as fast as the wall
	// clock's: 1 is real time; it must be above 0.
	TimeScale float64
	// LogGroups is the directory of execution logs (one file per log
	// group); empty: Stdout.
	LogGroups string
	// Webhooks are http:// or https:// URLs that each status change of a
	// Standard execution is POSTed to, as an EventBridge event.
	Webhooks []string
	// EventsCommand is a shell command run for each status change of a
	// Standard execution, with the event on its standard input.
	EventsCommand string
	// Retention is how long finished executions are kept; 0 keeps them.
	Retention time.Duration
	// AccessKeys, when set, are the access key ids and secrets that API
	// requests must be signed with (SigV4).
	AccessKeys map[string]string
	// AllowHosts are the hosts, besides the loopback ones, that API
	// requests may be addressed to without AccessKeys (* for any).
	AllowHosts []string
	// Console serves the web console at GET /.
	Console bool
	// MetricsAddr, when set, is the address of a listener of its own for
	// GET /metrics, which then takes the Host check alone (no signature,
	// even with AccessKeys) and leaves the API's listener.
	MetricsAddr string
	// StateMachines are created at start, or updated where they exist.
	StateMachines []StateMachine
}

// MinLease is the shortest lease a shared store's node may have: two
// intervals of its claims.
const MinLease = 2 * claimEvery

// idleRelease is how long the API stays without requests before the
// server returns the memory of the last burst to the operating system.
const idleRelease = 5 * time.Second

// A ResumeError is Start's error when the store could not give the node
// its open executions (resuming them, or claiming a shared store's): the
// configuration was fine, the store failed.
type ResumeError struct {
	Op  string // what failed: "resuming executions" or "claiming executions"
	Err error
}

func (e *ResumeError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *ResumeError) Unwrap() error { return e.Err }

// A Server is a started server.
type Server struct {
	log    *slog.Logger
	cancel context.CancelFunc // ends the background work (claims, events, schedules …)
	store  store.Store
	shared bool    // the store is shared with other nodes
	member *member // this node's membership of a shared store
	svc    *service.Service
	logs   *execlog.Destination
	ready  *readiness
	ln     net.Listener
	http   *http.Server
	// metricsLn and metricsHTTP serve /metrics on Config.MetricsAddr.
	metricsLn   net.Listener
	metricsHTTP *http.Server
	errc        chan error // the listener's end
	// stopScheduler stops the schedules' firing.
	stopScheduler func()
	stopOnce      sync.Once
	stopErr       error
}

// Start starts a server: it opens the store, resumes (or claims) the open
// executions, creates the configured state machines and listens. The
// background work (claims, events, retention, schedules) runs until ctx
// ends or Shutdown.
func Start(ctx context.Context, c Config) (_ *Server, err error) {
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stdout := c.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	cfg := service.Config{Region: c.Region, Account: c.Account, Log: log, Budget: c.Budget, MockResults: awsmodel.CheckResult}
	if c.Registry != nil {
		cfg.Invoker = c.Registry
	}
	if c.Mocks != nil {
		cfg.Mocks = c.Mocks.Invoker
	}
	st, sh, err := openStore(ctx, c.StoreURL, c.Data, c.Lease)
	if err != nil {
		return nil, err
	}
	cfg.Store, cfg.Shared = st, sh
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{log: log, cancel: cancel, store: st, errc: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.abort()
		}
	}()
	// Operations: time scale.
	if cfg.Clock, err = serveClock(c.TimeScale, c.Data, time.Now()); err != nil {
		return nil, err
	}
	if cfg.Clock != nil {
		log.Info("time runs scaled", "scale", c.TimeScale, "now", cfg.Clock.Now().UTC().Format(time.RFC3339Nano))
	}
	// Operations: execution logs, events, retention.
	ev, err := setupEvents(&cfg, st, c, stdout, log)
	if err != nil {
		return nil, err
	}
	s.logs = ev.logs
	// Operations: metrics.
	m := metrics.New()
	work := &atomic.Int64{} // executions started and steps committed
	observe(m, &cfg, st, work)
	svc := service.New(cfg)
	s.svc = svc
	// A shared store (PostgreSQL) holds other nodes' executions too: this
	// node runs those it starts and those it claims from nodes that died
	// or left; a single-node store's executions are all this process's.
	s.ready = newReadiness(st)
	var n int
	if sh != nil {
		s.shared = true
		claimed, err := sh.Claim(ctx)
		if err != nil {
			return nil, &ResumeError{Op: "claiming executions", Err: err}
		}
		n = svc.Runner().Adopt(ctx, claimed)
		s.member = &member{shared: sh, svc: svc, ready: s.ready, log: log}
		go s.member.run(ctx)
		go s.member.receive(ctx)
	} else if n, err = svc.Runner().Resume(ctx); err != nil {
		return nil, &ResumeError{Op: "resuming executions", Err: err}
	}
	s.ready.Resumed(n)
	if err := loadStateMachines(ctx, svc, c.StateMachines, arn.Scope{Region: c.Region, Account: c.Account}, log); err != nil {
		return nil, err
	}
	ev.start(ctx, svc)
	if s.ln, err = net.Listen("tcp", c.Addr); err != nil {
		return nil, err
	}
	h := api.New(svc, log)
	// Operations: schedules (EventBridge Scheduler API).
	var schedAPI *api.SchedulerAPI
	schedAPI, s.stopScheduler = startScheduler(ctx, st, svc, c.Registry, cfg, h)
	observeService(m, svc, h)
	h.Work = work.Load
	if s.member != nil {
		m.Counter("lease_losses_total", "Times this node lost its lease to the shared store and took a new one.", func() float64 {
			return float64(s.member.losses.Load())
		})
	}
	go h.ReleaseWhenIdle(ctx, idleRelease)
	h.AllowHosts = append(h.AllowHosts, c.AllowHosts...)
	h.Extensions = c.Extensions
	auth := "none: requests are not authenticated, and requests must be addressed to localhost or an IP address (see --allow-host)"
	if len(c.AccessKeys) > 0 {
		h.Auth = &api.Auth{Keys: maps.Clone(c.AccessKeys), Region: c.Region}
		auth = fmt.Sprintf("SigV4 with %d access key(s)", len(h.Auth.Keys))
	}
	var handler http.Handler = h
	if c.Console {
		handler = withConsole(h, h.GuardHost(console.Handler()))
	}
	handler = api.WithScheduler(handler, schedAPI)
	handler = withEndpoints(handler, m, s.ready, h, c.MetricsAddr == "")
	if c.MetricsAddr != "" {
		if err := s.listenMetrics(c.MetricsAddr, m, h, Announcer{W: stdout, JSON: c.StdoutJSON}); err != nil {
			return nil, err
		}
	}
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	addr := s.ln.Addr().String()
	if host, _, _ := net.SplitHostPort(addr); !net.ParseIP(host).IsLoopback() && len(c.AccessKeys) == 0 {
		log.Warn("the API is open to the network without authentication; set --access-keys", "addr", addr)
	}
	log.Info("stepd serving the AWS Step Functions API", "version", c.Version,
		"addr", addr, "auth", auth, "store", storeName(c.StoreURL, c.Data), "region", c.Region, "account", c.Account, "resumed", n)
	say := Announcer{W: stdout, JSON: c.StdoutJSON}
	say.Say("listening on", "http://"+addr)
	if c.Console {
		say.Say("web console at", "http://"+addr+"/")
	}
	go func() { s.errc <- s.http.Serve(s.ln) }()
	return s, nil
}

// abort undoes a Start that failed half-way.
func (s *Server) abort() {
	s.cancel()
	if s.ln != nil {
		s.ln.Close()
	}
	if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	if s.stopScheduler != nil {
		s.stopScheduler()
	}
	if s.svc != nil {
		s.svc.Close()
	}
	if s.logs != nil {
		s.logs.Close()
	}
	s.store.Close()
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Wait waits for a reason to stop, and logs it: ctx ends (nil) or the
// listener fails (its error). A node that loses its lease to a shared
// store does not stop: it takes a new one (see member).
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.errc:
		s.log.Error("server stopped", "err", err)
		return err
	}
}

// LeaseLosses returns how many times this node lost its lease to a shared
// store (and took a new one); 0 on a store of one node.
func (s *Server) LeaseLosses() int64 {
	if s.member == nil {
		return 0
	}
	return s.member.losses.Load()
}

// Shutdown stops the server: /readyz says it is stopping, the long polls
// end, the requests in flight finish (until ctx ends), the executions stop
// (to resume on the next start, or, with a shared store, on the other
// nodes) and the store closes. It returns the error of the requests'
// wait.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.cancel()
		s.ready.Stopping()
		s.svc.Runner().EndPolls() // the long polls would hold the shutdown (and the drain) up
		s.stopErr = s.http.Shutdown(ctx)
		if s.metricsHTTP != nil {
			s.metricsHTTP.Close()
		}
		s.svc.Close()
		if s.shared {
			s.log.Info("stopped; the other nodes take this node's running executions over")
		} else {
			s.log.Info("stopped; running executions resume on the next start")
		}
		s.stopScheduler()
		s.logs.Close()
		s.store.Close()
	})
	return s.stopErr
}

// withConsole serves GET and HEAD requests (the console's static files,
// which hold no data) from ui and every other request from the API, which
// answers as before: the API takes POST only.
func withConsole(apiHandler, ui http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			ui.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
}

// Announcer writes the lines that tell where a listener is: "listening on
// http://…" as text, or as a JSON log record with msg and url.
type Announcer struct {
	W    io.Writer
	JSON bool
}

// Say writes one line: msg, then the URL.
func (a Announcer) Say(msg, url string) {
	if a.JSON {
		slog.New(slog.NewJSONHandler(a.W, nil)).Info(msg, "url", url)
		return
	}
	fmt.Fprintf(a.W, "%s %s\n", msg, url)
}
