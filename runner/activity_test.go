package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// scheduledObserver signals once a committed step holds ActivityScheduled.
type scheduledObserver struct{ scheduled chan struct{} }

func (o *scheduledObserver) Started(*store.Execution, *store.Step) {}
func (o *scheduledObserver) Resumed(*store.Execution)              {}
func (o *scheduledObserver) Committed(s *store.Step, _ time.Duration, err error) {
	if err != nil {
		return
	}
	for _, e := range s.Events {
		if e.Type == "ActivityScheduled" {
			select {
			case o.scheduled <- struct{}{}:
			default:
			}
		}
	}
}

func activityRunner(t *testing.T, path string, obs runner.Observer) (*runner.Runner, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(runner.Config{Region: "us-east-1", Account: "123456789012", Store: st, Express: memory.New(),
		Invoker: func(*store.Execution) (task.Invoker, bool, error) {
			return task.InvokerFunc(func(context.Context, *task.Request) task.Result {
				return task.Result{Error: "Unexpected", Cause: "an activity task was invoked"}
			}), true, nil
		},
		Clock: engine.RealClock{}, Observer: obs})
	return r, st
}

func historyTypes(t *testing.T, st store.Store, arn string) string {
	t.Helper()
	evs, err := st.Events(context.Background(), arn, 0, 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Errorf("event %d has id %d", i+1, e.ID)
		}
		types = append(types, e.Type)
	}
	return strings.Join(types, " ")
}

// TestActivityDeletedAcrossRestart: an execution whose Task scheduled its
// activity (ActivityScheduled committed, no answer recorded, as every
// version before Tasks asked whether their activity exists journaled it)
// is resumed from the SQLite file after a restart, once the activity is
// deleted: replay rebuilds the committed history without asking, and the
// task, offered again, fails the execution. A new execution on the deleted
// activity fails right after TaskStateEntered.
func TestActivityDeletedAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	act := "arn:aws:states:us-east-1:123456789012:activity:work"
	def := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + act + `",
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Done"}],"End":true},"Done":{"Type":"Pass","End":true}}}`
	exec := func(name string) *store.Execution {
		e := execution(name)
		e.Definition = def
		return e
	}
	cause := "An error occurred while executing the state 'Work' (entered at the event id #2). The activity " + act + " does not exist."

	obs := &scheduledObserver{scheduled: make(chan struct{}, 1)}
	r, st := activityRunner(t, path, obs)
	if err := st.CreateActivity(ctx, &store.Activity{ARN: act, Name: "work", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	old := exec("old")
	if err := r.Start(ctx, old, value.NewObject(0), ""); err != nil {
		t.Fatal(err)
	}
	<-obs.scheduled
	if err := st.DeleteActivity(ctx, act); err != nil {
		t.Fatal(err)
	}
	r.Close() // a crash: the execution stays RUNNING in the file
	st.Close()

	r, st = activityRunner(t, path, nil)
	defer st.Close()
	defer r.Close()
	if n, err := r.Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d executions, %v; want 1", n, err)
	}
	done, err := r.Wait(ctx, old.ARN)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != string(interp.Failed) || done.Error != "States.Runtime" || done.Cause != cause {
		t.Errorf("resumed execution: %s %s %q, want FAILED States.Runtime %q", done.Status, done.Error, done.Cause, cause)
	}
	if got, want := historyTypes(t, st, old.ARN), "ExecutionStarted TaskStateEntered ActivityScheduled ExecutionFailed"; got != want {
		t.Errorf("resumed execution's history: %s, want %s", got, want)
	}

	fresh := exec("new")
	if err := r.Start(ctx, fresh, value.NewObject(0), ""); err != nil {
		t.Fatal(err)
	}
	if done, err = r.Wait(ctx, fresh.ARN); err != nil {
		t.Fatal(err)
	}
	if done.Status != string(interp.Failed) || done.Error != "States.Runtime" || done.Cause != cause {
		t.Errorf("new execution: %s %s %q, want FAILED States.Runtime %q", done.Status, done.Error, done.Cause, cause)
	}
	if got, want := historyTypes(t, st, fresh.ARN), "ExecutionStarted TaskStateEntered ExecutionFailed"; got != want {
		t.Errorf("new execution's history: %s, want %s", got, want)
	}
}
