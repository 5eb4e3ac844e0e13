package interp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func compile(t testing.TB, def string) *interp.Program {
	t.Helper()
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProgramShared runs one compiled program from many goroutines: a
// Program must be immutable and executions independent (run with -race).
func TestProgramShared(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"M","States":{
		"M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
			"ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x.$":"$.sum"},"Parameters":{"sum.$":"States.MathAdd($.v, $.i)"},"End":true}}},"Next":"P"},
		"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true}}}`)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			in := value.ObjectOf("items", []any{value.Int(int64(g)), value.Int(10)})
			x := engine.Run(context.Background(), p, interp.Info{Name: "x"}, in, engine.Config{})
			want := `[[{"sum":` + value.String(value.Int(int64(g))) + `},{"sum":11}]]`
			if x.Status() != interp.Succeeded || value.String(x.Output()) != want {
				t.Errorf("goroutine %d: %s %s, want %s", g, x.Status(), value.String(x.Output()), want)
			}
		}(g)
	}
	wg.Wait()
}

// TestMapConcurrency checks that MaxConcurrency bounds the tasks in flight
// and that results keep item order. It steps the interpreter itself: the
// tasks it has asked for and not yet had answered are the ones in flight,
// answered newest first.
func TestMapConcurrency(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":3,
		"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"work","End":true}}},"End":true}}}`)
	items := make([]any, 12)
	for i := range items {
		items[i] = value.Int(int64(i))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x, cmds := p.Start(interp.Info{Name: "m", StartTime: now}, items, now)
	var inFlight []interp.Command
	peak, invoked := 0, 0
	take := func(cmds []interp.Command) {
		t.Helper()
		for _, c := range cmds {
			switch c.Kind {
			case interp.Invoke:
				inFlight = append(inFlight, c)
				invoked++
			default:
				t.Fatalf("command %+v", c)
			}
		}
		if peak = max(peak, len(inFlight)); len(inFlight) > 3 {
			t.Fatalf("%d tasks in flight, want at most 3", len(inFlight))
		}
	}
	take(cmds)
	for x.Status() == interp.Running {
		if len(inFlight) == 0 {
			t.Fatal("the Map waits with no task in flight")
		}
		c := inFlight[len(inFlight)-1]
		inFlight = inFlight[:len(inFlight)-1]
		take(x.Step(now, interp.Input{Kind: interp.TaskDone, ID: c.ID, Result: task.Result{Output: c.Request.Input}}))
	}
	if x.Status() != interp.Succeeded || value.String(x.Output()) != value.String(items) {
		t.Fatalf("%s %s", x.Status(), value.String(x.Output()))
	}
	if peak != 3 || invoked != len(items) {
		t.Errorf("peak tasks in flight = %d, want 3; %d tasks, want %d", peak, invoked, len(items))
	}
}

// TestParallelFailureCancelsSiblings checks that one failing branch stops
// the others and the Parallel state fails with its error.
func TestParallelFailureCancelsSiblings(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"Slow","States":{"Slow":{"Type":"Task","Resource":"slow","End":true}}},
		{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"branch 2"}}}]}}}`)
	cancelled := make(chan struct{})
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		<-ctx.Done()
		close(cancelled)
		return task.Result{Error: "Cancelled"}
	})
	x := engine.Run(context.Background(), p, interp.Info{Name: "p"}, value.NewObject(0), engine.Config{Invoker: inv})
	if x.Status() != interp.Failed || x.Failure().Error != "Boom" {
		t.Fatalf("%s %v", x.Status(), x.Failure())
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow branch's task was not cancelled")
	}
	var aborted bool
	for _, e := range x.History() {
		if e.Type == "TaskStateAborted" {
			aborted = true
		}
	}
	if !aborted {
		t.Error("no TaskStateAborted event for the cancelled branch")
	}
}

// TestStepIgnoresStaleInputs delivers a result for an operation that no
// longer exists: the interpreter must ignore it.
func TestStepIgnoresStaleInputs(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}}`)
	now := time.Unix(0, 0)
	x, cmds := p.Start(interp.Info{Name: "w"}, value.NewObject(0), now)
	if len(cmds) != 1 || cmds[0].Kind != interp.StartTimer || !cmds[0].At.Equal(now.Add(5*time.Second)) {
		t.Fatalf("commands %+v", cmds)
	}
	if c := x.Step(now, interp.Input{Kind: interp.TaskDone, ID: 999}); len(c) != 0 || x.Status() != interp.Running {
		t.Fatalf("stale input changed the execution: %v %s", c, x.Status())
	}
	x.Step(now.Add(5*time.Second), interp.Input{Kind: interp.TimerFired, ID: cmds[0].ID})
	if x.Status() != interp.Succeeded {
		t.Fatalf("status %s", x.Status())
	}
}

// TestDeferredStart: with Info.Defer, Start records ExecutionStarted alone
// and asks to be stepped again at once; the first state runs in that step,
// with the same history a direct start gives.
func TestDeferredStart(t *testing.T) {
	p := compile(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"ok":true},"End":true}}}`)
	t0 := time.Unix(1000, 0)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:e", Defer: true}
	x, cmds := p.Start(info, value.NewObject(0), t0)
	if len(x.History()) != 1 || x.History()[0].Type != "ExecutionStarted" || x.Status() != interp.Running {
		t.Fatalf("after a deferred Start: %d events, status %s", len(x.History()), x.Status())
	}
	if len(cmds) != 1 || cmds[0].Kind != interp.StartTimer || !cmds[0].At.Equal(t0) {
		t.Fatalf("commands %+v, want one StartTimer due at once", cmds)
	}
	if pending := x.Pending(); len(pending) != 1 || pending[0].ID != cmds[0].ID {
		t.Fatalf("Pending %+v, want the start timer (re-armed after a restart)", pending)
	}
	x.Step(t0.Add(time.Millisecond), interp.Input{Kind: interp.TimerFired, ID: cmds[0].ID})
	direct, _ := p.Start(interp.Info{ExecutionARN: info.ExecutionARN}, value.NewObject(0), t0)
	if x.Status() != interp.Succeeded || len(x.History()) != len(direct.History()) {
		t.Fatalf("deferred: %s with %d events; direct: %d events", x.Status(), len(x.History()), len(direct.History()))
	}
	for i, e := range x.History() {
		d := direct.History()[i]
		if e.Type != d.Type || e.ID != d.ID || e.PreviousEventID != d.PreviousEventID {
			t.Fatalf("event %d: %s %d<-%d, direct %s %d<-%d", i, e.Type, e.ID, e.PreviousEventID, d.Type, d.ID, d.PreviousEventID)
		}
	}
}

// TestActivityStartedOncePerAttempt: an activity task handed out again
// (after a restart, dispatch is at least once) records ActivityStarted
// once per attempt.
func TestActivityStartedOncePerAttempt(t *testing.T) {
	p := compile(t, `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:w",
		"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":1}],"End":true}}}`)
	t0 := time.Unix(1000, 0)
	x, cmds := p.Start(interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:e"}, value.NewObject(0), t0)
	count := func() int {
		n := 0
		for _, e := range x.History() {
			if e.Type == "ActivityStarted" {
				n++
			}
		}
		return n
	}
	id := cmds[0].ID
	x.Step(t0, interp.Input{Kind: interp.TaskStarted, ID: id, Worker: "w1"})
	x.Step(t0, interp.Input{Kind: interp.TaskStarted, ID: id, Worker: "w2"}) // handed out again
	if n := count(); n != 1 {
		t.Fatalf("%d ActivityStarted events for one attempt", n)
	}
	cmds = x.Step(t0, interp.Input{Kind: interp.TaskDone, ID: id, Result: task.Result{Error: "E"}})
	var retry interp.Command
	for _, c := range cmds {
		if c.Kind == interp.StartTimer {
			retry = c
		}
	}
	cmds = x.Step(retry.At, interp.Input{Kind: interp.TimerFired, ID: retry.ID})
	x.Step(retry.At, interp.Input{Kind: interp.TaskStarted, ID: cmds[0].ID, Worker: "w1"})
	if n := count(); n != 2 {
		t.Fatalf("%d ActivityStarted events for two attempts", n)
	}
}

// TestJSONataStatesContext checks $states in JSONata states that read
// its context, read it whole, or read only its input.
func TestJSONataStatesContext(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"QueryLanguage":"JSONata","StartAt":"A","States":{
		"A":{"Type":"Pass","Output":{"name":"{% $states.context.State.Name %}","in":"{% $states.input.v %}"},"Next":"B"},
		"B":{"Type":"Pass","Output":"{% $keys($states) %}","Next":"C"},
		"C":{"Type":"Pass","Assign":{"k":"{% $keys($states) %}"},"Output":"{% $states.input %}","End":true}}}`)
	x := engine.Run(context.Background(), p, interp.Info{Name: "x"}, value.ObjectOf("v", value.Int(1)), engine.Config{})
	want := `["input","context"]`
	if x.Status() != interp.Succeeded || value.String(x.Output()) != want {
		t.Fatalf("%s %s, want %s", x.Status(), value.String(x.Output()), want)
	}
	h := x.History()
	var outs []string
	for _, e := range h {
		if e.Type == "PassStateExited" {
			o, _ := e.Detail("output")
			outs = append(outs, o.(string))
		}
	}
	if len(outs) != 3 || outs[0] != `{"name":"A","in":1}` {
		t.Errorf("outputs %q", outs)
	}
}

// TestRequestPattern: the request of a Task carries the integration
// pattern of its Resource (task.Request.Pattern), as first dispatched and
// as handed out again by Pending after a restart.
func TestRequestPattern(t *testing.T) {
	t.Parallel()
	for resource, want := range map[string]task.Pattern{
		"arn:aws:states:::lambda:invoke":                            task.RequestResponse,
		"arn:aws:lambda:us-east-1:123456789012:function:fn":         task.RequestResponse,
		"arn:aws:states:::aws-sdk:s3:getObject":                     task.RequestResponse,
		"local-command":                                             task.RequestResponse,
		"arn:aws:states:::ecs:runTask.sync":                         task.Sync,
		"arn:aws:states:::states:startExecution.sync:2":             task.Sync2,
		"arn:aws:states:::sqs:sendMessage.waitForTaskToken":         task.WaitForTaskToken,
		"arn:aws:states:::aws-sdk:sqs:sendMessage.waitForTaskToken": task.WaitForTaskToken,
		"arn:aws:states:us-east-1:123456789012:activity:work":       task.Activity,
		"arn:aws:states:us-east-1:123456789012:activity:work.sync":  task.Activity,
		"arn:aws:states:::ecs:runTask.sync:3":                       task.RequestResponse, // no pattern AWS knows
	} {
		p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"`+resource+`","TimeoutSeconds":60,"End":true}}}`)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		x, cmds := p.Start(interp.Info{Name: "p", StartTime: now}, value.NewObject(0), now)
		for name, cmds := range map[string][]interp.Command{"dispatched": cmds, "pending": x.Pending()} {
			var req *task.Request
			for _, c := range cmds {
				if c.Kind == interp.Invoke {
					req = c.Request
				}
			}
			switch {
			case req == nil:
				t.Errorf("%s: %s: no Invoke", resource, name)
			case req.Pattern != want:
				t.Errorf("%s: %s: Pattern %v, want %v", resource, name, req.Pattern, want)
			case (req.TaskToken != "") != (want == task.WaitForTaskToken || want == task.Activity):
				t.Errorf("%s: %s: TaskToken %q for pattern %v", resource, name, req.TaskToken, want)
			}
		}
	}
}
