package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

func testStateCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd test-state", flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", "", "name of the state to test when the file holds a whole state machine")
	input := fs.String("input", "{}", "state input: JSON text, @FILE or @-")
	variables := fs.String("variables", "", "workflow variables in scope: a JSON object")
	contextObj := fs.String("context", "", "the Context object ($$) the state sees: a JSON object")
	level := fs.String("inspection-level", "DEBUG", "INFO, DEBUG or TRACE")
	mockResult := fs.String("mock-result", "", "answer the state's task (or the whole Parallel/Map) with this JSON result")
	mockError := fs.String("mock-error", "", "fail the state's task with this error name")
	mockCause := fs.String("mock-cause", "", "the cause of --mock-error")
	mockMode := fs.String("mock-validation", "", "how --mock-result is checked against the service API's result shape: STRICT (default), PRESENT or NONE")
	budget := addBudgetFlags(fs, false)
	defs := addDefFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd test-state DEFINITION.json|DEFINITION.yaml|TEMPLATE.yaml [--state-machine NAME] [--parameter NAME=VALUE] [--definition-substitutions FILE|NAME=VALUE] [--state NAME] [--input JSON|@FILE] [--mock-result JSON [--mock-validation STRICT|PRESENT|NONE] | --mock-error ERROR --mock-cause CAUSE] [--inspection-level INFO|DEBUG|TRACE]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	b, err := budget.budget(fs)
	if err != nil {
		fmt.Fprintf(stderr, "stepd test-state: %v\n", err)
		return exitUsage
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
