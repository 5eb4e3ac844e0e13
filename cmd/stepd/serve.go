package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/console"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/template"
	"github.com/stepd/stepd/value"
)

// idleRelease is how long the API stays without requests before stepd
// serve returns the memory of the last burst to the operating system.
const idleRelease = 5 * time.Second

// serveGCPercent is the garbage collector's target (GOGC) of stepd serve
// when the environment sets none: a server trades memory for CPU, since
// with Go's default of 100 a busy server spends about a quarter of its CPU
// collecting (service.BenchmarkDurable measures both).
const serveGCPercent = 400

// inProcessGCPercent is the garbage collector's target of the commands
// that run executions in process (run, test, bench) when the environment
// sets none: an execution keeps its whole history in memory, which at
// Go's default of 100 the collector marks again and again as it grows (a
// third of the CPU time of a 1000-Task chain).
const inProcessGCPercent = 400

// setGCPercent sets the collector's target to percent unless the
// environment sets GOGC.
func setGCPercent(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}

// envOr returns the environment variable's value, or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envList fills a repeatable flag from a comma-separated environment
// variable; flags given on the command line are added after it.
func envList(m *multiFlag, name string) {
	for _, v := range strings.Split(os.Getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			*m = append(*m, v)
		}
	}
}

// openStore opens the store named by url when it is set (a PostgreSQL
// URL), else the SQLite store in dir, or a memory store when dir is empty.
func openStore(ctx context.Context, url, dir string, lease time.Duration) (store.Store, error) {
	switch {
	case strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://"):
		return postgres.OpenOptions(ctx, url, postgres.Options{Lease: lease})
	case url != "":
		return nil, fmt.Errorf("--store: want a postgres:// URL, got %q", url)
	case dir == "":
		return memory.New(), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, filepath.Join(dir, "stepd.db"))
}

// storeName describes the store for the log, without a password.
func storeName(storeURL, dir string) string {
	switch {
	case storeURL != "":
		if u, err := url.Parse(storeURL); err == nil {
			if u.User != nil {
				u.User = url.User(u.User.Username())
			}
			return "PostgreSQL " + u.Redacted()
		}
		return "PostgreSQL"
	case dir == "":
		return "memory"
	}
	return "SQLite in " + dir
}

func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("STEPD_ADDR", "127.0.0.1:8083"), "address to listen on (env STEPD_ADDR)")
	data := fs.String("data", envOr("STEPD_DATA", "./stepd-data"), "directory of the durable store; empty for memory only (env STEPD_DATA)")
	storeURL := fs.String("store", envOr("STEPD_STORE", ""), "postgres://USER@HOST/DB?search_path=SCHEMA: keep state in PostgreSQL, shared by several nodes, instead of SQLite in --data (env STEPD_STORE)")
	lease := fs.Duration("lease", postgres.DefaultLease, "with --store: how long a node's lease lasts unrenewed; the executions of a node that died move to another within it and one second (env STEPD_LEASE)")
	region := fs.String("region", envOr("STEPD_REGION", arn.DefaultRegion), "region used in ARNs (env STEPD_REGION)")
	account := fs.String("account", envOr("STEPD_ACCOUNT", arn.DefaultAccount), "account id used in ARNs (env STEPD_ACCOUNT)")
	mocks := fs.String("mock-config", envOr("SFN_MOCK_CONFIG", ""), "AWS Step Functions Local mock configuration; StartExecution on ARN#TestCase uses it (env SFN_MOCK_CONFIG)")
	config := fs.String("config", envOr("STEPD_CONFIG", ""), "resource registry: JSON file mapping Lambda functions and other resources to local commands, URLs and Lambda endpoints (env STEPD_CONFIG)")
	conns := fs.String("connections", envOr("STEPD_CONNECTIONS", ""), "JSON file mapping EventBridge connection ARNs to credentials for HTTP Tasks (env STEPD_CONNECTIONS)")
	keys := fs.String("access-keys", envOr("STEPD_ACCESS_KEYS", ""), "ACCESS_KEY_ID:SECRET[,...]: require requests signed with these keys (SigV4, service states) (env STEPD_ACCESS_KEYS)")
	allowHosts := fs.String("allow-host", envOr("STEPD_ALLOW_HOSTS", ""), "HOST[,...]: without --access-keys, also answer API requests addressed to these hosts (the loopback ones always; * for any; env STEPD_ALLOW_HOSTS)")
	ui := fs.Bool("console", envOr("STEPD_CONSOLE", "true") != "false", "serve the web console at GET / (env STEPD_CONSOLE=false turns it off)")
	budget := addBudgetFlags(fs, true)
	var defFiles, templates multiFlag
	fs.Var(&defFiles, "definition", "FILE: create (or update) at start a state machine from this definition (JSON or YAML), named after the file; repeatable (env STEPD_DEFINITIONS, comma-separated)")
	fs.Var(&templates, "template", "FILE: create (or update) at start the state machines of this SAM or CloudFormation template; repeatable (env STEPD_TEMPLATES, comma-separated)")
	defs := addDefFlags(fs, false)
	envList(&defFiles, "STEPD_DEFINITIONS")
	envList(&templates, "STEPD_TEMPLATES")
	envList(&defs.subs, "STEPD_DEFINITION_SUBSTITUTIONS")
	envList(&defs.params, "STEPD_PARAMETERS")
	// Operations: logs.
	logOpts := addLogFlags(fs)
	// Operations: time scale.
	timeScale := addTimeFlag(fs)
	// Operations: execution logs, events, retention.
	opsOpts := addOpsFlags(fs)
	if _, err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	log, err := logOpts.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	if v, ok := os.LookupEnv("STEPD_LEASE"); ok && !flagSet(fs, "lease") {
		if *lease, err = time.ParseDuration(v); err != nil {
			fmt.Fprintf(stderr, "stepd serve: STEPD_LEASE: %v\n", err)
			return exitUsage
		}
	}
	if *lease < 2*claimEvery {
		fmt.Fprintf(stderr, "stepd serve: --lease %s: want at least %s\n", *lease, 2*claimEvery)
		return exitUsage
	}
	if flagSet(fs, "lease") && *storeURL == "" {
		fmt.Fprintln(stderr, "stepd serve: --lease only applies with --store postgres://…")
		return exitUsage
	}
	setGCPercent(serveGCPercent)
	b, err := budget.budget(fs)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	cfg := service.Config{Region: *region, Account: *account, Log: log, Budget: b, MockResults: awsmodel.CheckResult}
	reg, err := loadRegistry(*config, *conns, log)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	cfg.Invoker = reg
	if *mocks != "" {
		b, err := os.ReadFile(*mocks)
		if err != nil {
			fmt.Fprintf(stderr, "stepd serve: %v\n", err)
			return exitUsage
		}
		m, err := mock.Parse(b)
		if err != nil {
			fmt.Fprintf(stderr, "stepd serve: %s: %v\n", *mocks, err)
			return exitUsage
		}
		cfg.Mocks = m.Invoker
	}
	st, err := openStore(ctx, *storeURL, *data, *lease)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	defer st.Close()
	cfg.Store = st
	// Operations: time scale.
	if cfg.Clock, err = serveClock(*timeScale, *data, time.Now()); err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	if cfg.Clock != nil {
		log.Info("time runs scaled", "scale", *timeScale, "now", cfg.Clock.Now().UTC().Format(time.RFC3339Nano))
	}
	// Operations: execution logs, events, retention.
	ops, err := opsOpts.setup(&cfg, st, *config, stdout, log)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	defer ops.logs.Close()
	// Operations: metrics.
	m := metrics.New()
	observe(m, &cfg, st)
	svc := service.New(cfg)
	// A shared store (PostgreSQL) holds other nodes' executions too: this
	// node runs those it starts and those it claims from nodes that died
	// or left; a single-node store's executions are all this process's.
	ready := newReadiness(st)
	var lost <-chan struct{}
	var n int
	if sh, ok := st.(store.Shared); ok {
		lost = sh.Lost()
		claimed, err := sh.Claim(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "stepd serve: claiming executions: %v\n", err)
			return exitFail
		}
		n = svc.Runner().Adopt(ctx, claimed)
		go claimLoop(ctx, sh, svc, log)
		go func() {
			if err := svc.Runner().Receive(ctx); err != nil {
				log.Error("receiving stops and callbacks from other nodes", "err", err)
			}
		}()
	} else if n, err = svc.Runner().Resume(ctx); err != nil {
		fmt.Fprintf(stderr, "stepd serve: resuming executions: %v\n", err)
		return exitFail
	}
	ready.Resumed(n)
	if err := loadStateMachines(ctx, svc, defs, defFiles, templates, *region, *account, log); err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	ops.start(ctx, svc)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		return exitUsage
	}
	h := api.New(svc, log)
	// Operations: schedules (EventBridge Scheduler API).
	schedAPI, stopScheduler := startScheduler(ctx, st, svc, reg, cfg, h)
	defer stopScheduler()
	observeService(m, svc, h)
	go h.ReleaseWhenIdle(ctx, idleRelease)
	for _, host := range strings.Split(*allowHosts, ",") {
		if host = strings.TrimSpace(host); host != "" {
			h.AllowHosts = append(h.AllowHosts, host)
		}
	}
	auth := "none: requests are not authenticated, and API requests must be addressed to a loopback host (see --allow-host)"
	if *keys != "" {
		h.Auth = &api.Auth{Keys: map[string]string{}, Region: *region}
		for _, kv := range strings.Split(*keys, ",") {
			id, secret, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok || id == "" || secret == "" {
				fmt.Fprintf(stderr, "stepd serve: --access-keys: want ACCESS_KEY_ID:SECRET, got %q\n", kv)
				return exitUsage
			}
			h.Auth.Keys[id] = secret
		}
		auth = fmt.Sprintf("SigV4 with %d access key(s)", len(h.Auth.Keys))
	}
	var handler http.Handler = h
	if *ui {
		handler = withConsole(h, console.Handler())
	}
	handler = api.WithScheduler(handler, schedAPI)
	handler = withOps(handler, m, ready)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() && *keys == "" {
		log.Warn("the API is open to the network without authentication; set --access-keys", "addr", ln.Addr().String())
	}
	log.Info("stepd serving the AWS Step Functions API", "version", versionString(),
		"addr", ln.Addr().String(), "auth", auth, "store", storeName(*storeURL, *data), "region", *region, "account", *account, "resumed", n)
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	if *ui {
		fmt.Fprintf(stdout, "web console at http://%s/\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	code := exitOK
	select {
	case <-ctx.Done():
	case err := <-errc:
		log.Error("server stopped", "err", err)
	case <-lost:
		// Another node has claimed this node's executions: it can commit
		// nothing more, so it stops (a supervisor restarts it as a new
		// node).
		log.Error("this node lost its lease to the store; stopping")
		code = exitFail
	}
	ready.Stopping()
	svc.Runner().EndPolls() // the long polls would hold the shutdown (and the drain) up
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	svc.Close()
	if lost != nil {
		log.Info("stopped; the other nodes take this node's running executions over")
	} else {
		log.Info("stopped; running executions resume on the next start")
	}
	return code
}

// loadStateMachines creates the state machines of the --definition files
// and --template templates, or updates those that exist with another
// definition or role, so a restart picks up edited files.
func loadStateMachines(ctx context.Context, svc *service.Service, defs *defFlags, files, templates []string, region, account string, log *slog.Logger) error {
	var loaded []*loadedDef
	for _, f := range files {
		ds, err := defs.load(f, true, region, account)
		if err != nil {
			return fmt.Errorf("--definition: %w", err)
		}
		if ds[0].sm != nil {
			return fmt.Errorf("--definition %s: a template: load it with --template", f)
		}
		loaded = append(loaded, ds...)
	}
	for _, f := range templates {
		ds, err := defs.load(f, true, region, account)
		if err != nil {
			return fmt.Errorf("--template: %w", err)
		}
		if ds[0].sm == nil {
			return fmt.Errorf("--template %s: a state machine definition, not a SAM or CloudFormation template: load it with --definition", f)
		}
		loaded = append(loaded, ds...)
	}
	scope := arn.Scope{Region: region, Account: account}
	for _, d := range loaded {
		if errs := d.placeholders().Errors(); len(errs) > 0 {
			return fmt.Errorf("%s: %w", d.source, unresolvedError(errs))
		}
		in := service.StateMachineInput{Name: d.name(), Definition: string(d.text), Type: "STANDARD"}
		if d.sm != nil {
			in.Type, in.RoleARN, in.Tags = d.sm.Type, d.sm.RoleARN, d.sm.Tags
			if err := templateSettings(d.sm, &in); err != nil {
				return fmt.Errorf("%s: %w", d.source, err)
			}
		}
		if in.RoleARN == "" {
			in.RoleARN = scope.Role("stepd-" + in.Name)
		}
		sm, _, err := svc.CreateStateMachine(ctx, in)
		if errors.Is(err, fault.ErrStateMachineExists) {
			old, gerr := svc.GetStateMachine(ctx, scope.StateMachine(in.Name))
			if gerr != nil {
				return fmt.Errorf("%s: %w", d.source, coded(gerr))
			}
			if old.Type != in.Type {
				return fmt.Errorf("%s: the state machine %s exists with type %s, and a type cannot change: delete it first", d.source, in.Name, old.Type)
			}
			up := service.UpdateInput{ARN: old.ARN, Definition: in.Definition, RoleARN: in.RoleARN, Logging: in.Logging, Tracing: in.Tracing, Encryption: in.Encryption}
			if up.Logging == nil {
				up.Logging = &service.LoggingConfiguration{Level: "OFF"}
			}
			if up.Tracing == nil {
				up.Tracing = &service.Tracing{}
			}
			if sm, _, err = svc.UpdateStateMachine(ctx, up); err == nil {
				log.Info("updated a state machine from its file", "file", d.source, "arn", sm.ARN)
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.source, coded(err))
		}
		log.Info("loaded a state machine", "file", d.source, "arn", sm.ARN, "type", sm.Type)
	}
	return nil
}

// coded puts the AWS error code of a service error before its message, as
// stepd's commands show it ("InvalidDefinition: Invalid State Machine
// Definition: ..."); other errors are left as they are.
func coded(err error) error {
	if code, _, ok := api.AWSError(err); ok {
		return fmt.Errorf("%s: %w", code, err)
	}
	return err
}

// claimEvery is how often a node of a shared store claims the executions
// of nodes that died or left (a fifth of the store's default lease).
const claimEvery = time.Second

// claimLoop claims and adopts executions of nodes that died or left, until
// ctx ends or the node loses its lease.
func claimLoop(ctx context.Context, sh store.Shared, svc *service.Service, log *slog.Logger) {
	tick := time.NewTicker(claimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.Lost():
			return
		case <-tick.C:
		}
		claimed, err := sh.Claim(ctx)
		if err != nil {
			log.Warn("claiming executions", "err", err)
			continue
		}
		if len(claimed) > 0 {
			log.Info("claimed the executions of nodes that died or left", "claimed", len(claimed), "running", svc.Runner().Adopt(ctx, claimed))
		}
	}
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

// templateSettings gives in a template's loggingConfiguration,
// tracingConfiguration and encryptionConfiguration (already in the API's
// shape), checked as the API checks them: a member stepd does not know is
// an error naming it.
func templateSettings(sm *template.StateMachine, in *service.StateMachineInput) error {
	for _, c := range []struct {
		name string
		from *value.Object
		to   any
	}{
		{"LoggingConfiguration", sm.Logging, &in.Logging},
		{"TracingConfiguration", sm.Tracing, &in.Tracing},
		{"EncryptionConfiguration", sm.Encryption, &in.Encryption},
	} {
		if c.from == nil {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(value.Append(nil, c.from)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c.to); err != nil {
			return fmt.Errorf("state machine %s: %s: %w", sm.LogicalID, c.name, err)
		}
	}
	return nil
}
