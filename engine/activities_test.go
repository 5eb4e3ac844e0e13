package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

const goneActivity = "arn:aws:states:us-east-1:123456789012:activity:gone"

// activityDef: a Task on goneActivity whose catcher catches everything
// but States.Runtime.
const activityDef = `{"StartAt":"Work","States":{
 "Work":{"Type":"Task","Resource":"` + goneActivity + `","Catch":[{"ErrorEquals":["States.ALL"],"Next":"Done"}],"End":true},
 "Done":{"Type":"Pass","End":true}}}`

// askedNot is an ActivityExists hook that fails t when it is asked: replay
// must answer from the steps' records.
func askedNot(t *testing.T) func(context.Context, string) (bool, error) {
	return func(context.Context, string) (bool, error) {
		t.Errorf("replay asked whether an activity exists")
		return false, nil
	}
}

// TestDriverActivityDoesNotExist: a Task on an activity the hook says does
// not exist fails the execution with States.Runtime right after
// TaskStateEntered, with nothing scheduled or offered; the answer is
// recorded with its step, and replay hands it back without asking.
func TestDriverActivityDoesNotExist(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprint("defer=", deferred), func(t *testing.T) {
			p := compile(t, activityDef)
			info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: time.Unix(1000, 0), Defer: deferred}
			j := &journal{}
			asked := 0
			d := engine.New(p, engine.Config{Journal: j,
				ActivityExists: func(_ context.Context, arn string) (bool, error) {
					asked++
					return arn != goneActivity, nil
				},
				Activity: func(*engine.Driver, int64, *task.Request) { t.Error("the task was offered") }})
			j.keep(d.Start(info, value.NewObject(0), info.StartTime))
			d.Run(context.Background())
			x := d.Execution()
			want := "ExecutionStarted TaskStateEntered ExecutionFailed"
			if got := eventTypes(x); got != want || asked != 1 {
				t.Fatalf("history %v after %d questions, want %v after 1", got, asked, want)
			}
			f := x.Failure()
			cause := "An error occurred while executing the state 'Work' (entered at the event id #2). The activity " + goneActivity + " does not exist."
			if f == nil || f.Error != "States.Runtime" || f.Cause != cause {
				t.Fatalf("failure %+v, want States.Runtime %q", f, cause)
			}
			last := j.steps[len(j.steps)-1]
			if !bytes.Contains(last.Input, []byte(`"noActivity":[0]`)) {
				t.Errorf("the failing step's record %s has no noActivity", last.Input)
			}
			for _, ask := range []func(context.Context, string) (bool, error){nil, askedNot(t)} {
				r := engine.New(p, engine.Config{Journal: &journal{}, ActivityExists: ask})
				if err := r.Replay(info, value.NewObject(0), j.steps); err != nil {
					t.Fatal(err)
				}
				if got, want := eventJSON(r.Execution()), committedJSON(j.steps); !reflect.DeepEqual(got, want) {
					t.Errorf("replayed:\n%v\nwant\n%v", got, want)
				}
			}
		})
	}
}

// TestDriverReplaysScheduledActivity: an execution journaled before Tasks
// asked whether their activity exists (its step holds ActivityScheduled
// and no answer) replays to the same history even though the activity
// no longer exists, and, resumed, fails as the offer fails.
func TestDriverReplaysScheduledActivity(t *testing.T) {
	p := compile(t, activityDef)
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:m:e", Name: "e", StartTime: time.Unix(1000, 0), Defer: true}
	offerFails := func(d *engine.Driver, id int64, req *task.Request) {
		d.Post(id, task.Result{Error: "States.Runtime", Cause: "The activity " + req.Resource + " does not exist."})
	}
	// As the version before the question ran: no hook, the offer fails.
	j := &journal{}
	d := engine.New(p, engine.Config{Journal: j, Activity: offerFails})
	j.keep(d.Start(info, value.NewObject(0), info.StartTime))
	d.Run(context.Background())
	x := d.Execution()
	want := "ExecutionStarted TaskStateEntered ActivityScheduled ExecutionFailed"
	if got := eventTypes(x); got != want || x.Status() != interp.Failed {
		t.Fatalf("history %v (%s), want %v", got, x.Status(), want)
	}
	scheduled := -1 // the step that scheduled the task
	for i, s := range j.steps {
		for _, e := range s.Events {
			if e.Type == "ActivityScheduled" {
				scheduled = i
			}
		}
	}
	if scheduled < 0 || scheduled == len(j.steps)-1 {
		t.Fatalf("no step scheduled the task before the last: %d of %d", scheduled, len(j.steps))
	}
	for n := 1; n <= len(j.steps); n++ {
		r := engine.New(p, engine.Config{Journal: &journal{}, ActivityExists: askedNot(t)})
		if err := r.Replay(info, value.NewObject(0), j.steps[:n]); err != nil {
			t.Fatalf("replay of %d steps: %v", n, err)
		}
		if got, want := eventJSON(r.Execution()), committedJSON(j.steps[:n]); !reflect.DeepEqual(got, want) {
			t.Errorf("replay of %d steps:\n%v\nwant\n%v", n, got, want)
		}
	}
	// Resumed after the step that scheduled it, by a driver that asks:
	// the task is offered again (not asked about), and fails as before.
	j2 := &journal{}
	r := engine.New(p, engine.Config{Journal: j2, Activity: offerFails, ActivityExists: askedNot(t)})
	if err := r.Replay(info, value.NewObject(0), j.steps[:scheduled+1]); err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background())
	if got, want := eventJSON(r.Execution()), eventJSON(x); !reflect.DeepEqual(got, want) {
		t.Errorf("resumed run:\n%v\nwant\n%v", got, want)
	}
	var all []*store.Step
	all = append(all, j.steps[:scheduled+1]...)
	all = append(all, j2.steps...)
	if got, want := committedJSON(all), eventJSON(x); !reflect.DeepEqual(got, want) {
		t.Errorf("committed after the resume:\n%v\nwant\n%v", got, want)
	}
}
