package interp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// TestNotImplementedFailsAtRunTime: a state carrying what stepd cannot run
// (asl.State.NotImplemented, a validator WARNING) fails the execution with
// States.Runtime and that message once entered, and only then: a run that
// never enters it succeeds. Catch does not catch it (States.Runtime).
func TestNotImplementedFailsAtRunTime(t *testing.T) {
	t.Parallel()
	sm, err := asl.Parse([]byte(`{"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[{"Variable":"$.go","BooleanEquals":true,"Next":"X"}],"Default":"D"},
		"D":{"Type":"Pass","Result":"skipped","End":true},
		"X":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],
			"Catch":[{"ErrorEquals":["States.ALL"],"Next":"D"}],"End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	const msg = "stepd cannot run this state yet: the field 'Frob' is not implemented"
	sm.States["X"].NotImplemented = msg
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x",
		StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	skip, _ := value.ParseString(`{"go":false}`)
	if x := engine.Run(context.Background(), p, info, skip, engine.Config{}); x.Status() != interp.Succeeded {
		t.Errorf("a run that never enters the state: %s %+v", x.Status(), x.Failure())
	}
	enter, _ := value.ParseString(`{"go":true}`)
	x := engine.Run(context.Background(), p, info, enter, engine.Config{})
	f := x.Failure()
	want := "An error occurred while executing the state 'X' (entered at the event id #4). " + msg
	if x.Status() != interp.Failed || f == nil || f.Error != "States.Runtime" || f.Cause != want {
		t.Errorf("entering it: %s %+v, want States.Runtime %q", x.Status(), f, want)
	}
}
