// Command stepd runs AWS Step Functions state machines locally. It holds
// the command line and the wiring of every package beneath it, one command
// per file: run (run.go: one execution, its task handlers built from
// --command, --mock-config and the --config registry), test (test.go: case
// files in the conformance format, with coverage and JUnit reports,
// junit.go), case from-history (case.go, with the API client that fetches
// histories and definitions in casefetch.go), validate (validate.go), graph (graph.go: Mermaid or SVG),
// test-state (teststate.go), bench (bench.go), version (version.go) and
// serve (serve.go: its flags, with those of the log, the time scale,
// execution logs, status-change events and retention in serveflags.go,
// read into a server.Config; package server assembles and runs the API
// server itself). The flags they share are in defs.go (definition files,
// substitutions, SAM and CloudFormation templates) and budget.go
// (evaluation budgets). The command-line contract is in docs/cli.md.
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
	"syscall"
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
  stepd test-state FILE [flags]       run one state with an input (the TestState API)
  stepd bench [WORKLOAD...] [flags]   measure the engine on the benchmark workloads (--peer: against aws-local-stepfunctions)
  stepd version                       show the version (also --version)
  stepd help                          show this help

Run "stepd COMMAND -h" for the flags of a command.
`

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
	case "test-state":
		return testStateCommand(ctx, args[1:], stdin, stdout, stderr)
	case "bench":
		setGCPercent(inProcessGCPercent)
		return benchCommand(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return versionCommand(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "stepd: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}
