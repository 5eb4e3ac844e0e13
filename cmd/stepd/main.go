// Command stepd runs AWS Step Functions state machines locally. It holds
// the command line and the wiring of every package beneath it, one command
// per file: run (run.go: one execution, its task handlers built from
// --command, --mock-config and the --config registry), test (test.go: case
// files in the conformance format, with coverage and JUnit reports,
// junit.go), case from-history (case.go, with the API client that fetches
// histories and definitions in casefetch.go), validate (validate.go), graph (graph.go: Mermaid or SVG),
// test-state (teststate.go), bench (bench.go), version (version.go),
// health (health.go: is a server ready), lsp (lsp.go) and
// serve (serve.go: its flags, with those of the log, the time scale,
// execution logs, status-change events and retention in serveflags.go,
// read into a server.Config; package server assembles and runs the API
// server itself). The flags they share are in defs.go (definition files,
// substitutions, SAM and CloudFormation templates) and budget.go
// (evaluation budgets). Every command parses its flags through usage.go,
// which gives each its -h (a usage line first) and its one-line usage
// errors. The command-line contract is in docs/cli.md.
//
// As the top layer it may import any package of stepd's, but not those
// made for tests (internal/shared, internal/awstest, store/storetest,
// store/postgres/pgtest), which only its tests import; nothing imports it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/stepd/stepd/asl"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // the execution or a test failed
	exitUsage = 2 // bad usage or an invalid definition
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `stepd runs AWS Step Functions state machines.

Usage:
  stepd run DEFINITION.json [flags]   run one execution and print its output
  stepd test PATH... [flags]          run case files (the conformance format)
  stepd case from-history HISTORY     turn an execution's history into a case file with its mocks
  stepd validate FILE... [flags]      check definitions as AWS does, with positioned diagnostics
  stepd graph DEFINITION [flags]      draw a definition as a Mermaid flowchart or an SVG picture
  stepd serve [flags]                 serve the AWS Step Functions API (AWS CLI, SDKs)
  stepd health [--addr HOST:PORT]     exit 0 when a stepd serve is ready (for HEALTHCHECK)
  stepd test-state FILE [flags]       run one state with an input (the TestState API)
  stepd lsp [flags]                   serve the Language Server Protocol on stdin/stdout (editors: docs/editors.md)
  stepd bench [WORKLOAD...] [flags]   measure the engine on the benchmark workloads (--peer: against aws-local-stepfunctions)
  stepd version                       show the version (also --version)
  stepd help [COMMAND]                show this help, or a command's

Run "stepd COMMAND -h" for the flags of a command.
`

// commands are stepd's commands, for did-you-mean and help.
var commands = []string{"run", "test", "case", "validate", "graph", "serve", "health", "test-state", "lsp", "bench", "version", "help"}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "stepd: missing COMMAND, one of %s\nrun 'stepd help' for the commands\n", strings.Join(commands, ", "))
		return exitUsage
	}
	switch args[0] {
	case "run":
		setGCPercent(inProcessGCPercent)
		return runCommand(ctx, args[1:], stdin, stdout, stderr)
	case "test":
		setGCPercent(inProcessGCPercent)
		return testCommand(ctx, args[1:], stdout, stderr)
	case "case":
		setGCPercent(inProcessGCPercent)
		return caseCommand(ctx, args[1:], stdin, stdout, stderr)
	case "validate":
		return validateCommand(args[1:], stdout, stderr)
	case "graph":
		return graphCommand(args[1:], stdin, stdout, stderr)
	case "serve":
		return serveCommand(ctx, args[1:], stdout, stderr)
	case "health":
		return healthCommand(ctx, args[1:], stdout, stderr)
	case "test-state":
		return testStateCommand(ctx, args[1:], stdin, stdout, stderr)
	case "lsp":
		return lspCommand(ctx, args[1:], stdin, stdout, stderr)
	case "bench":
		setGCPercent(inProcessGCPercent)
		return benchCommand(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return versionCommand(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		return helpCommand(ctx, args[1:], stdin, stdout, stderr)
	}
	msg := fmt.Sprintf("stepd: unknown command %q", args[0])
	if strings.HasPrefix(args[0], "-") {
		msg = fmt.Sprintf("stepd: a command comes first, not the flag %s", args[0])
	} else if near := asl.Nearest(args[0], slices.Values(commands)); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	fmt.Fprintf(stderr, "%s\nrun 'stepd help' for the commands\n", msg)
	return exitUsage
}

// helpCommand prints the commands (stepd help), or one command's help
// (stepd help run, as stepd run -h).
func helpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
		return exitOK
	case len(args) > 1 || !slices.Contains(commands, args[0]) || args[0] == "help":
		fmt.Fprintf(stderr, "stepd help: want one command of %s, got %q\nrun 'stepd help' for the commands\n", strings.Join(commands[:len(commands)-1], ", "), strings.Join(args, " "))
		return exitUsage
	}
	return Main(ctx, []string{args[0], "-h"}, stdin, stdout, stderr)
}
