package service

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestInputRoundTrip checks that every kind of interpreter input survives
// the encoding kept in a committed step, which replay after a restart
// decodes: a task's result or failure and simulated delay, the response of
// a .waitForTaskToken call, an activity worker's name, a stop's error and
// cause.
func TestInputRoundTrip(t *testing.T) {
	out, err := value.Parse([]byte(`{"b":1.50,"a":["x\u00e9\n",null,true]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []interp.Input{
		{Kind: interp.TaskDone, ID: 7, Result: task.Result{Output: out}},
		{Kind: interp.TaskDone, ID: 8, Result: task.Result{Output: nil}},
		{Kind: interp.TaskDone, ID: 9, Result: task.Result{Output: "s", Delay: 1500 * time.Millisecond}},
		{Kind: interp.TaskDone, ID: 1 << 40, Result: task.Result{Error: "States.Timeout", Cause: "quote \" and <tag> \u2028"}},
		{Kind: interp.TimerFired, ID: 3},
		{Kind: interp.TaskSubmitted, ID: 4, Result: task.Result{Output: out}},
		{Kind: interp.TaskStarted, ID: 6, Worker: "worker-1"},
		{Kind: interp.TaskHeartbeat, ID: 5},
		{Kind: interp.Stop, Error: "Stopped", Cause: "by the user\x00"},
	} {
		b := encodeInput(&in)
		if !json.Valid(b) {
			t.Errorf("%+v: invalid JSON %s", in, b)
			continue
		}
		got, err := decodeInput(b)
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		if value.String(got.Result.Output) != value.String(in.Result.Output) {
			t.Errorf("%s: output %s, want %s", b, value.String(got.Result.Output), value.String(in.Result.Output))
		}
		got.Result.Output, in.Result.Output = nil, nil
		if !reflect.DeepEqual(got, in) {
			t.Errorf("%s: decoded %+v, want %+v", b, got, in)
		}
	}
}
