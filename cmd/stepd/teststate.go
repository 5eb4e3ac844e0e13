package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

const testStateUsage = `usage: stepd test-state DEFINITION [--state NAME] [--input JSON|@FILE] [flags]

Runs one state with an input, as the TestState API does, and prints its
status, output or error, next state and inspection data. DEFINITION holds a
state, or a whole state machine (JSON, YAML, or a SAM or CloudFormation
template) whose state --state names.
`

func testStateCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCLI("stepd test-state", testStateUsage, stdout, stderr)
	fs.positional("DEFINITION", 1, 1)
	state := fs.String("state", "", "name of the state to test when the file holds a whole state machine")
	input := fs.String("input", "{}", "state input: JSON text, @FILE or @-")
	variables := fs.String("variables", "", "workflow variables in scope: a JSON object")
	contextObj := fs.String("context", "", "the Context object ($$) the state sees: a JSON object")
	level := fs.String("inspection-level", "DEBUG", "INFO, DEBUG or TRACE")
	mockResult := fs.String("mock-result", "", "answer the state's task (or the whole Parallel/Map) with this JSON result")
	mockError := fs.String("mock-error", "", "fail the state's task with this error name")
	mockCause := fs.String("mock-cause", "", "the cause of --mock-error")
	mockMode := fs.String("mock-validation", "", "how --mock-result is checked against the service API's result shape: STRICT (default), PRESENT or NONE")
	budget := addBudgetFlags(fs.FlagSet, false)
	defs := addDefFlags(fs.FlagSet, true, stderr)
	pos, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	b, err := budget.budget(fs.FlagSet)
	if err != nil {
		return fs.fail("%v", err)
	}
	ds, err := defs.load(pos[0], false, arn.DefaultRegion, arn.DefaultAccount)
	if err != nil {
		fmt.Fprintf(stderr, "stepd test-state: %v\n", err)
		return exitUsage
	}
	def := ds[0].text
	if ph := ds[0].placeholders(); len(ph) > 0 {
		printDiagnostics(stderr, ds[0].source, def, ph)
		if len(ph.Errors()) > 0 {
			return exitUsage
		}
	}
	if msg := checkStateName(def, *state); msg != "" {
		return fs.fail("%s: %s", ds[0].source, msg)
	}
	in, err := readInput(*input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "stepd test-state: --input: %v\n", err)
		return exitUsage
	}
	req := service.TestStateInput{Definition: string(def), StateName: *state, Input: value.String(in), Variables: *variables, InspectionLevel: *level, Context: *contextObj}
	switch {
	case *mockResult != "":
		req.Mock = &service.TestMock{Result: mockResult, FieldValidationMode: *mockMode}
	case *mockError != "":
		req.Mock = &service.TestMock{ErrorOutput: true, Error: *mockError, Cause: *mockCause}
	}
	svc := service.New(service.Config{Budget: b, MockResults: awsmodel.CheckResult})
	defer svc.Close()
	out, err := svc.TestState(ctx, req)
	if err != nil {
		fmt.Fprintf(stderr, "stepd test-state: %v\n", coded(err))
		return exitUsage
	}
	resp := value.NewObject(6)
	resp.Set("status", out.Status)
	if out.HasOutput {
		resp.Set("output", out.Output)
	}
	if out.Error != "" {
		resp.Set("error", out.Error)
		resp.Set("cause", out.Cause)
	}
	if out.NextState != "" {
		resp.Set("nextState", out.NextState)
	}
	if out.Inspection != nil {
		resp.Set("inspectionData", out.Inspection)
	}
	fmt.Fprintln(stdout, value.Indent(resp))
	if out.Status == "FAILED" {
		return exitFail
	}
	return exitOK
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

// checkStateName tells what is wrong with --state for the definition def:
// a state it does not have (with the nearest name and the states it has),
// or a whole state machine given without --state. "" when nothing is, or
// when def is not JSON (the service tells).
func checkStateName(def []byte, state string) string {
	v, err := value.Parse(def)
	o, isObj := v.(*value.Object)
	if err != nil || !isObj {
		return ""
	}
	names := stateNames(o, nil)
	if state == "" {
		if o.Has("States") && !o.Has("Type") {
			return fmt.Sprintf("a whole state machine: name the state to test with --state (its states: %s)", strings.Join(names, ", "))
		}
		return ""
	}
	if slices.Contains(names, state) || !o.Has("States") {
		return "" // a single state given with --state is the service's to refuse
	}
	msg := fmt.Sprintf("--state %q: no such state", state)
	if near := asl.Nearest(state, slices.Values(names)); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	if len(names) == 0 {
		return msg + "; it has no states"
	}
	return msg + "; its states: " + strings.Join(names, ", ")
}

// stateNames appends the names of the states of a state machine, those of
// its Parallel branches and Map item processors after each such state.
func stateNames(machine *value.Object, out []string) []string {
	sv, _ := machine.Get("States")
	states, ok := sv.(*value.Object)
	if !ok {
		return out
	}
	for name, st := range states.All {
		out = append(out, name)
		so, ok := st.(*value.Object)
		if !ok {
			continue
		}
		if bv, ok := so.Get("Branches"); ok {
			if branches, ok := bv.([]any); ok {
				for _, b := range branches {
					if bo, ok := b.(*value.Object); ok {
						out = stateNames(bo, out)
					}
				}
			}
		}
		for _, k := range []string{"ItemProcessor", "Iterator"} {
			if p, ok := so.Get(k); ok {
				if po, ok := p.(*value.Object); ok {
					out = stateNames(po, out)
				}
			}
		}
	}
	return out
}
