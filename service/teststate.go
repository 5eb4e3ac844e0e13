package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestStateInput is a TestState request.
type TestStateInput struct {
	Definition      string // one state, or a whole machine when StateName is set
	StateName       string
	Input           string // JSON text; {} when empty
	Variables       string // JSON object text, optional
	InspectionLevel string // INFO (default), DEBUG or TRACE
	// Mock, when set, answers the state's task: Result (JSON text) or
	// ErrorOutput.
	Mock *TestMock
	// Invoker serves the task when there is no mock; nil uses the
	// service's.
	Invoker task.Invoker
	// Context is a JSON object whose members replace those of the Context
	// object; optional.
	Context string
	// RetryCount and MapFailures are stateConfiguration's
	// retrierRetryCount and mapIterationFailureCount.
	RetryCount, MapFailures int
	// MapFailuresSet reports that mapIterationFailureCount was given (even
	// as 0): AWS refuses it on a Map state without a mock.
	MapFailuresSet bool
	// RevealSecrets is the request's revealSecrets (HTTP Task secrets in
	// inspection data); it cannot go with a mock.
	RevealSecrets bool
	// ItemReaderData is stateConfiguration's mapItemReaderData: JSON text
	// standing for what a Map's ItemReader would read; optional.
	ItemReaderData string
}

// TestMock is TestState's mock parameter.
type TestMock struct {
	Result      *string
	Error       string
	Cause       string
	ErrorOutput bool
	// FieldValidationMode is how a Result for an AWS service integration
	// is checked against the API's output shape: STRICT (the default when
	// empty), PRESENT or NONE.
	FieldValidationMode string
}

// testStateName is the name a single tested state runs under.
const testStateName = "StateName"

// TestState runs one state with an input and returns what it did, as the
// TestState API does.
func (s *Service) TestState(ctx context.Context, in TestStateInput) (*interp.TestOutcome, error) {
	def, err := value.ParseString(in.Definition)
	if err != nil {
		return nil, fault.New(fault.ErrInvalidDefinition, "Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: %v'", err)
	}
	defObj, ok := def.(*value.Object)
	if !ok {
		return nil, fault.New(fault.ErrInvalidDefinition, "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: the definition must be a JSON object at /'")
	}
	name := in.StateName
	machine := defObj
	if name == "" {
		name = testStateName
		machine = value.ObjectOf("StartAt", name, "States", value.ObjectOf(name, defObj))
		if ql, ok := defObj.Get("QueryLanguage"); ok {
			machine.Set("QueryLanguage", ql)
		}
	}
	if in.StateName != "" {
		if states, _ := machine.Get("States"); !hasMember(states, name) {
			// A state of a Map's item processor or a Parallel branch: test
			// it within its own machine, as AWS does.
			if sub := nestedMachine(machine, name); sub != nil {
				if ql, ok := defObj.Get("QueryLanguage"); ok {
					sub.Set("QueryLanguage", ql)
				}
				machine = sub
			}
		}
	}
	if states, _ := machine.Get("States"); !hasMember(states, name) {
		return nil, fault.New(fault.ErrValidation, "State not found in definition")
	}
	if err := checkTestRequest(in, machine, name, s.cfg.MockResults); err != nil {
		return nil, err
	}
	machine = withTargets(machine)
	sm, err := asl.FromValue(machine)
	if err != nil {
		return nil, fault.New(fault.ErrInvalidDefinition, "Invalid State Machine Definition: '%v'", err)
	}
	if sm.States[name] == nil {
		return nil, fault.New(fault.ErrValidation, "State '%s' does not exist in the definition", name)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		return nil, fault.New(fault.ErrInvalidDefinition, "Invalid State Machine Definition: '%v'", err)
	}
	input, err := parseInput(in.Input)
	if err != nil {
		return nil, err
	}
	test := &interp.Test{State: name, Inspect: in.InspectionLevel == "DEBUG" || in.InspectionLevel == "TRACE"}
	if in.Variables != "" {
		v, err := value.ParseString(in.Variables)
		if err != nil {
			return nil, fault.New(fault.ErrValidation, "Invalid variables: %v", err)
		}
		test.Variables, _ = v.(*value.Object)
	}
	if in.Context != "" {
		v, err := value.ParseString(in.Context)
		if err != nil {
			return nil, fault.New(fault.ErrValidation, "Invalid context: %v", err)
		}
		test.Context, _ = v.(*value.Object)
	}
	test.RetryCount, test.MapFailures = in.RetryCount, in.MapFailures
	if in.ItemReaderData != "" {
		v, err := value.ParseString(in.ItemReaderData)
		if err != nil {
			return nil, fault.New(fault.ErrValidation, "Invalid mapItemReaderData: %v", err)
		}
		test.ItemReaderData = v
	}
	inv := in.Invoker
	if inv == nil {
		inv = s.cfg.Invoker
	}
	if m := in.Mock; m != nil {
		res := task.Result{}
		switch {
		case m.ErrorOutput:
			res = task.Result{Error: m.Error, Cause: m.Cause}
		case m.Result != nil:
			v, err := value.ParseString(*m.Result)
			if err != nil {
				return nil, fault.New(fault.ErrValidation, "Mocked result must be valid JSON")
			}
			res.Output = v
		}
		test.Mock = &res
		inv = task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result { return res })
	}
	execName := uuid.New()
	info := interp.Info{
		ExecutionARN:     s.scope().Express("TestStateStateMachine", execName, ""),
		Name:             execName,
		StateMachineARN:  s.scope().StateMachine("TestStateStateMachine"),
		StateMachineName: "TestStateStateMachine",
		RoleARN:          s.scope().Role("TestState"),
		StartTime:        s.clock.Now(),
		Region:           s.cfg.Region,
		Account:          s.cfg.Account,
		Test:             test,
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	x := engine.Run(ctx, p, info, input, engine.Config{Invoker: inv, Budget: s.cfg.Budget})
	out := x.TestOutcome()
	return &out, nil
}

// withTargets adds a terminal placeholder state for every transition
// target the machine names but does not define (a single tested state
// points at states outside it).
func withTargets(machine *value.Object) *value.Object {
	statesV, _ := machine.Get("States")
	states, ok := statesV.(*value.Object)
	if !ok {
		return machine
	}
	var missing []string
	need := func(v any) {
		if n, ok := v.(string); ok && n != "" && !states.Has(n) {
			missing = append(missing, n)
		}
	}
	for _, sv := range states.All {
		st, ok := sv.(*value.Object)
		if !ok {
			continue
		}
		for _, k := range []string{"Next", "Default"} {
			v, _ := st.Get(k)
			need(v)
		}
		for _, list := range []string{"Choices", "Catch"} {
			arr, _ := st.Get(list)
			items, _ := arr.([]any)
			for _, it := range items {
				if o, ok := it.(*value.Object); ok {
					v, _ := o.Get("Next")
					need(v)
				}
			}
		}
	}
	if len(missing) == 0 {
		return machine
	}
	ns := states.Clone()
	for _, n := range missing {
		ns.Set(n, value.ObjectOf("Type", "Succeed"))
	}
	return machine.With("States", ns)
}

func hasMember(v any, name string) bool {
	o, _ := v.(*value.Object)
	_, ok := o.Get(name)
	return ok
}

// nestedMachine finds the item processor or branch (at any depth) whose
// States hold name and returns it as a machine of its own (StartAt and
// States only), or nil.
func nestedMachine(machine *value.Object, name string) *value.Object {
	states, _ := machine.Get("States")
	so, _ := states.(*value.Object)
	for i := 0; i < so.Len(); i++ {
		_, st := so.At(i)
		sto, _ := st.(*value.Object)
		var subs []any
		for _, f := range []string{"ItemProcessor", "Iterator"} {
			if v, ok := sto.Get(f); ok {
				subs = append(subs, v)
			}
		}
		if b, ok := sto.Get("Branches"); ok {
			arr, _ := b.([]any)
			subs = append(subs, arr...)
		}
		for _, sub := range subs {
			subo, ok := sub.(*value.Object)
			if !ok {
				continue
			}
			if st, _ := subo.Get("States"); hasMember(st, name) {
				start, _ := subo.Get("StartAt")
				return value.ObjectOf("StartAt", start, "States", st)
			}
			if found := nestedMachine(subo, name); found != nil {
				return found
			}
		}
	}
	return nil
}

// checkTestRequest rejects what AWS's TestState rejects before running:
// mocks on states that take none, Map and Parallel states without one,
// mocks that cannot answer the state, and Context objects with fields the
// Context object does not have.
func checkTestRequest(in TestStateInput, machine *value.Object, name string, check MockResultCheck) error {
	states, _ := machine.Get("States")
	so, _ := states.(*value.Object)
	stV, _ := so.Get(name)
	st, _ := stV.(*value.Object)
	typV, _ := st.Get("Type")
	typ, _ := typV.(string)
	m := in.Mock
	if m != nil {
		switch m.FieldValidationMode {
		case "", "STRICT", "PRESENT", "NONE":
		default:
			return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'mock.fieldValidationMode' failed to satisfy constraint: Member must satisfy enum value set: [STRICT, PRESENT, NONE]", m.FieldValidationMode)
		}
		if m.Result != nil && m.ErrorOutput {
			return fault.New(fault.ErrValidation, "A test mock should have only one of the following fields: [result, errorOutput].")
		}
		switch typ {
		case "Pass", "Succeed", "Fail", "Wait", "Choice":
			return fault.New(fault.ErrValidation, "State type '%s' is not supported when a mock is specified", typ)
		}
		if in.RevealSecrets {
			return fault.New(fault.ErrValidation, "TestState does not support RevealSecrets when a mock is specified.")
		}
	}
	if (in.MapFailuresSet || in.MapFailures > 0) && typ == "Map" && m == nil {
		return fault.New(fault.ErrValidation, "TestState does not support MapIterationFailureCount when a mock is not specified.")
	}
	if m == nil && (typ == "Map" || typ == "Parallel") {
		return fault.New(fault.ErrInvalidDefinition, "TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]")
	}
	if m != nil && m.Result != nil {
		result, err := value.ParseString(*m.Result)
		if err != nil {
			return fault.New(fault.ErrValidation, "Mocked result must be valid JSON")
		}
		arr, isArr := result.([]any)
		switch typ {
		case "Parallel":
			branches, _ := st.Get("Branches")
			bs, _ := branches.([]any)
			if !isArr || len(arr) != len(bs) {
				return fault.New(fault.ErrValidation, "Mocked result must contain the same number of items as number of Parallel branches.")
			}
		case "Map":
			if st.Has("ResultWriter") {
				if _, isObj := result.(*value.Object); !isObj {
					return fault.New(fault.ErrValidation, "Mocked result must be a JSON object.")
				}
			} else if isArr && in.MapFailures > len(arr) {
				return fault.New(fault.ErrValidation, "Map iteration failure count must be less than or equal to the number of Map iterations")
			}
		}
	}
	if in.Context != "" {
		if err := checkTestContext(in.Context); err != nil {
			return err
		}
	}
	if m != nil && m.Result != nil && typ == "Task" {
		res, _ := st.Get("Resource")
		resource, _ := res.(string)
		if err := checkMockResult(check, resource, *m.Result, m.FieldValidationMode); err != nil {
			return err
		}
	}
	return nil
}

// MockResultCheck checks result (a value of package value), mocked in
// TestState for a Task state that calls resource, against the output
// shape of the AWS API it calls, in the field validation mode given
// (STRICT, PRESENT or NONE; empty is STRICT). It returns nil when the
// result conforms, when the mode is NONE and when it knows no shape for
// the resource; a MockMismatch for a result that does not conform; any
// other error when it cannot check. task/awsmodel's CheckResult is one.
type MockResultCheck func(resource, mode string, result any) error

// MockMismatch is what a MockResultCheck returns for a result that does
// not conform: Member names the first member that does not ("" for the
// result itself), and Error says what is wrong with it, as AWS words it.
type MockMismatch interface {
	error
	Member() string
}

// checkMockResult checks a mocked Task result with check, as AWS does in
// the mode given (which has been checked already); without check every
// result passes.
func checkMockResult(check MockResultCheck, resource, result, mode string) error {
	if check == nil {
		return nil
	}
	v, err := value.ParseString(result)
	if err != nil {
		return fault.New(fault.ErrValidation, "Mocked result must be valid JSON")
	}
	var mm MockMismatch
	switch err := check(resource, mode, v); {
	case errors.As(err, &mm) && mm.Member() == "":
		return fault.New(fault.ErrValidation, "Mocked result must be a JSON object.")
	case errors.As(err, &mm):
		return fault.New(fault.ErrValidation, "Mock result schema validation error: %v", err)
	case err != nil:
		return fmt.Errorf("checking the mocked result: %w", err)
	}
	return nil
}

// contextFields are the members a TestState Context object may give, and
// whether each is a string (the others are any JSON value or a number).
var contextFields = map[string]map[string]bool{
	"Execution":    {"Id": true, "Input": false, "Name": true, "RoleArn": true, "StartTime": true, "RedriveCount": false, "RedriveTime": true},
	"State":        {"EnteredTime": true, "Name": true, "RetryCount": false},
	"StateMachine": {"Id": true, "Name": true},
	"Task":         {"Token": true},
}

func checkTestContext(text string) error {
	v, err := value.ParseString(text)
	if err != nil {
		return fault.New(fault.ErrValidation, "Invalid Context object provided: %v", err)
	}
	o, ok := v.(*value.Object)
	if !ok {
		return fault.New(fault.ErrValidation, "Invalid Context object provided: the Context object must be a JSON object")
	}
	for i := 0; i < o.Len(); i++ {
		k, member := o.At(i)
		if k == "Map" {
			return fault.New(fault.ErrValidation, "Invalid Context object provided: 'Map' field is not supported when mocking a Context object")
		}
		fields, known := contextFields[k]
		if !known {
			return fault.New(fault.ErrValidation, "Invalid Context object provided: Field '%s' is not allowed", k)
		}
		mo, isObj := member.(*value.Object)
		if !isObj {
			return fault.New(fault.ErrValidation, "Invalid Context object provided: %s must be an object", k)
		}
		for j := 0; j < mo.Len(); j++ {
			f, fv := mo.At(j)
			isString, known := fields[f]
			if !known {
				return fault.New(fault.ErrValidation, "Invalid Context object provided: Field '%s' is not allowed", f)
			}
			if _, ok := fv.(string); isString && !ok {
				return fault.New(fault.ErrValidation, "Invalid Context object provided: %s.%s must be a string", k, f)
			}
		}
	}
	return nil
}
