package service

import (
	"context"
	"fmt"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
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
}

// testStateName is the name a single tested state runs under.
const testStateName = "StateName"

// TestState runs one state with an input and returns what it did, as the
// TestState API does.
func (s *Service) TestState(ctx context.Context, in TestStateInput) (*interp.TestOutcome, error) {
	def, err := value.ParseString(in.Definition)
	if err != nil {
		return nil, errorf("InvalidDefinition", "Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: %v'", err)
	}
	defObj, ok := def.(*value.Object)
	if !ok {
		return nil, errorf("InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: the definition must be a JSON object at /'")
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
	machine = withTargets(machine)
	sm, err := asl.FromValue(machine)
	if err != nil {
		return nil, errorf("InvalidDefinition", "Invalid State Machine Definition: '%v'", err)
	}
	if sm.States[name] == nil {
		return nil, errorf("ValidationException", "State '%s' does not exist in the definition", name)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		return nil, errorf("InvalidDefinition", "Invalid State Machine Definition: '%v'", err)
	}
	input, err := parseInput(in.Input)
	if err != nil {
		return nil, err
	}
	test := &interp.Test{State: name, Inspect: in.InspectionLevel == "DEBUG" || in.InspectionLevel == "TRACE"}
	if in.Variables != "" {
		v, err := value.ParseString(in.Variables)
		if err != nil {
			return nil, errorf("ValidationException", "Invalid variables: %v", err)
		}
		test.Variables, _ = v.(*value.Object)
	}
	if in.Context != "" {
		v, err := value.ParseString(in.Context)
		if err != nil {
			return nil, errorf("ValidationException", "Invalid context: %v", err)
		}
		test.Context, _ = v.(*value.Object)
	}
	test.RetryCount, test.MapFailures = in.RetryCount, in.MapFailures
	if in.ItemReaderData != "" {
		v, err := value.ParseString(in.ItemReaderData)
		if err != nil {
			return nil, errorf("ValidationException", "Invalid mapItemReaderData: %v", err)
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
				return nil, errorf("ValidationException", "the mock result is not valid JSON: %v", err)
			}
			res.Output = v
		}
		test.Mock = &res
		inv = task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result { return res })
	}
	execName := newID()
	info := interp.Info{
		ExecutionArn:     fmt.Sprintf("arn:aws:states:%s:%s:express:%s:%s", s.cfg.Region, s.cfg.Account, "TestStateStateMachine", execName),
		Name:             execName,
		StateMachineArn:  s.stateMachineARN("TestStateStateMachine"),
		StateMachineName: "TestStateStateMachine",
		RoleArn:          fmt.Sprintf("arn:aws:iam::%s:role/TestState", s.cfg.Account),
		StartTime:        s.clock.Now(),
		Region:           s.cfg.Region,
		Account:          s.cfg.Account,
		Test:             test,
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	x := engine.Run(ctx, p, info, input, engine.Options{Invoker: inv})
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

// TestStateRequestFrom builds a TestState input from the request's
// parameters as a JSON object (definition, input, variables and context
// may be JSON values or JSON text; mock, stateName, inspectionLevel and
// stateConfiguration as the API names them).
func TestStateRequestFrom(req *value.Object) TestStateInput {
	str := func(k string) string {
		v, _ := req.Get(k)
		s, _ := v.(string)
		return s
	}
	text := func(k string) string {
		v, ok := req.Get(k)
		if !ok || v == nil {
			return ""
		}
		if s, isStr := v.(string); isStr {
			return s
		}
		return value.String(v)
	}
	in := TestStateInput{InspectionLevel: str("inspectionLevel"), StateName: str("stateName"),
		Definition: text("definition"), Input: text("input"), Variables: text("variables"), Context: text("context")}
	if t := str("definitionText"); t != "" {
		in.Definition = t
	}
	if m, ok := req.Get("mock"); ok && m != nil {
		mo, _ := m.(*value.Object)
		tm := &TestMock{}
		if res, ok := mo.Get("result"); ok {
			s, _ := res.(string)
			tm.Result = &s
		}
		if eo, ok := mo.Get("errorOutput"); ok {
			e, _ := eo.(*value.Object)
			errName, _ := e.Get("error")
			cause, _ := e.Get("cause")
			tm.ErrorOutput = true
			tm.Error, _ = errName.(string)
			tm.Cause, _ = cause.(string)
		}
		in.Mock = tm
	}
	if sc, ok := req.Get("stateConfiguration"); ok {
		so, _ := sc.(*value.Object)
		count := func(k string) int {
			n, _ := so.Get(k)
			f, _ := n.(value.Number)
			return int(f.Float64())
		}
		in.RetryCount, in.MapFailures = count("retrierRetryCount"), count("mapIterationFailureCount")
		if d, ok := so.Get("mapItemReaderData"); ok {
			in.ItemReaderData, _ = d.(string)
		}
	}
	return in
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
