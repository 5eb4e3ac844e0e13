package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// syncJob stands in for a service's job behind a .sync integration: the
// invoker starts it (counted), submits the start call's answer, and waits
// for it; a dispatch that carries Submitted waits for that job instead.
type syncJob struct {
	mu      sync.Mutex
	starts  int
	resumed []any
	causes  chan error // why each waiting invocation's context ended
	finish  chan struct{}
}

func (j *syncJob) Invoke(ctx context.Context, req *task.Request) task.Result {
	if req.Submitted != nil {
		j.mu.Lock()
		j.resumed = append(j.resumed, req.Submitted)
		j.mu.Unlock()
		return task.Result{Output: value.ObjectOf("Waited", req.Submitted)}
	}
	if req.Submit == nil {
		return task.Result{Error: "States.Runtime", Cause: "no Submit on a .sync request"}
	}
	j.mu.Lock()
	j.starts++
	j.mu.Unlock()
	req.Submit(value.ObjectOf("JobId", "job-1"))
	select {
	case <-ctx.Done():
		j.causes <- context.Cause(ctx)
		return task.Result{Error: "States.TaskFailed", Cause: "cancelled"}
	case <-j.finish:
		return task.Result{Output: "finished"}
	}
}

func eventTypes(x *interp.Execution) string {
	var types []string
	for _, e := range x.History() {
		types = append(types, e.Type)
	}
	return strings.Join(types, " ")
}

// TestDriverSyncResume: a .sync task records TaskSubmitted when its job
// starts; a driver abandoned then (a crash, a shutdown: the context ends
// without task.ErrCancelled, so the job is left running) is rebuilt from
// its steps, and the task dispatched again carries what the start call
// returned, so that the job is waited for, not started a second time.
func TestDriverSyncResume(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::ecs:runTask.sync","End":true}}}`)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	job := &syncJob{causes: make(chan error, 1), finish: make(chan struct{})}
	j := &journal{}
	d := engine.New(p, engine.Config{Invoker: job, Clock: engine.RealClock{}, Journal: j})
	j.keep(d.Start(info, value.NewObject(0), info.StartTime))
	ctx, cancel := context.WithCancel(context.Background())
	go d.Run(ctx)
	waitSteps(t, j, 2) // the start, then TaskSubmitted
	cancel()
	<-d.Done()
	if cause := <-job.causes; errors.Is(cause, task.ErrCancelled) {
		t.Fatalf("an abandoned driver cancelled its task (%v): the job would be stopped", cause)
	}
	if got, want := eventTypes(d.Execution()), "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted"; got != want {
		t.Fatalf("history before the crash: %s, want %s", got, want)
	}

	close(job.finish) // a job started again (the defect) ends at once
	r := engine.New(p, engine.Config{Invoker: job, Clock: engine.RealClock{}, Journal: &journal{}})
	if err := r.Replay(info, value.NewObject(0), j.steps); err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background())
	x := r.Execution()
	if x.Status() != interp.Succeeded || value.String(x.Output()) != `{"Waited":{"JobId":"job-1"}}` {
		t.Fatalf("resumed: status %s output %s", x.Status(), value.String(x.Output()))
	}
	if job.starts != 1 || len(job.resumed) != 1 {
		t.Errorf("%d jobs started, %d waited for again; want 1 and 1", job.starts, len(job.resumed))
	}
	if got, want := eventTypes(x), "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskSucceeded TaskStateExited ExecutionSucceeded"; got != want {
		t.Errorf("history: %s, want %s", got, want)
	}
}

// TestDriverSyncCancelled: when the state gives up on its task (here its
// TimeoutSeconds), the task's context ends with task.ErrCancelled, which
// tells the invoker to stop the job it started.
func TestDriverSyncCancelled(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::batch:submitJob.sync","TimeoutSeconds":1,"End":true}}}`)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", StartTime: time.Now()}
	job := &syncJob{causes: make(chan error, 1), finish: make(chan struct{})}
	d := engine.New(p, engine.Config{Invoker: job, Clock: engine.RealClock{}, Journal: &journal{}})
	d.Start(info, value.NewObject(0), info.StartTime)
	d.Run(context.Background())
	if cause := <-job.causes; !errors.Is(cause, task.ErrCancelled) {
		t.Errorf("the timed-out task's context ended with %v, want task.ErrCancelled", cause)
	}
	if got, want := eventTypes(d.Execution()), "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskTimedOut ExecutionFailed"; got != want {
		t.Errorf("history: %s, want %s", got, want)
	}
}

func waitSteps(t *testing.T, j *journal, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		j.mu.Lock()
		got := len(j.steps)
		j.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d steps committed, want %d", got, n)
		}
	}
}

// TestRunWaitsForStops: engine.Run (stepd run) returns only once a task
// the execution withdrew has returned, so that the job it stops is
// stopped before the process exits. The task's stop call lasts until Run
// has begun to wait for it (a hook in waitTasks tells): a Run that does not
// wait returns while the task is still stopping.
func TestRunWaitsForStops(t *testing.T) {
	p := compile(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::ecs:runTask.sync","TimeoutSeconds":1,"End":true}}}`)
	waiting, release := make(chan struct{}), make(chan struct{})
	var waitOnce, releaseOnce sync.Once
	t.Cleanup(engine.SetWaitingTasks(func() { waitOnce.Do(func() { close(waiting) }) }))
	defer releaseOnce.Do(func() { close(release) })
	var stopped atomic.Bool
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		<-ctx.Done()
		<-release // the stop call
		stopped.Store(true)
		return task.Result{Error: "States.TaskFailed", Cause: "stopped"}
	})
	done := make(chan *interp.Execution, 1)
	go func() {
		done <- engine.Run(context.Background(), p, interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e"}, value.NewObject(0),
			engine.Config{Invoker: inv, Clock: engine.RealClock{}})
	}()
	select {
	case x := <-done:
		t.Fatalf("Run returned (status %s) while the withdrawn task was still stopping its job", x.Status())
	case <-waiting:
	}
	releaseOnce.Do(func() { close(release) })
	x := <-done
	if x.Status() != interp.Failed || !stopped.Load() {
		t.Errorf("status %s; the withdrawn task had returned: %v", x.Status(), stopped.Load())
	}
}
