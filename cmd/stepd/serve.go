package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/internal/strictjson"
	"github.com/stepd/stepd/server"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/template"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

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
	*m = append(*m, splitList(os.Getenv(name))...)
}

const serveUsage = `usage: stepd serve [flags]

Serves the AWS Step Functions API (AWS JSON 1.0, as the AWS CLI and SDKs
speak it), the EventBridge Scheduler API, the web console, /healthz,
/readyz and /metrics on one address, and keeps state machines and
executions in SQLite (--data) or PostgreSQL (--store). Every flag has an
environment variable, named in its description.
`

func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("stepd serve", serveUsage, stdout, stderr)
	c.positional("", 0, 0)
	fs := c.FlagSet
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
	memory := newMemoryFlags(fs)
	ui := fs.Bool("console", envOr("STEPD_CONSOLE", "true") != "false", "serve the web console at GET / (env STEPD_CONSOLE=false turns it off)")
	budget := addBudgetFlags(fs, true)
	var defFiles definitionFlags
	var templates multiFlag
	fs.Var(&defFiles, "definition", "FILE: create (or update) at start a state machine from this definition (JSON or YAML), named after the file (orders.asl.json: orders) or by a --name after it; repeatable (env STEPD_DEFINITIONS, comma-separated)")
	fs.Var(nameFlag{&defFiles}, "name", "NAME: the name of the state machine of the --definition just before it")
	fs.Var(&templates, "template", "FILE: create (or update) at start the state machines of this SAM or CloudFormation template; repeatable (env STEPD_TEMPLATES, comma-separated)")
	defs := addDefFlags(fs, false, stderr)
	for _, f := range splitList(os.Getenv("STEPD_DEFINITIONS")) {
		_ = defFiles.Set(f)
	}
	defFiles.fromEnv = len(defFiles.files)
	envList(&templates, "STEPD_TEMPLATES")
	envList(&defs.subs, "STEPD_DEFINITION_SUBSTITUTIONS")
	envList(&defs.params, "STEPD_PARAMETERS")
	// Operations: logs.
	logOpts := addLogFlags(fs)
	// Operations: time scale.
	timeScale := addTimeFlag(fs)
	// Operations: execution logs, events, retention.
	opsOpts := addOpsFlags(fs)
	pprofAddr := fs.String("pprof-addr", envOr("STEPD_PPROF_ADDR", ""), "HOST:PORT: serve Go's profiles (/debug/pprof/) on a listener of its own, unauthenticated: give a loopback address; empty: off (env STEPD_PPROF_ADDR)")
	if _, code, ok := c.parse(args); !ok {
		return code
	}
	log, err := logOpts.logger(stderr)
	if err != nil {
		return c.fail("%v", err)
	}
	// With --log-format json every line is JSON, the errors that end
	// serve too.
	fatal := func(code int, err error) int {
		if logOpts.json() {
			log.Error("stepd serve cannot start", "error", err.Error())
		} else {
			fmt.Fprintf(stderr, "stepd serve: %v\n", err)
		}
		return code
	}
	usageErr := func(format string, args ...any) int {
		if logOpts.json() {
			log.Error("stepd serve cannot start", "error", fmt.Sprintf(format, args...), "help", "run 'stepd serve -h' for help")
			return exitUsage
		}
		return c.fail(format, args...)
	}
	if v, ok := os.LookupEnv("STEPD_LEASE"); ok && !flagSet(fs, "lease") {
		if *lease, err = time.ParseDuration(v); err != nil {
			return fatal(exitUsage, fmt.Errorf("STEPD_LEASE: %w", err))
		}
	}
	if *lease < server.MinLease {
		return usageErr("--lease %s: want at least %s", *lease, server.MinLease)
	}
	if flagSet(fs, "lease") && *storeURL == "" {
		return usageErr("--lease only applies with --store postgres://…")
	}
	gc, err := memory.apply(fs)
	if err != nil {
		return fatal(exitUsage, err)
	}
	log.Info("memory", "collector", gc)
	cfg := server.Config{Addr: *addr, Data: *data, StoreURL: *storeURL, Lease: *lease, Region: *region, Account: *account,
		Version: versionString(), Log: log, Stdout: stdout, ConfigFile: *config, TimeScale: *timeScale, Console: *ui,
		StdoutJSON: logOpts.json(), Extensions: map[string]func(context.Context, []byte) (any, error){caseFromHistoryOp: caseFromHistory}}
	if cfg.Budget, err = budget.budget(fs); err != nil {
		return fatal(exitUsage, err)
	}
	if cfg.Registry, err = loadRegistry(*config, *conns, log); err != nil {
		return fatal(exitUsage, err)
	}
	if *mocks != "" {
		b, err := os.ReadFile(*mocks)
		if err != nil {
			return fatal(exitUsage, err)
		}
		if cfg.Mocks, err = mock.Parse(b); err != nil {
			return fatal(exitUsage, mockError(*mocks, b, err))
		}
	}
	if err := opsOpts.apply(&cfg); err != nil {
		return fatal(exitUsage, err)
	}
	cfg.AllowHosts = splitList(*allowHosts)
	if *keys != "" {
		cfg.AccessKeys = map[string]string{}
		for _, kv := range strings.Split(*keys, ",") {
			id, secret, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok || id == "" || secret == "" {
				return usageErr("--access-keys: want ACCESS_KEY_ID:SECRET, got %q", kv)
			}
			cfg.AccessKeys[id] = secret
		}
	}
	if cfg.StateMachines, err = readStateMachines(defs, defFiles.files, defFiles.names, templates, *region, *account); err != nil {
		return fatal(exitUsage, err)
	}
	if *pprofAddr != "" {
		ln, err := servePprof(*pprofAddr, log, server.Announcer{W: stdout, JSON: logOpts.json()})
		if err != nil {
			return fatal(exitUsage, err)
		}
		defer ln.Close()
	}
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		if _, ok := errors.AsType[*server.ResumeError](err); ok {
			return fatal(exitFail, err)
		}
		return fatal(exitUsage, err)
	}
	code := exitOK
	if srv.Wait(ctx) != nil {
		code = exitFail // the listener failed
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return code
}

// splitList splits a comma-separated flag value, leaving out empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// readStateMachines reads the state machines of the --definition files
// and --template templates, for the server to create, or update where
// they exist.
func readStateMachines(defs *defFlags, files, names, templates []string, region, account string) ([]server.StateMachine, error) {
	var loaded []*loadedDef
	for i, f := range files {
		ds, err := defs.load(f, true, region, account)
		if err != nil {
			return nil, fmt.Errorf("--definition: %w", err)
		}
		if ds[0].sm != nil {
			return nil, fmt.Errorf("--definition %s: a template: load it with --template", f)
		}
		if i < len(names) && names[i] != "" {
			ds[0].given = names[i]
		}
		loaded = append(loaded, ds...)
	}
	for _, f := range templates {
		ds, err := defs.load(f, true, region, account)
		if err != nil {
			return nil, fmt.Errorf("--template: %w", err)
		}
		if ds[0].sm == nil {
			return nil, fmt.Errorf("--template %s: a state machine definition, not a SAM or CloudFormation template: load it with --definition", f)
		}
		loaded = append(loaded, ds...)
	}
	scope := arn.Scope{Region: region, Account: account}
	var out []server.StateMachine
	for _, d := range loaded {
		if errs := d.placeholders().Errors(); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %w", d.source, unresolvedError(errs))
		}
		in := service.StateMachineInput{Name: d.name(), Definition: string(d.text), Type: "STANDARD"}
		if e := validate.CheckName("name", in.Name); e != nil {
			how := "give one with --name after --definition"
			if d.given != "" {
				how = "from --name"
			} else if d.sm != nil {
				how = "from the template"
			}
			return nil, fmt.Errorf("%s: the state machine name %q is not one AWS accepts (%s; %s)", d.source, in.Name, e.Message, how)
		}
		if d.sm != nil {
			in.Type, in.RoleARN, in.Tags = d.sm.Type, d.sm.RoleARN, d.sm.Tags
			if err := templateSettings(d.sm, &in); err != nil {
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
		}
		if in.RoleARN == "" {
			in.RoleARN = scope.Role("stepd-" + in.Name)
		}
		out = append(out, server.StateMachine{Source: d.source, Input: in})
	}
	return out, nil
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
		if err := strictjson.Decode(value.Append(nil, c.from), c.to); err != nil {
			if e, ok := err.(*strictjson.Error); ok {
				// The place is in the text re-encoded from the template: only
				// the path tells.
				e.Line, e.Column = 0, 0
				if e.Path == "" {
					e.Path = c.name
				} else {
					e.Path = c.name + "." + e.Path
				}
			}
			return fmt.Errorf("state machine %s: %w", sm.LogicalID, err)
		}
	}
	return nil
}
