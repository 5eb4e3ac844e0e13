package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/histcase"
	"github.com/stepd/stepd/value"
)

const caseUsage = `usage: stepd case from-history [HISTORY] [--definition FILE] [--endpoint URL]
                  [--execution-arn ARN] [--child FILE]... [-o CASE.json]
                  [--name NAME] [--type STANDARD|EXPRESS] [--embed-definition]

Turns a recorded execution history into a stepd test case: the definition
and the execution's input, inline mocks (AWS Step Functions Local's
TestCase and MockedResponses) that give each Task state its recorded
responses in order (Return, Throw with error and cause, a Delay past a
timeout), and the recorded status, output, error and cause as expected.
Run the case with stepd test; edit the definition to fix a bug and run it
again against the same responses.

HISTORY is GetExecutionHistory's output as AWS, the AWS CLI (one page or
several, appended or in an array, either order) or stepd serve return it,
or stepd run --format json's output; "-" reads standard input. Without
HISTORY, --endpoint and --execution-arn fetch it. The history must carry
its data (includeExecutionData, the default).

The definition is --definition FILE (JSON or YAML; the case refers to it
by its path relative to the case unless --embed-definition), or, with
--endpoint, fetched by DescribeStateMachineForExecution.

What cannot be replayed exactly (random values, times, a stopped
execution, a Distributed Map's children without their histories) is
listed on standard error and in the case's "notes".

Flags:
`

func caseCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "from-history" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, caseUsage)
			return exitOK
		}
		fmt.Fprint(stderr, caseUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("stepd case from-history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defFile := fs.String("definition", "", "the state machine's definition `FILE` (JSON or YAML)")
	endpoint := fs.String("endpoint", "", "a Step Functions API endpoint `URL` (stepd serve, or AWS) to fetch what is not given: the history, the definition, the Distributed Map children's histories")
	execArn := fs.String("execution-arn", "", "the execution's `ARN`: the case runs with its names; with --endpoint, the execution to fetch")
	var children multiFlag
	fs.Var(&children, "child", "a Distributed Map child execution's history `FILE`; repeatable")
	out := fs.String("o", "", "write the case to `FILE` (default: standard output)")
	name := fs.String("name", "", "the case's name")
	typ := fs.String("type", "STANDARD", "the state machine's type: STANDARD or EXPRESS")
	embed := fs.Bool("embed-definition", false, "put the definition in the case rather than refer to --definition's file")
	fs.Usage = func() {
		fmt.Fprint(stderr, caseUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "stepd case from-history: "+format+"\n", a...)
		return exitUsage
	}
	if len(pos) > 1 {
		return fail("one history at a time (got %d files); give a Distributed Map's children with --child", len(pos))
	}
	if len(pos) == 0 && (*endpoint == "" || *execArn == "") {
		return fail("give the history (a file, or - for standard input), or --endpoint and --execution-arn to fetch it")
	}
	if *defFile == "" && *endpoint == "" {
		return fail("give the definition with --definition FILE, or --endpoint and --execution-arn to fetch it (DescribeStateMachineForExecution)")
	}
	if *defFile == "" && *execArn == "" {
		return fail("--endpoint fetches the definition by the execution's ARN: give --execution-arn")
	}
	var api *sfnClient
	if *endpoint != "" {
		if api, err = newSFNClient(ctx, *endpoint); err != nil {
			return fail("--endpoint: %v", err)
		}
	}
	var h *histcase.History
	if len(pos) == 1 {
		var data []byte
		if pos[0] == "-" {
			data, err = io.ReadAll(io.LimitReader(stdin, histcase.MaxHistoryBytes+1))
		} else {
			data, err = os.ReadFile(pos[0])
		}
		if err != nil {
			return fail("%v", err)
		}
		if h, err = histcase.Read(data); err != nil {
			return fail("%s: %v", pos[0], err)
		}
	} else if h, err = api.history(ctx, *execArn); err != nil {
		return fail("fetching the history: %v", err)
	}
	o := histcase.Options{ExecutionArn: *execArn, Name: *name, Type: *typ}
	if *defFile != "" {
		data, err := os.ReadFile(*defFile)
		if err != nil {
			return fail("--definition: %v", err)
		}
		v, err := definition.Parse(*defFile, data, func(msg string) { fmt.Fprintf(stderr, "stepd case: warning: %s\n", msg) })
		if err != nil {
			return fail("--definition: %v", err)
		}
		o.Definition = v
		if !*embed {
			if o.DefinitionFile, err = relativeFrom(*out, *defFile); err != nil {
				return fail("--definition: %v", err)
			}
		}
	} else {
		text, err := api.definition(ctx, *execArn)
		if err != nil {
			return fail("fetching the definition: %v", err)
		}
		if o.Definition, err = value.ParseString(text); err != nil {
			o.Definition, o.DefinitionText = nil, text
		}
	}
	for _, c := range children {
		data, err := os.ReadFile(c)
		if err != nil {
			return fail("--child: %v", err)
		}
		ch, err := histcase.Read(data)
		if err != nil {
			return fail("--child %s: %v", c, err)
		}
		o.Children = append(o.Children, ch)
	}
	if len(children) == 0 && api != nil && *execArn != "" && mapRuns(h) {
		if o.Children, o.MissingChildren, err = api.children(ctx, *execArn); err != nil {
			return fail("fetching the Distributed Map's child executions: %v", err)
		}
	}
	res, err := histcase.Build(ctx, h, o)
	if err != nil {
		return fail("%v", err)
	}
	text := value.Indent(res.Case) + "\n"
	if *out == "" {
		fmt.Fprint(stdout, text)
	} else if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		return fail("%v", err)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if res.Reproduced {
		fmt.Fprintln(stderr, "the case reproduces the recorded outcome on stepd")
	} else {
		fmt.Fprintln(stderr, "the case does NOT reproduce the recorded outcome on stepd (see the notes)")
	}
	return exitOK
}

// relativeFrom is the path of file relative to the folder of the case
// file caseFile (the current folder when the case goes to standard
// output).
func relativeFrom(caseFile, file string) (string, error) {
	dir := "."
	if caseFile != "" {
		dir = filepath.Dir(caseFile)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	return filepath.Rel(absDir, absFile)
}

// mapRuns reports whether the execution ran a Distributed Map.
func mapRuns(h *histcase.History) bool {
	for _, e := range h.Events {
		if e.Type == "MapRunStarted" {
			return true
		}
	}
	return false
}

// caseFromHistoryOp is stepd serve's own API operation behind the
// console's "Download as test case": the console sends what it read
// through the API (the history's events, the definition and the
// execution's ARN) and gets the case back, so the operation reads nothing
// the caller could not read, and is checked like every API request.
const caseFromHistoryOp = "Stepd.CaseFromHistory"

// caseFromHistory answers Stepd.CaseFromHistory: {"history": {"events":
// [...]}, "definition": "...", "executionArn": "..."} → {"case": {...},
// "notes": [...], "reproduced": bool}.
func caseFromHistory(ctx context.Context, body []byte) (any, error) {
	v, err := value.Parse(body)
	in, _ := v.(*value.Object)
	if err != nil || in == nil {
		return nil, fmt.Errorf("%w: the request must be a JSON object with history, definition and executionArn", fault.ErrValidation)
	}
	hv, ok := in.Get("history")
	if !ok {
		return nil, fmt.Errorf("%w: history is required: GetExecutionHistory's output ({\"events\": [...]}, with its data)", fault.ErrValidation)
	}
	h, err := histcase.Read([]byte(value.String(hv)))
	if err != nil {
		return nil, fmt.Errorf("%w: history: %v", fault.ErrValidation, err)
	}
	dv, _ := in.Get("definition")
	text, ok := dv.(string)
	if !ok || text == "" {
		return nil, fmt.Errorf("%w: definition is required: the definition's text, as DescribeStateMachineForExecution gives it", fault.ErrValidation)
	}
	o := histcase.Options{DefinitionText: text}
	if d, err := value.ParseString(text); err == nil {
		o.Definition, o.DefinitionText = d, ""
	}
	if av, ok := in.Get("executionArn"); ok {
		if o.ExecutionArn, ok = av.(string); !ok {
			return nil, fmt.Errorf("%w: executionArn must be a string", fault.ErrValidation)
		}
	}
	if a, err := arn.Parse(o.ExecutionArn); err == nil {
		o.Name = a.Resource[strings.LastIndexByte(a.Resource, ':')+1:]
	}
	res, err := histcase.Build(ctx, h, o)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fault.ErrValidation, err)
	}
	notes := make([]any, len(res.Notes))
	for i, n := range res.Notes {
		notes[i] = n
	}
	out := value.ObjectOf("case", res.Case, "notes", notes, "reproduced", res.Reproduced)
	return json.RawMessage(value.String(out)), nil
}
