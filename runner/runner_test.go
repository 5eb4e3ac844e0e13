package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// observer counts what the runner tells it.
type observer struct {
	mu        sync.Mutex
	started   int
	committed []int64 // the Seq of each step kept
}

func (o *observer) Started(*store.Execution, *store.Step) { o.mu.Lock(); o.started++; o.mu.Unlock() }
func (o *observer) Resumed(*store.Execution)              {}
func (o *observer) Committed(s *store.Step, _ time.Duration, err error) {
	if err == nil {
		o.mu.Lock()
		o.committed = append(o.committed, s.Seq)
		o.mu.Unlock()
	}
}

func newRunner(t *testing.T, obs runner.Observer, events func()) (*runner.Runner, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := runner.New(runner.Config{Region: "us-east-1", Account: "123456789012", Store: st, Express: memory.New(),
		Invoker: func(*store.Execution) (task.Invoker, bool, error) {
			return task.InvokerFunc(func(_ context.Context, req *task.Request) task.Result { return task.Result{Output: req.Input} }), true, nil
		},
		Clock: engine.RealClock{}, Log: nil, Observer: obs, StatusEvents: events})
	t.Cleanup(r.Close)
	return r, st
}

const passes = `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"T"},"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`

func execution(name string) *store.Execution {
	return &store.Execution{ARN: "arn:aws:states:us-east-1:123456789012:execution:m:" + name, Name: name,
		StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:m", StateMachineName: "m", Definition: passes,
		Type: "STANDARD", RoleARN: "arn:aws:iam::123456789012:role/r", Input: `{"n":1}`, Status: string(interp.Running)}
}

// TestHooksHearEveryStep runs an execution to its end and checks that the
// engine's hooks told the Observer of every step the store kept after the
// first (which Started reports), and announced the start and the end.
func TestHooksHearEveryStep(t *testing.T) {
	obs := &observer{}
	var mu sync.Mutex
	announced := 0
	r, st := newRunner(t, obs, func() { mu.Lock(); announced++; mu.Unlock() })
	ctx := context.Background()
	e := execution("one")
	if err := r.Start(ctx, e, value.ObjectOf("n", value.Int(1)), ""); err != nil {
		t.Fatal(err)
	}
	done, err := r.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("the execution ended %+v, %v", done, err)
	}
	steps, err := st.Steps(ctx, e.ARN)
	if err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.started != 1 || len(obs.committed) != len(steps)-1 {
		t.Errorf("the observer heard %d starts and steps %v; the store has %d steps", obs.started, obs.committed, len(steps))
	}
	for i, seq := range obs.committed {
		if seq != steps[i+1].Seq {
			t.Errorf("step %d heard as Seq %d, stored as %d", i+1, seq, steps[i+1].Seq)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if announced != 2 {
		t.Errorf("%d status changes announced, want 2 (the start and the end)", announced)
	}
	if err := r.Start(ctx, execution("one"), value.NewObject(0), ""); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second start of the same name: %v, want store.ErrExists", err)
	}
}

// TestAnswersTellConditions checks the runner's answers for what runs
// nowhere and for tokens it did not sign.
func TestAnswersTellConditions(t *testing.T) {
	r, _ := newRunner(t, nil, nil)
	ctx := context.Background()
	if err := r.Stop(ctx, execution("none").ARN, "E", "c"); !errors.Is(err, runner.ErrNotRunningHere) {
		t.Errorf("Stop of an execution that runs nowhere: %v", err)
	}
	if err := r.UpdateMapRun(ctx, execution("none").ARN, value.NewObject(0)); !errors.Is(err, runner.ErrNotRunningHere) {
		t.Errorf("UpdateMapRun of an execution that runs nowhere: %v", err)
	}
	if err := r.Callback(ctx, "not a token", interp.Input{Kind: interp.TaskHeartbeat}); !errors.Is(err, fault.ErrBadToken) {
		t.Errorf("a callback with a token not signed here: %v", err)
	}
	if err := r.CheckToken(ctx, "not a token"); !errors.Is(err, fault.ErrBadToken) {
		t.Errorf("CheckToken of a token not signed here: %v", err)
	}
}
