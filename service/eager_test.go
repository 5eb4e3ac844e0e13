package service_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestEagerStart starts executions on SQLite, whose StartExecution
// evaluates the first state while the creation waits for the writer and
// commits it in the creation's transaction when it is ready in time
// (store.EagerCreator). Many executions started at once all end with
// whole histories; starts of one name, at once and while the first is
// in its first task, leave that one execution whole: the same answer for
// the same input, ExecutionAlreadyExists for another, and no step of a
// refused start in its history.
func TestEagerStart(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	release := make(chan struct{})
	var calls sync.Map // execution ARN -> number of invocations
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		exec, _ := req.ContextObject().(*value.Object).Get("Execution")
		id, _ := exec.(*value.Object).Get("Id")
		n, _ := calls.LoadOrStore(id, new(int))
		*n.(*int)++ // one invocation at a time per execution: its tasks run in turn
		<-release
		return task.Result{Output: value.ObjectOf("ok", true)}
	})
	// Refused starts are no failure to log.
	var logs logBuffer
	svc := service.New(service.Config{Store: st, Invoker: inv, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	defer svc.Close()
	ended := make(chan string, 1024) // the ARNs of the drivers that ended
	svc.OnEnded(func(arn string) { ended <- arn })
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "e", RoleARN: "arn:aws:iam::1:role/r", Definition: `{"StartAt":"P","States":{
		"P":{"Type":"Pass","Parameters":{"n.$":"$.n"},"Next":"T"},
		"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Next":"U"},
		"U":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}

	const distinct, same = 200, 50
	arns := make([]string, distinct)
	var wg sync.WaitGroup
	for i := range distinct {
		wg.Go(func() {
			e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: fmt.Sprintf("d%d", i), Input: fmt.Sprintf(`{"n":%d}`, i)})
			if err != nil {
				t.Error(err)
				return
			}
			arns[i] = e.ARN
		})
	}
	var first string
	var sameMu sync.Mutex
	var exists int
	for i := range same {
		wg.Go(func() {
			input := `{"n":-1}`
			if i%5 == 4 {
				input = `{"n":-2}`
			}
			e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "same", Input: input})
			switch {
			case errors.Is(err, fault.ErrExecutionExists):
				sameMu.Lock()
				exists++
				sameMu.Unlock()
			case err != nil:
				t.Error(err)
			default:
				sameMu.Lock()
				if first != "" && first != e.ARN {
					t.Errorf("two executions named same: %s, %s", first, e.ARN)
				}
				first = e.ARN
				sameMu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == "" || exists == 0 {
		t.Fatalf("starts of one name: execution %q, %d refused", first, exists)
	}
	// Starts of the name once its execution runs: the same answer, or a
	// refusal whose driver gives up without taking the registered one
	// with it.
	for i := range 10 {
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "same", Input: []string{`{"n":-1}`, `{"n":-2}`}[i%2]})
		if err == nil && e.ARN != first || err != nil && !errors.Is(err, fault.ErrExecutionExists) {
			t.Fatalf("start of a running name: %v, %v", e, err)
		}
	}
	// Every start of the name but the first was refused, and its driver
	// ends by itself: once they all have, the first is still registered.
	for refused := same - 1 + 10; refused > 0; {
		select {
		case arn := <-ended:
			if arn == first {
				refused--
			}
		case <-time.After(time.Minute):
			t.Fatalf("%d drivers of refused starts have not ended", refused)
		}
	}
	if !svc.Registered(first) {
		t.Fatal("a refused start unregistered the execution of the same name")
	}
	close(release)

	check := func(arn string) {
		t.Helper()
		d, err := svc.Wait(ctx, arn)
		if err != nil || d.Status != "SUCCEEDED" {
			t.Fatalf("%s: %+v, %v", arn, d, err)
		}
		evs, _, err := svc.History(ctx, arn, "", 0, false)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, ev := range evs {
			if ev.ID != int64(i+1) {
				t.Fatalf("%s: event %d has ID %d", arn, i+1, ev.ID)
			}
			if _, err := value.Parse(ev.JSON); err != nil {
				t.Fatalf("%s: event %d: %v", arn, ev.ID, err)
			}
			types = append(types, ev.Type)
		}
		want := "[ExecutionStarted PassStateEntered PassStateExited TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionSucceeded TaskStateExited " +
			"TaskStateEntered LambdaFunctionScheduled LambdaFunctionStarted LambdaFunctionSucceeded TaskStateExited ExecutionSucceeded]"
		if fmt.Sprint(types) != want {
			t.Fatalf("%s: history %v\nwant %s", arn, types, want)
		}
		if n, _ := calls.Load(arn); n == nil || *n.(*int) != 2 {
			t.Fatalf("%s: tasks invoked %v times, want 2", arn, n)
		}
	}
	for _, arn := range arns {
		if arn != "" {
			check(arn)
		}
	}
	check(first)
	if logs.String() != "" {
		t.Errorf("logged:\n%s", logs.String())
	}
}
