package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// journal keeps copies of the steps it is given (a driver reuses its
// buffers), and can refuse to commit after a number of steps.
type journal struct {
	mu    sync.Mutex
	steps []*store.Step
	limit int // refuse steps with Seq >= limit when > 0, for good
	fail  int // fail this many AppendStep calls (a full disk) before taking steps
	tries int
}

func (j *journal) keep(s *store.Step) {
	c := *s
	c.Input = bytes.Clone(s.Input)
	c.Events = make([]store.Event, len(s.Events))
	for i, e := range s.Events {
		c.Events[i] = store.Event{ID: e.ID, Type: e.Type, JSON: bytes.Clone(e.JSON)}
	}
	j.mu.Lock()
	j.steps = append(j.steps, &c)
	j.mu.Unlock()
}

func (j *journal) AppendStep(ctx context.Context, s *store.Step) error {
	if j.limit > 0 && s.Seq >= int64(j.limit) {
		return fmt.Errorf("journal closed: %w", store.ErrConflict)
	}
	j.mu.Lock()
	j.tries++
	failing := j.tries <= j.fail
	j.mu.Unlock()
	if failing {
		return errors.New("disk full")
	}
	j.keep(s)
	return nil
}

func compile(t *testing.T, def string) *interp.Program {
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

func eventJSON(x *interp.Execution) []string {
	var out []string
	for _, e := range x.History() {
		out = append(out, string(e.AppendJSON(nil, true)))
	}
	return out
}

func committedJSON(steps []*store.Step) []string {
	var out []string
	for _, s := range steps {
		for _, e := range s.Events {
			out = append(out, string(e.JSON))
		}
	}
	return out
}

const journalDef = `{"StartAt":"T","States":{
 "T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","ResultPath":"$.r","Next":"W"},
 "W":{"Type":"Wait","Seconds":30,"Next":"U"},
 "U":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:g","End":true}}}`

// TestDriverJournalReplay runs an execution with a journal, then rebuilds
// it from every prefix of its committed steps: the rebuilt history is the
// committed one, and the outstanding operations are those the next step
// answered.
func TestDriverJournalReplay(t *testing.T) {
	p := compile(t, journalDef)
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("from", req.StateName)}
	})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: time.Unix(1000, 0)}
	j := &journal{}
	d := engine.New(p, engine.Config{Invoker: inv, Journal: j})
	first := d.Start(info, value.NewObject(0), info.StartTime)
	if first == nil || first.Seq != 0 || first.Status != "RUNNING" || len(first.Input) != 0 {
		t.Fatalf("first step %+v", first)
	}
	j.keep(first)
	d.Run(context.Background())
	x := d.Execution()
	if x.Status() != interp.Succeeded {
		t.Fatalf("status %s", x.Status())
	}
	if got, want := committedJSON(j.steps), eventJSON(x); !reflect.DeepEqual(got, want) {
		t.Fatalf("committed events differ from the history:\n%v\n%v", got, want)
	}
	last := j.steps[len(j.steps)-1]
	if last.Status != "SUCCEEDED" || last.Output != `{"from":"U"}` || last.Stopped.IsZero() {
		t.Fatalf("last step %+v", last)
	}
	for n := 1; n <= len(j.steps); n++ {
		r := engine.New(p, engine.Config{Invoker: inv, Journal: &journal{}})
		if err := r.Replay(info, value.NewObject(0), j.steps[:n]); err != nil {
			t.Fatalf("replay of %d steps: %v", n, err)
		}
		if got, want := eventJSON(r.Execution()), committedJSON(j.steps[:n]); !reflect.DeepEqual(got, want) {
			t.Errorf("replay of %d steps:\n%v\nwant\n%v", n, got, want)
		}
	}
	// Resume the execution after its first step and run it to the end:
	// the history is the uninterrupted run's.
	j2 := &journal{}
	r := engine.New(p, engine.Config{Invoker: inv, Journal: j2})
	if err := r.Replay(info, value.NewObject(0), j.steps[:2]); err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background())
	if got, want := eventJSON(r.Execution()), eventJSON(x); !reflect.DeepEqual(got, want) {
		t.Errorf("resumed run:\n%v\nwant\n%v", got, want)
	}
	if len(j2.steps) == 0 || j2.steps[0].Seq != 2 {
		t.Errorf("the resumed driver committed from Seq %v, want 2", j2.steps)
	}
}

// TestDriverAbandon checks that with a journal, cancelling the driver's
// context leaves the execution as committed (it resumes by replay) while
// without one it aborts; and that a step the journal refuses stops the
// driver before its commands are carried out.
func TestDriverAbandon(t *testing.T) {
	p := compile(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := engine.New(p, engine.Config{Clock: engine.RealClock{}, Journal: &journal{}})
	d.Start(info, value.NewObject(0), info.StartTime)
	d.Run(ctx)
	if s := d.Execution().Status(); s != interp.Running {
		t.Errorf("abandoned execution's status %s", s)
	}
	d = engine.New(p, engine.Config{Clock: engine.RealClock{}})
	d.Start(info, value.NewObject(0), info.StartTime)
	d.Run(ctx)
	if s := d.Execution().Status(); s != interp.Aborted {
		t.Errorf("cancelled execution without a journal: status %s", s)
	}

	calls := 0
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		calls++
		return task.Result{Output: 1}
	})
	d = engine.New(compile(t, journalDef), engine.Config{Invoker: inv, Journal: &journal{limit: 1}})
	d.Start(info, value.NewObject(0), info.StartTime)
	d.Run(context.Background())
	if s := d.Execution().Status(); s != interp.Running || calls != 1 {
		t.Errorf("after a refused commit: status %s, %d calls (the second task must not run)", s, calls)
	}
}

// TestDriverRetriesCommits: a store that fails for a while (a full disk)
// is retried until it takes the step; the execution then moves on by
// itself, every step committed once and in order.
func TestDriverRetriesCommits(t *testing.T) {
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result { return task.Result{Output: 1} })
	j := &journal{fail: 4}
	d := engine.New(compile(t, journalDef), engine.Config{Invoker: inv, Journal: j})
	first := d.Start(info, value.NewObject(0), info.StartTime)
	j.keep(first)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d.Run(ctx)
	if s := d.Execution().Status(); s != interp.Succeeded {
		t.Fatalf("status %s after the store recovered", s)
	}
	for i, st := range j.steps {
		if st.Seq != int64(i) {
			t.Fatalf("step %d has Seq %d", i, st.Seq)
		}
	}
	if j.tries != 4+len(j.steps)-1 {
		t.Errorf("%d AppendStep calls for %d steps after 4 failures", j.tries, len(j.steps)-1)
	}
}

// TestDriverDeliver checks callbacks by task token: an unknown token, the
// token's task completing the execution, and the token used again.
func TestDriverDeliver(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
		"Parameters":{"FunctionName":"f","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	tokens := make(chan string, 1)
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		tokens <- req.TaskToken
		return task.Result{Output: value.NewObject(0)}
	})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	j := &journal{}
	d := engine.New(p, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Journal: j, Submit: true})
	d.Start(info, value.NewObject(0), info.StartTime)
	go d.Run(context.Background())
	token := <-tokens
	// The token is out before the integration's answer is: wait for the
	// TaskSubmitted step, so that the inputs below come after it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		j.mu.Lock()
		n := len(j.steps)
		j.mu.Unlock()
		if n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the submission was not committed")
		}
	}
	if err := d.Deliver("bogus", interp.Input{Kind: interp.TaskHeartbeat}); !errors.Is(err, engine.ErrNoTask) {
		t.Errorf("unknown token: %v", err)
	}
	if err := d.Deliver(token, interp.Input{Kind: interp.TaskHeartbeat}); err != nil {
		t.Errorf("heartbeat: %v", err)
	}
	if err := d.Deliver(token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: "done"}}); err != nil {
		t.Errorf("success: %v", err)
	}
	<-d.Done()
	if x := d.Execution(); x.Status() != interp.Succeeded || value.String(x.Output()) != `"done"` {
		t.Fatalf("status %s output %s", x.Status(), value.String(x.Output()))
	}
	if err := d.Deliver(token, interp.Input{Kind: interp.TaskDone}); !errors.Is(err, engine.ErrEnded) {
		t.Errorf("after the end: %v", err)
	}
	// Steps: start, submitted, heartbeat, done.
	var kinds []interp.InputKind
	for _, s := range j.steps {
		rec, err := engine.DecodeInput(s.Input)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, rec.Input.Kind)
	}
	if want := []interp.InputKind{interp.TaskSubmitted, interp.TaskHeartbeat, interp.TaskDone}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("committed inputs %v, want %v", kinds, want)
	}
}

// TestDriverReplayLegacy rebuilds an execution whose steps were committed
// before the journal had versions (numeric kinds, no random values, an
// empty step 0): databases written then still resume.
func TestDriverReplayLegacy(t *testing.T) {
	p := compile(t, journalDef)
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("from", req.StateName)}
	})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: time.Unix(1000, 0)}
	j := &journal{}
	d := engine.New(p, engine.Config{Invoker: inv, Journal: j})
	j.keep(d.Start(info, value.NewObject(0), info.StartTime))
	d.Run(context.Background())
	legacy := strings.NewReplacer(`{"v":1,"kind":"TaskDone"`, `{"kind":1`, `{"v":1,"kind":"TimerFired"`, `{"kind":2`)
	var old []*store.Step
	for _, s := range j.steps {
		c := *s
		if len(s.Input) > 0 {
			c.Input = []byte(legacy.Replace(string(s.Input)))
			if bytes.Contains(c.Input, []byte(`"v"`)) {
				t.Fatalf("step %d not made legacy: %s", s.Seq, c.Input)
			}
		}
		old = append(old, &c)
	}
	r := engine.New(p, engine.Config{Invoker: inv, Journal: &journal{}})
	if err := r.Replay(info, value.NewObject(0), old); err != nil {
		t.Fatal(err)
	}
	if got, want := eventJSON(r.Execution()), eventJSON(d.Execution()); !reflect.DeepEqual(got, want) {
		t.Errorf("replayed legacy steps:\n%v\nwant\n%v", got, want)
	}
	if r.Execution().Status() != interp.Succeeded {
		t.Errorf("status %s", r.Execution().Status())
	}
}

// TestDriverParks: with Config.Park, Run returns while the execution waits
// (no goroutine is held); a due timer, a callback and a cancelled context
// each take it up again, and OnEnd tells when it has ended.
func TestDriverParks(t *testing.T) {
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	ended := make(chan struct{})
	// A Wait: Run parks, the timer wakes it, the execution succeeds.
	p := compile(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}}`)
	d := engine.New(p, engine.Config{Clock: engine.RealClock{}, Journal: &journal{}, Park: true, OnEnd: func() { close(ended) }})
	d.Start(info, value.NewObject(0), time.Now())
	d.Run(context.Background())
	select {
	case <-d.Done():
		t.Fatal("Run returned with the execution ended: it never parked")
	default:
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked driver did not wake for its timer")
	}
	if s := d.Execution().Status(); s != interp.Succeeded {
		t.Fatalf("status %s", s)
	}

	// A callback: Deliver wakes the parked driver.
	p = compile(t, `{"StartAt":"C","States":{"C":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters":{"t.$":"$$.Task.Token"},"End":true}}}`)
	var token string
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		token = req.TaskToken
		return task.Result{Output: value.NewObject(0)}
	})
	d = engine.New(p, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Journal: &journal{}, Park: true, Submit: true})
	d.Start(info, value.NewObject(0), time.Now())
	d.Run(context.Background())
	if token == "" {
		t.Fatal("the task was not invoked before the driver parked")
	}
	if err := d.Deliver(token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: value.ObjectOf("ok", true)}}); err != nil {
		t.Fatalf("Deliver to a parked driver: %v", err)
	}
	<-d.Done()
	if s := d.Execution().Status(); s != interp.Succeeded {
		t.Fatalf("status after the callback: %s", s)
	}

	// A cancelled context ends a parked driver (the execution is left as
	// committed).
	p = compile(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	d = engine.New(p, engine.Config{Clock: engine.RealClock{}, Journal: &journal{}, Park: true})
	d.Start(info, value.NewObject(0), time.Now())
	d.Run(ctx)
	cancel()
	select {
	case <-d.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("cancelling the context did not end the parked driver")
	}
	if s := d.Execution().Status(); s != interp.Running {
		t.Fatalf("an abandoned execution's status: %s", s)
	}
}

// TestDriverImmediate: an invoker that answers at once (task.Immediate) is
// called on the driver's goroutine in the order the tasks were asked for,
// so the ten branches of a Parallel complete in branch order every time;
// tasks on goroutines of their own complete in whatever order they finish.
func TestDriverImmediate(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"StartAt":"T%d","States":{"T%d":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Parameters":{"b":%d},"End":true}}}`, i, i, i)
	}
	b.WriteString(`]}}}`)
	p := compile(t, b.String())
	inv := task.ImmediateFunc(func(_ context.Context, req *task.Request) task.Result {
		return task.Result{Output: req.Input}
	})
	for run := range 50 {
		x := engine.Run(context.Background(), p, interp.Info{Name: "imm", StartTime: time.Unix(0, 0)}, value.NewObject(0), engine.Config{Invoker: inv})
		if x.Status() != interp.Succeeded {
			t.Fatalf("status %s", x.Status())
		}
		next := 0
		for _, e := range x.History() {
			if e.Type != "LambdaFunctionSucceeded" {
				continue
			}
			out, _ := e.Detail("output")
			if want := fmt.Sprintf(`{"b":%d}`, next); out != want {
				t.Fatalf("run %d: result %d is %v, want %s (results out of the order asked)", run, next, out, want)
			}
			next++
		}
	}
}

// TestDriverStopsImmediateLoop: a stop reaches an execution that loops over
// a Task answered at once, although the driver always has a result at hand.
func TestDriverStopsImmediateLoop(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{
 "T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Next":"C"},
 "C":{"Type":"Choice","Choices":[{"Variable":"$.go","BooleanEquals":true,"Next":"T"}],"Default":"End"},
 "End":{"Type":"Succeed"}}}`)
	var d *engine.Driver
	calls := 0
	inv := task.ImmediateFunc(func(_ context.Context, req *task.Request) task.Result {
		calls++
		switch calls {
		case 100:
			d.Stop("Halt", "stopped from outside")
		case 100000:
			return task.Result{Output: value.ObjectOf("go", false)} // the stop never arrived
		}
		return task.Result{Output: value.ObjectOf("go", true)}
	})
	d = engine.New(p, engine.Config{Invoker: inv})
	d.Start(interp.Info{Name: "loop", StartTime: time.Unix(0, 0)}, value.NewObject(0), time.Unix(0, 0))
	d.Run(context.Background())
	if s := d.Execution().Status(); s != interp.Aborted || calls > 200 {
		t.Fatalf("status %s after %d calls, want ABORTED soon after the stop (call 100)", s, calls)
	}
}

// TestTaskContextObject: the Context object a task reads is the one of its
// attempt, whether its invoker answers at once or on a goroutine of its
// own (-race checks that building it there does not race the driver).
func TestTaskContextObject(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f",
 "Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":3}],"End":true}}}`)
	for _, immediate := range []bool{true, false} {
		var mu sync.Mutex
		var seen []string
		answer := func(_ context.Context, req *task.Request) task.Result {
			c := value.AsObject(req.ContextObject())
			st, _ := c.Get("State")
			ex, _ := c.Get("Execution")
			id, _ := value.AsObject(ex).Get("Id")
			mu.Lock()
			seen = append(seen, value.String(st)+" "+id.(string))
			n := len(seen)
			mu.Unlock()
			if n < 3 {
				return task.Result{Error: "Boom"}
			}
			return task.Result{Output: true}
		}
		var inv task.Invoker = task.InvokerFunc(answer)
		if immediate {
			inv = task.ImmediateFunc(answer)
		}
		arn := "arn:aws:states:us-east-1:123456789012:execution:m:e"
		x := engine.Run(context.Background(), p, interp.Info{ExecutionARN: arn, Name: "e", StartTime: time.Unix(0, 0)}, value.NewObject(0), engine.Config{Invoker: inv})
		if x.Status() != interp.Succeeded {
			t.Fatalf("immediate %v: status %s", immediate, x.Status())
		}
		want := []string{
			`{"Name":"T","EnteredTime":"1970-01-01T00:00:00.000Z","RetryCount":0} ` + arn,
			`{"Name":"T","EnteredTime":"1970-01-01T00:00:00.000Z","RetryCount":1} ` + arn,
			`{"Name":"T","EnteredTime":"1970-01-01T00:00:00.000Z","RetryCount":2} ` + arn,
		}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("immediate %v: contexts\n%q\nwant\n%q", immediate, seen, want)
		}
	}
}

// TestDriverRecordsWake: a step after which the execution waits only for
// timers records the first one's due time (store.Step.Wake); a step after
// which a task runs, or the execution has ended, records none.
func TestDriverRecordsWake(t *testing.T) {
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("from", req.StateName)}
	})
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		name, def string
		deferred  bool
		want      []time.Duration // each step's Wake after the start; -1 for none
	}{
		{"task, wait, task", journalDef, false, []time.Duration{-1, 30 * time.Second, -1, -1}},
		{"deferred start", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}}`, true,
			[]time.Duration{0, 5 * time.Second, -1}},
		{"a task beside a wait", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":5,"End":true}}},
			{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}]}}}`, false,
			[]time.Duration{-1, 5 * time.Second, -1}},
		{"two waits", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":9,"End":true}}},
			{"StartAt":"V","States":{"V":{"Type":"Wait","Seconds":4,"End":true}}}]}}}`, false,
			[]time.Duration{4 * time.Second, 9 * time.Second, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compile(t, tc.def)
			info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: start, Defer: tc.deferred}
			j := &journal{}
			d := engine.New(p, engine.Config{Invoker: inv, Journal: j})
			j.keep(d.Start(info, value.NewObject(0), start))
			d.Run(context.Background())
			if s := d.Execution().Status(); s != interp.Succeeded {
				t.Fatalf("status %s", s)
			}
			var got []time.Duration
			for _, st := range j.steps {
				if st.Wake.IsZero() {
					got = append(got, -1)
				} else {
					got = append(got, st.Wake.Sub(start))
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wake of each step %v, want %v", got, tc.want)
			}
		})
	}
}

// TestImmediateTaskReusesNothingStale: a task answered at once leaves its
// op for the next task to reuse (interp.Input.Released); the next task's
// request and Context object must show nothing of the one before — here a
// retried task inside a Map iteration, then a task outside the Map.
func TestImmediateTaskReusesNothingStale(t *testing.T) {
	p := compile(t, `{"StartAt":"M","States":{
 "M":{"Type":"Map","ItemsPath":"$.items","Next":"B","ItemProcessor":{"StartAt":"A","States":{
  "A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f",
   "Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":3}],"End":true}}}},
 "B":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`)
	var seen []string
	inv := task.ImmediateFunc(func(_ context.Context, req *task.Request) task.Result {
		c := value.AsObject(req.ContextObject())
		st, _ := c.Get("State")
		_, inMap := c.Get("Map")
		seen = append(seen, fmt.Sprintf("%s attempt %d map %v input %s", value.String(st), req.Attempt, inMap, value.String(req.Input)))
		if req.StateName == "A" && req.Attempt == 0 {
			return task.Result{Error: "Boom"}
		}
		return task.Result{Output: value.ObjectOf("from", req.StateName)}
	})
	in, _ := value.Parse([]byte(`{"items":[7]}`))
	x := engine.Run(context.Background(), p, interp.Info{Name: "e", StartTime: time.Unix(0, 0)}, in, engine.Config{Invoker: inv})
	if x.Status() != interp.Succeeded {
		t.Fatalf("status %s", x.Status())
	}
	want := []string{
		`{"Name":"A","EnteredTime":"1970-01-01T00:00:00.000Z","RetryCount":0} attempt 0 map true input 7`,
		`{"Name":"A","EnteredTime":"1970-01-01T00:00:00.000Z","RetryCount":1} attempt 1 map true input 7`,
		`{"Name":"B","EnteredTime":"1970-01-01T00:00:01.000Z","RetryCount":0} attempt 0 map false input [{"from":"A"}]`,
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("requests\n%q\nwant\n%q", seen, want)
	}
}

// TestAbandonBeforeLateResult: when Run's context ends, a task that
// answers because of it (a failure caused by the cancellation) is not
// committed, even when its answer and the end of the context are both
// there as the driver next looks: the execution is abandoned as committed,
// to resume by replay. (Branch A's result is being committed while the
// context ends and branch B answers.)
func TestAbandonBeforeLateResult(t *testing.T) {
	p := compile(t, `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:a","End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:b","End":true}}}]}}}`)
	for range 40 {
		bStarted, bAnswered := make(chan struct{}), make(chan struct{})
		inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
			if req.StateName == "A" {
				<-bStarted
				return task.Result{Output: value.ObjectOf("a", true)}
			}
			close(bStarted)
			<-ctx.Done()
			defer close(bAnswered)
			return task.Result{Error: "States.TaskFailed", Cause: "cancelled"}
		})
		ctx, cancel := context.WithCancel(context.Background())
		var d *engine.Driver
		j := &lateJournal{stepped: func() {
			cancel()
			<-bAnswered
			// B's answer reaches the driver's queue (the loop is busy
			// committing A's result, so it stays there).
			for deadline := time.Now().Add(10 * time.Second); engine.Queued(d) == 0; time.Sleep(100 * time.Microsecond) {
				if time.Now().After(deadline) {
					t.Error("B's answer never reached the driver's queue")
					return
				}
			}
		}}
		info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: time.Unix(1000, 0)}
		d = engine.New(p, engine.Config{Invoker: inv, Journal: j, Clock: engine.RealClock{}})
		j.keep(d.Start(info, value.NewObject(0), info.StartTime))
		d.Run(ctx)
		<-d.Done()
		j.mu.Lock()
		n := len(j.steps)
		j.mu.Unlock()
		if n != 2 {
			t.Fatalf("%d steps committed, want 2 (the start, A's result): B's failure, caused by the end of the context, was committed", n)
		}
	}
}

// lateJournal is a journal that calls stepped while it commits the first
// step after the start.
type lateJournal struct {
	journal
	stepped func()
	once    sync.Once
}

func (j *lateJournal) AppendStep(ctx context.Context, s *store.Step) error {
	j.once.Do(j.stepped)
	return j.journal.AppendStep(ctx, s)
}
