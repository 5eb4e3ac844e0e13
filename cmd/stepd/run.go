package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/internal/strictjson"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/command"
	"github.com/stepd/stepd/task/httptask"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/task/registry"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// parseInterspersed parses flags that may come before or after the
// positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

const runUsage = `usage: stepd run DEFINITION [flags]

Runs one execution of a state machine and prints its output. DEFINITION is
a definition file (JSON or YAML; X.asl.json names the state machine X) or a
SAM or CloudFormation template (--state-machine picks one of its state
machines). Exit code 0 when the execution succeeded, 1 when it failed, timed
out or was aborted, 2 for bad usage or an invalid definition.
`

type runFlags struct {
	input, name, execName, typ, mockConfig, testCase, format, region, account string
	config, connections                                                       string
	realTime                                                                  bool
	commands                                                                  multiFlag
}

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCLI("stepd run", runUsage, stdout, stderr)
	fs.positional("DEFINITION", 1, 1)
	var f runFlags
	fs.StringVar(&f.input, "input", "{}", "execution input: JSON text, @FILE to read a file, or @- for standard input")
	fs.StringVar(&f.name, "name", "", "state machine name (default: the file name without extension)")
	fs.StringVar(&f.execName, "execution-name", "", "execution name (default: a UUID)")
	fs.StringVar(&f.typ, "type", "STANDARD", "workflow type: STANDARD or EXPRESS")
	fs.StringVar(&f.mockConfig, "mock-config", "", "AWS Step Functions Local mock configuration file")
	fs.StringVar(&f.testCase, "test-case", "", "test case of the mock configuration to use")
	fs.BoolVar(&f.realTime, "real-time", false, "wait for real time in Wait states, retries and timeouts")
	fs.StringVar(&f.format, "format", "text", "output format: text or json")
	fs.StringVar(&f.region, "region", arn.DefaultRegion, "region used in ARNs")
	fs.StringVar(&f.account, "account", arn.DefaultAccount, "account id used in ARNs")
	fs.StringVar(&f.config, "config", "", "resource registry: JSON file mapping Lambda functions and other resources to local commands, URLs and Lambda endpoints (see docs/integrations.md)")
	fs.StringVar(&f.connections, "connections", "", "JSON file mapping EventBridge connection ARNs to credentials for HTTP Tasks (arn:aws:states:::http:invoke)")
	fs.Var(&f.commands, "command", "RESOURCE=COMMAND: serve Task states with this Resource by running COMMAND (input JSON on stdin, result JSON on stdout); RESOURCE * matches any; repeatable")
	budget := addBudgetFlags(fs.FlagSet, false)
	defs := addDefFlags(fs.FlagSet, true, stderr)
	pos, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if f.format != "text" && f.format != "json" {
		return fs.fail("--format must be text or json, not %q", f.format)
	}
	if f.typ != "STANDARD" && f.typ != "EXPRESS" {
		return fs.fail("--type must be STANDARD or EXPRESS, not %q", f.typ)
	}
	b, err := budget.budget(fs.FlagSet)
	if err != nil {
		return fs.fail("%v", err)
	}
	defPath := pos[0]
	ds, err := defs.load(defPath, false, f.region, f.account)
	if err != nil {
		fmt.Fprintf(stderr, "stepd run: %v\n", err)
		return exitUsage
	}
	d := ds[0]
	data := d.text
	if d.sm != nil && !flagSet(fs.FlagSet, "type") {
		f.typ = d.sm.Type
	}
	if e := validate.CheckDefinitionLength("definition", string(data)); e != nil {
		fmt.Fprintf(stderr, "stepd run: %s: the definition is larger than AWS's limit of %d characters\n", d.source, validate.MaxDefinitionLength)
		return exitUsage
	}
	vr := validate.Definition(data, f.typ)
	if !vr.OK() {
		printDiagnostics(stderr, d.source, data, vr.Diagnostics.Errors())
		return exitUsage
	}
	if ph := d.placeholders(); len(ph) > 0 {
		// Placeholders left: refused in a Resource, told elsewhere.
		printDiagnostics(stderr, d.source, data, ph)
		if len(ph.Errors()) > 0 {
			return exitUsage
		}
	}
	sm := vr.Machine
	input, err := readInput(f.input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "stepd run: --input: %v\n", err)
		return exitUsage
	}
	fromFile := f.name == ""
	if fromFile {
		f.name = d.name()
	}
	if e := validate.CheckName("name", f.name); e != nil {
		if fromFile && d.sm != nil {
			fmt.Fprintf(stderr, "stepd run: %s: the state machine name %q is not one AWS accepts (%s)\n", d.source, f.name, e.Message)
		} else if fromFile {
			fmt.Fprintf(stderr, "stepd run: the state machine name %q taken from the file name is not one AWS accepts (%s); give one with --name\n", f.name, e.Message)
		} else {
			return fs.fail("--name: %s", e.Message)
		}
		return exitUsage
	}
	if f.execName != "" {
		if e := validate.CheckName("name", f.execName); e != nil {
			return fs.fail("--execution-name: %s", e.Message)
		}
	}
	reg, err := loadRegistry(f.config, f.connections, nil)
	if err != nil {
		fmt.Fprintf(stderr, "stepd run: %v\n", err)
		return exitUsage
	}
	inv, err := buildInvoker(f.mockConfig, f.name, f.testCase, f.commands, reg)
	if err != nil {
		fmt.Fprintf(stderr, "stepd run: %v\n", err)
		return exitUsage
	}
	l := &engine.Local{Region: f.region, Account: f.account, Config: engine.Config{Invoker: inv, Budget: b}}
	if f.realTime {
		l.Clock = engine.RealClock{}
	}
	if d.sm != nil && f.mockConfig == "" {
		// The template's state machines, this one included, answer
		// states:startExecution as stepd serve's do (with a mock
		// configuration, its test case answers every Task).
		all, err := defs.loadAll(defPath, f.region, f.account)
		if err != nil {
			fmt.Fprintf(stderr, "stepd run: %v\n", err)
			return exitUsage
		}
		l.Invoker = templateMachines(all, l, inv, stderr)
	}
	x, err := l.Run(ctx, sm, engine.Execution{StateMachineName: f.name, Name: f.execName, TestCase: f.testCase, Input: input, Express: f.typ == "EXPRESS"})
	if err != nil {
		printDefinitionError(stderr, d.source, err)
		return exitUsage
	}
	if f.format == "json" {
		fmt.Fprintln(stdout, value.String(resultValue(x)))
	} else if x.Status() == interp.Succeeded {
		fmt.Fprintln(stdout, value.String(x.Output()))
	} else {
		fl := x.Failure()
		fmt.Fprintf(stderr, "execution %s\n", x.Status())
		if fl != nil && fl.Error != "" {
			fmt.Fprintf(stderr, "error: %s\n", fl.Error)
		}
		if fl != nil && fl.Cause != "" {
			fmt.Fprintf(stderr, "cause: %s\n", fl.Cause)
		}
		if fl != nil && fl.Error == "Lambda.ResourceNotFoundException" && f.config == "" && f.mockConfig == "" {
			// As on AWS, a function nothing serves does not exist; say
			// how to serve it here.
			fmt.Fprintf(stderr, "hint: serve the function with --config FILE (its Functions), --mock-config FILE --test-case NAME, or --command RESOURCE=COMMAND\n")
		}
	}
	if x.Status() == interp.Succeeded {
		return exitOK
	}
	return exitFail
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// resultValue is the `--format json` object of an execution.
func resultValue(x *interp.Execution) *value.Object {
	o := value.NewObject(5)
	o.Set("status", string(x.Status()))
	if x.Status() == interp.Succeeded {
		o.Set("output", x.Output())
	} else {
		o.Set("output", nil)
	}
	// A Fail state without Error or Cause leaves them out of AWS's
	// ExecutionFailed event and DescribeExecution: null here, never "".
	o.Set("error", nil)
	o.Set("cause", nil)
	if fl := x.Failure(); fl != nil {
		if fl.Error != "" {
			o.Set("error", fl.Error)
		}
		if fl.Cause != "" {
			o.Set("cause", fl.Cause)
		}
	}
	o.Set("history", history.Values(x.History(), true))
	return o
}

func printDefinitionError(w io.Writer, path string, err error) {
	var diags asl.Diagnostics
	if errors.As(err, &diags) {
		for _, d := range diags {
			fmt.Fprintf(w, "%s:%s: %s: %s\n", path, d.Pointer, d.Code, d.Message)
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", path, err)
}

// readInput reads an execution input, JSON text of at most 256 KiB (AWS's
// limit).
func readInput(s string, stdin io.Reader) (any, error) {
	var data []byte
	var err error
	switch {
	case s == "@-":
		data, err = io.ReadAll(stdin)
	case strings.HasPrefix(s, "@"):
		data, err = os.ReadFile(s[1:])
	default:
		data = []byte(s)
	}
	if err != nil {
		return nil, err
	}
	if e := validate.CheckInputSize(string(data)); e != nil {
		return nil, errors.New(e.Message)
	}
	return value.Parse(data)
}

// loadRegistry builds the resource registry from the configuration file
// at configPath (registry.Config) and the connections file at
// connsPath (an object from connection ARN to httptask.Connection); either may
// be empty. With neither, the registry still serves HTTP Tasks.
// Command handlers log their standard error on log (nil: slog.Default()).
func loadRegistry(configPath, connsPath string, log *slog.Logger) (*registry.Invoker, error) {
	var cfg registry.Config
	if configPath != "" {
		var err error
		if cfg, err = registry.ReadConfig(configPath); err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
	}
	if connsPath != "" {
		var conns map[string]httptask.Connection
		data, err := os.ReadFile(connsPath)
		if err != nil {
			return nil, fmt.Errorf("--connections: %w", err)
		}
		if err := strictjson.DecodeFile(connsPath, data, &conns); err != nil {
			return nil, fmt.Errorf("--connections: %w", err)
		}
		if cfg.Connections == nil {
			cfg.Connections = map[string]httptask.Connection{}
		}
		for arn, c := range conns {
			cfg.Connections[arn] = c
		}
	}
	cfg.Log = log
	reg, err := registry.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", configPath, err)
	}
	return reg, nil
}

// buildInvoker combines local commands, a mock configuration and the
// resource registry. Explicit commands win; then the mocks of the test
// case; then the registry (its functions, resources and HTTP Tasks); then
// the command for "*"; then the AWS service, for AWS SDK and optimized
// integrations.
func buildInvoker(mockPath, smName, testCase string, commands []string, reg *registry.Invoker) (task.Invoker, error) {
	var fallback task.Invoker
	if mockPath != "" {
		data, err := os.ReadFile(mockPath)
		if err != nil {
			return nil, err
		}
		cfg, err := mock.Parse(data)
		if err != nil {
			return nil, mockError(mockPath, data, err)
		}
		if fallback, err = cfg.Invoker(smName, testCase); err != nil {
			return nil, fmt.Errorf("%s: %w", mockPath, err)
		}
	} else if testCase != "" {
		return nil, fmt.Errorf("--test-case needs --mock-config")
	}
	routes := map[string]task.Invoker{}
	for _, c := range commands {
		res, cmdline, ok := strings.Cut(c, "=")
		if !ok || res == "" || strings.TrimSpace(cmdline) == "" {
			return nil, fmt.Errorf("--command %q: want RESOURCE=COMMAND", c)
		}
		fields := strings.Fields(cmdline)
		routes[res] = &command.Invoker{Path: fields[0], Args: fields[1:]}
	}
	return &runInvoker{routes: routes, fallback: fallback, reg: reg}, nil
}

// mockError names the mock configuration file in err: with the line and
// column of malformed JSON, else before the member path mock.Parse gives.
func mockError(path string, data []byte, err error) error {
	if fe, ok := errors.AsType[*value.FileError](value.Locate(path, data, err)); ok {
		return fe
	}
	return fmt.Errorf("%s: %w", path, err)
}

// runInvoker is buildInvoker's: it picks the handler of each request, and
// tells the engine how that handler answers (task.HowAnswers), so that a
// mock answers on the engine's goroutine and a command on one of its own.
type runInvoker struct {
	routes   map[string]task.Invoker
	fallback task.Invoker
	reg      *registry.Invoker
}

// pick returns the handler of req, nil when there is none.
func (r *runInvoker) pick(req *task.Request) task.Invoker {
	if inv, ok := r.routes[req.Resource]; ok {
		return inv
	}
	if r.fallback != nil {
		return r.fallback
	}
	if r.reg != nil && r.reg.ServesLocally(req) {
		return r.reg
	}
	if inv, ok := r.routes["*"]; ok {
		return inv
	}
	if r.reg != nil && r.reg.Serves(req) {
		return r.reg // the AWS service
	}
	return nil
}

func (r *runInvoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	if inv := r.pick(req); inv != nil {
		return inv.Invoke(ctx, req)
	}
	return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no handler for resource %s of state %s: pass --mock-config FILE --test-case NAME, --config FILE, or --command RESOURCE=COMMAND", req.Resource, req.StateName)}
}

// Immediate reports whether req's handler answers at once (a request
// without one is answered at once, with an error).
func (r *runInvoker) Immediate(req *task.Request) bool {
	inv := r.pick(req)
	return inv == nil || task.IsImmediate(inv, req)
}

// Waits reports whether req's handler waits (task.Waiting).
func (r *runInvoker) Waits(req *task.Request) bool {
	inv := r.pick(req)
	return inv != nil && task.HowAnswers(inv, req) == task.Waits
}
