package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestResumeDormant: after a restart, executions that wait only for a
// timer stay dormant (not rebuilt) until it is due or an input arrives,
// and then behave as if they had never stopped: one wakes at its due time
// and succeeds, one is stopped, one answers a callback for a task it has
// closed, one is waited for; an execution waiting for a callback is
// rebuilt at once and takes its token.
func TestResumeDormant(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "stepd.db")
	tokens := make(chan string, 8)
	queue := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		tokens <- req.TaskToken
		return task.Result{Output: value.ObjectOf("MessageId", "m")}
	})
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st, Invoker: queue})
	// Soon: waits a few seconds. Long: an hour, after a callback task that
	// has completed (its token is closed). Ask: waits for a callback.
	def := func(seconds int) string {
		return fmt.Sprintf(`{"StartAt":"Ask","States":{
			"Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","Parameters":{"QueueUrl":"q","MessageBody.$":"$$.Task.Token"},"ResultPath":"$.answer","Next":"Park"},
			"Park":{"Type":"Wait","Seconds":%d,"Next":"Done"},"Done":{"Type":"Pass","End":true}}}`, seconds)
	}
	machine := func(name string, seconds int) string {
		sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: name, RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def(seconds)})
		if err != nil {
			t.Fatal(err)
		}
		return sm.ARN
	}
	soon, long := machine("soon", 3), machine("long", 3600)
	start := func(sm, name string) string {
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm, Name: name, Input: `{"n":"` + name + `"}`})
		if err != nil {
			t.Fatal(err)
		}
		return e.ARN
	}
	answer := func(svc *service.Service) string {
		token := <-tokens
		if err := svc.SendTaskSuccess(ctx, token, `{"ok":true}`); err != nil {
			t.Fatal(err)
		}
		return token
	}
	parked := func(svc *service.Service, arn string) {
		t.Helper()
		for {
			evs, _, err := svc.History(ctx, arn, "", 1, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 1 && evs[0].Type == "WaitStateEntered" {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s did not reach its Wait", arn)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	wakes := start(soon, "wakes")
	answer(svc)
	stopped := start(long, "stopped")
	answer(svc)
	called := start(long, "called")
	closedToken := answer(svc)
	waited := start(soon, "waited")
	answer(svc)
	for _, arn := range []string{wakes, stopped, called, waited} {
		parked(svc, arn)
	}
	start(long, "asking") // left waiting for its callback
	token := <-tokens
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	if st, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc = service.New(service.Config{Store: st, Invoker: queue})
	defer svc.Close()
	if n, err := svc.Runner().Resume(ctx); err != nil || n != 5 {
		t.Fatalf("Resume = %d, %v; want 5", n, err)
	}
	if n := svc.Dormant(); n != 4 {
		t.Errorf("%d executions dormant after Resume, want the 4 in a Wait", n)
	}
	if e, err := svc.DescribeExecution(ctx, stopped); err != nil || e.Status != "RUNNING" {
		t.Fatalf("a dormant execution described: %+v %v", e, err)
	}
	if _, err := svc.StopExecution(ctx, stopped, "Halt", "stopped while dormant"); err != nil {
		t.Fatal(err)
	}
	if e, err := svc.DescribeExecution(ctx, stopped); err != nil || e.Status != "ABORTED" {
		t.Errorf("stopped while dormant: %+v %v", e, err)
	}
	if err := svc.SendTaskSuccess(ctx, closedToken, `{}`); !errors.Is(err, fault.ErrTaskClosed) {
		t.Errorf("a callback for a closed task of a dormant execution: %v, want TaskTimedOut", err)
	}
	if err := svc.SendTaskSuccess(ctx, token, `{"late":true}`); err != nil {
		t.Errorf("the callback of an execution waiting for it: %v", err)
	}
	if e, err := svc.Wait(ctx, waited); err != nil || e.Status != "SUCCEEDED" {
		t.Errorf("waited for: %+v %v", e, err)
	}
	// Nothing but its timer wakes this one (Describe reads the store).
	for {
		e, err := svc.DescribeExecution(ctx, wakes)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != "RUNNING" {
			if e.Status != "SUCCEEDED" {
				t.Errorf("woken by its timer: %+v", e)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the dormant execution did not wake when its timer was due")
		case <-time.After(50 * time.Millisecond):
		}
	}
	evs, _, err := svc.History(ctx, stopped, "", 100, false)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != "ExecutionAborted" {
		t.Errorf("history of the stopped execution ends with %+v %v", evs[len(evs)-1], err)
	}
	if e, err := svc.DescribeExecution(ctx, called); err != nil || e.Status != "RUNNING" {
		t.Errorf("the execution called back: %+v %v", e, err)
	}
}

// ownClock is the wall clock under another type: a clock the service
// cannot set timers on for dormant executions.
type ownClock struct{ engine.RealClock }

// TestResumeWithOwnClock: with a clock other than the real one, an
// execution waiting for a timer is rebuilt at once (its steps read, as the
// scan gave only the last) and still completes.
func TestResumeWithOwnClock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "w", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"ResultPath":"$.p","Next":"W"},"W":{"Type":"Wait","Seconds":2,"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "x", Input: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	for {
		evs, _, err := svc.History(ctx, e.ARN, "", 1, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 1 && evs[0].Type == "WaitStateEntered" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	svc.Close()
	st.Close()
	if st, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc = service.New(service.Config{Store: st, Clock: ownClock{}})
	defer svc.Close()
	if n, err := svc.Runner().Resume(ctx); err != nil || n != 1 || svc.Dormant() != 0 {
		t.Fatalf("Resume = %d, %v, %d dormant; want 1, none dormant", n, err, svc.Dormant())
	}
	if got, err := svc.Wait(ctx, e.ARN); err != nil || got.Status != "SUCCEEDED" || got.Output != `{"p":1}` {
		t.Fatalf("after the Wait: %+v %v", got, err)
	}
}
