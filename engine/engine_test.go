package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func run(t *testing.T, def string, inv task.Invoker, opts ...func(*engine.Config)) *interp.Execution {
	t.Helper()
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	o := engine.Config{Invoker: inv}
	for _, f := range opts {
		f(&o)
	}
	return engine.Run(context.Background(), p, interp.Info{Name: "t", StartTime: time.Unix(1000, 0)}, value.NewObject(0), o)
}

func types(x *interp.Execution) string {
	var s []string
	for _, e := range x.History() {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}

// delayed returns a task that answers after d of simulated time.
func delayed(d time.Duration) task.Invoker {
	return task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: "done", Delay: d}
	})
}

func TestVirtualClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, def    string
		inv          task.Invoker
		status       interp.Status
		err          string
		typesContain string
		elapsed      time.Duration // virtual time from start to the last event
	}{
		{
			name:    "long wait is instant but timed",
			def:     `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":300,"End":true}}}`,
			status:  interp.Succeeded,
			elapsed: 300 * time.Second,
		},
		{
			name:         "task slower than its timeout",
			def:          `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSeconds":5,"End":true}}}`,
			inv:          delayed(60 * time.Second),
			status:       interp.Failed,
			err:          "States.Timeout",
			typesContain: "TaskStarted,TaskTimedOut,ExecutionFailed",
			elapsed:      5 * time.Second,
		},
		{
			name:         "task faster than its timeout",
			def:          `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSeconds":5,"End":true}}}`,
			inv:          delayed(2 * time.Second),
			status:       interp.Succeeded,
			typesContain: "TaskStarted,TaskSucceeded,TaskStateExited",
			elapsed:      2 * time.Second,
		},
		{
			name:    "heartbeat timeout",
			def:     `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","HeartbeatSeconds":3,"TimeoutSeconds":50,"End":true}}}`,
			inv:     delayed(10 * time.Second),
			status:  interp.Failed,
			err:     "States.Timeout", // as AWS records a service integration's lapsed heartbeat
			elapsed: 3 * time.Second,
		},
		{
			name:         "execution timeout",
			def:          `{"StartAt":"W","TimeoutSeconds":10,"States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`,
			status:       interp.TimedOut,
			err:          "States.Timeout",
			typesContain: "WaitStateEntered,ExecutionTimedOut",
			elapsed:      10 * time.Second,
		},
		{
			name: "retry back-off",
			def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true,
				"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":2,"BackoffRate":3,"MaxAttempts":2}]}}}`,
			inv: task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
				return task.Result{Error: "Boom", Cause: "always"}
			}),
			status:  interp.Failed,
			err:     "Boom",
			elapsed: 8 * time.Second, // 2 + 2*3
		},
	}
	for _, tt := range tests {
		x := run(t, tt.def, tt.inv)
		if x.Status() != tt.status {
			t.Errorf("%s: status %s, want %s (%v)", tt.name, x.Status(), tt.status, x.Failure())
			continue
		}
		if tt.err != "" && x.Failure().Error != tt.err {
			t.Errorf("%s: error %s, want %s", tt.name, x.Failure().Error, tt.err)
		}
		if !strings.Contains(types(x), tt.typesContain) {
			t.Errorf("%s: history %s, want it to contain %s", tt.name, types(x), tt.typesContain)
		}
		h := x.History()
		if got := h[len(h)-1].Timestamp.Sub(h[0].Timestamp); got != tt.elapsed {
			t.Errorf("%s: virtual time elapsed %v, want %v", tt.name, got, tt.elapsed)
		}
	}
}

func TestCancelAborts(t *testing.T) {
	t.Parallel()
	sm, _ := asl.Parse([]byte(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"x","End":true}}}`))
	p, _ := interp.Compile(sm)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		close(started)
		<-ctx.Done()
		return task.Result{Error: "Cancelled"}
	})
	go func() { <-started; cancel() }()
	x := engine.Run(ctx, p, interp.Info{Name: "t"}, value.NewObject(0), engine.Config{Invoker: inv})
	if x.Status() != interp.Aborted || !strings.HasSuffix(types(x), "ExecutionAborted") {
		t.Fatalf("status %s, history %s", x.Status(), types(x))
	}
}

func TestRealClockWaits(t *testing.T) {
	t.Parallel()
	x := run(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":0,"Next":"P"},"P":{"Type":"Pass","End":true}}}`, nil,
		func(o *engine.Config) { o.Clock = engine.RealClock{} })
	if x.Status() != interp.Succeeded {
		t.Fatalf("status %s", x.Status())
	}
}

func TestHistoryLimit(t *testing.T) {
	t.Parallel()
	loop, err := asl.Parse([]byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":false,"Next":"A"}],"Default":"C"},"C":{"Type":"Succeed"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := (&engine.Local{}).Run(context.Background(), loop, engine.Execution{StateMachineName: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	h := x.History()
	if x.Status() != interp.Failed || x.Failure().Error != "States.Runtime" || len(h) != interp.MaxStandardEvents || h[len(h)-1].Type != "ExecutionFailed" {
		t.Fatalf("status %s %v, %d events", x.Status(), x.Failure(), len(h))
	}
}

func TestStateOutputLimit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 300*1024)
	x := run(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"`+big+`","End":true}}}`, nil)
	if x.Status() != interp.Failed || x.Failure().Error != "States.DataLimitExceeded" {
		t.Fatalf("status %s %v", x.Status(), x.Failure())
	}
	// An object within the limit passes through a Choice; one that a Pass
	// makes larger than the limit out of it fails.
	half := strings.Repeat("b", 200*1024)
	x = run(t, `{"StartAt":"A","States":{
 "A":{"Type":"Pass","Result":{"a":"`+half+`"},"Next":"C"},
 "C":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"B"}]},
 "B":{"Type":"Pass","Parameters":{"a.$":"$.a","b.$":"$.a"},"End":true}}}`, nil)
	if x.Status() != interp.Failed || x.Failure().Error != "States.DataLimitExceeded" {
		t.Fatalf("object over the limit: status %s %v", x.Status(), x.Failure())
	}
}
