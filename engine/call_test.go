package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// giveUp bounds how long a handler in these tests waits for what the
// engine must make happen: when the engine fails to, the handler returns
// a result the test refuses, rather than hanging.
const giveUp = 30 * time.Second

// drive runs p to its end on a driver of its own, and returns the driver.
func drive(t *testing.T, def string, cfg engine.Config, during func(d *engine.Driver)) *engine.Driver {
	t.Helper()
	p := compile(t, def)
	d := engine.New(p, cfg)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:e", Name: "e", StartTime: time.Now()}
	d.Start(info, value.NewObject(0), info.StartTime)
	ran := make(chan struct{})
	go func() { d.Run(context.Background()); close(ran) }()
	if during != nil {
		during(d)
	}
	<-ran
	select {
	case <-d.Done():
	default:
		t.Fatal("Run returned before the driver ended")
	}
	return d
}

func stateName(req *task.Request) string {
	st, _ := value.AsObject(req.ContextObject()).Get("State")
	name, _ := value.AsObject(st).Get("Name")
	s, _ := name.(string)
	return s
}

// TestCallMovesOn: a plain function handler is called on the driver's
// goroutine; when it blocks, the driver goes on without it. Branch A's
// handler returns only once branch B's has been called, which can happen
// only if the driver moved on from A; A then reads its Context object
// while the driver steps B (the race detector checks that this is safe).
func TestCallMovesOn(t *testing.T) {
	t.Parallel()
	bCalled := make(chan struct{})
	var names sync.Map
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		if req.Context != nil {
			return task.Result{Error: "Eager", Cause: "the Context object was built before the handler asked for it"}
		}
		switch req.Resource {
		case "A":
			select {
			case <-bCalled:
			case <-time.After(giveUp):
				return task.Result{Error: "Stuck", Cause: "B was never called while A waited"}
			}
		case "B":
			close(bCalled)
		}
		names.Store(req.Resource, stateName(req))
		return task.Result{Output: req.Resource}
	})
	d := drive(t, `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"TA","States":{"TA":{"Type":"Task","Resource":"A","End":true}}},
		{"StartAt":"TB","States":{"TB":{"Type":"Task","Resource":"B","End":true}}}]}}}`,
		engine.Config{Invoker: inv}, nil)
	x := d.Execution()
	if x.Status() != interp.Succeeded {
		f := x.Failure()
		t.Fatalf("status %s: %s: %s", x.Status(), f.Error, f.Cause)
	}
	if got := value.String(x.Output()); got != `["A","B"]` {
		t.Errorf("output %s", got)
	}
	if n := engine.Moves(d); n != 1 {
		t.Errorf("moved from %d calls, want 1", n)
	}
	for res, want := range map[string]string{"A": "TA", "B": "TB"} {
		if got, _ := names.Load(res); got != want {
			t.Errorf("%s's Context object names state %v, want %s", res, got, want)
		}
	}
}

// TestCallLearns: once a resource's handler has kept the driver waiting,
// its later tasks run on goroutines of their own. Four Map iterations call
// a handler that returns only once all four have been called: the first
// call is moved from, and the three others must run beside it.
func TestCallLearns(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	all := make(chan struct{})
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		mu.Lock()
		calls++
		if calls == 4 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(giveUp):
			return task.Result{Error: "Stuck", Cause: "the iterations did not run together"}
		}
		return task.Result{Output: req.Input}
	})
	p := compile(t, `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,
		"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"R","End":true}}}}}}`)
	d := engine.New(p, engine.Config{Invoker: inv})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:e2", Name: "e2", StartTime: time.Now()}
	d.Start(info, []any{value.Int(1), value.Int(2), value.Int(3), value.Int(4)}, info.StartTime)
	d.Run(context.Background())
	x := d.Execution()
	if x.Status() != interp.Succeeded {
		f := x.Failure()
		t.Fatalf("status %s: %s: %s", x.Status(), f.Error, f.Cause)
	}
	if n := engine.Moves(d); n != 1 {
		t.Errorf("moved from %d calls, want 1: the resource's later tasks must not be tried on the driver's goroutine", n)
	}
}

// TestCallTimesOut: a handler that blocks until its context ends is timed
// out by the state's TimeoutSeconds or HeartbeatSeconds, and its context
// ends with task.ErrCancelled.
func TestCallTimesOut(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"TimeoutSeconds", "HeartbeatSeconds"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			causes := make(chan error, 1)
			inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
					return task.Result{Error: "Cancelled"}
				case <-time.After(giveUp):
					causes <- nil
					return task.Result{Output: "not timed out"}
				}
			})
			d := drive(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"R","`+field+`":1,"End":true}}}`,
				engine.Config{Invoker: inv, Clock: engine.RealClock{}}, nil)
			x := d.Execution()
			if f := x.Failure(); x.Status() != interp.Failed || (f.Error != "States.Timeout" && f.Error != "States.HeartbeatTimeout") {
				t.Fatalf("status %s %+v, want FAILED with a timeout", x.Status(), f)
			}
			if err := <-causes; !errors.Is(err, task.ErrCancelled) {
				t.Errorf("the handler's context ended with %v, want task.ErrCancelled", err)
			}
		})
	}
}

// TestCallStops: StopExecution reaches an execution whose handler blocks,
// and ends the handler's context with task.ErrCancelled.
func TestCallStops(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	causes := make(chan error, 1)
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		close(started)
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
		case <-time.After(giveUp):
			causes <- nil
		}
		return task.Result{Output: "late"}
	})
	d := drive(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"R","End":true}}}`,
		engine.Config{Invoker: inv, Clock: engine.RealClock{}}, func(d *engine.Driver) {
			<-started
			d.Stop("Stopped", "by the test")
		})
	if x := d.Execution(); x.Status() != interp.Aborted {
		t.Fatalf("status %s, want ABORTED", x.Status())
	}
	if err := <-causes; !errors.Is(err, task.ErrCancelled) {
		t.Errorf("the handler's context ended with %v, want task.ErrCancelled", err)
	}
}

// TestCallAnswersOwnToken: a handler that answers its own task token
// through the driver (as an in-process SendTaskSuccess would) before it
// returns needs the driver, which waits for it: the driver moves on and
// the execution ends.
func TestCallAnswersOwnToken(t *testing.T) {
	t.Parallel()
	var d *engine.Driver
	ready := make(chan struct{})
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		<-ready
		if err := d.Deliver(req.TaskToken, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: "answered"}}); err != nil {
			return task.Result{Error: "Deliver", Cause: err.Error()}
		}
		return task.Result{Output: "sent"}
	})
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters":{"QueueUrl":"q","MessageBody.$":"$$.Task.Token"},"End":true}}}`)
	d = engine.New(p, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Submit: true})
	close(ready)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:tok", Name: "tok", StartTime: time.Now()}
	d.Start(info, value.NewObject(0), info.StartTime)
	d.Run(context.Background())
	x := d.Execution()
	if x.Status() != interp.Succeeded || value.String(x.Output()) != `"answered"` {
		f := x.Failure()
		t.Fatalf("status %s output %s (%+v)", x.Status(), value.String(x.Output()), f)
	}
}
