package engine

import (
	"context"
	"testing"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
)

// TestRoutesByPattern: the driver routes a task by its request's Pattern,
// never by its Resource: an activity goes to Config.Activity and a .sync
// job's request gets a Submit, whatever the resource says.
func TestRoutesByPattern(t *testing.T) {
	type invoked struct {
		id     string
		submit bool
	}
	got := make(chan invoked, 8)
	inv := task.InvokerFunc(func(_ context.Context, req *task.Request) task.Result {
		got <- invoked{req.StateName, req.Submit != nil}
		if req.Submit != nil {
			req.Submit("started")
		}
		return task.Result{Output: "done"}
	})
	var offered []string
	d := New(nil, Config{Invoker: inv, Clock: RealClock{}, Activity: func(_ *Driver, _ int64, req *task.Request) {
		offered = append(offered, req.StateName)
	}})
	reqs := []*task.Request{
		{StateName: "activity", Resource: "work", Pattern: task.Activity, TaskToken: "t1"},
		{StateName: "callback", Resource: "arn:aws:states:us-east-1:123456789012:activity:a", Pattern: task.WaitForTaskToken, TaskToken: "t2"},
		{StateName: "sync", Resource: "job", Pattern: task.Sync},
		{StateName: "sync2", Resource: "job", Pattern: task.Sync2},
		{StateName: "plain", Resource: "arn:aws:states:::ecs:runTask.sync"},
	}
	cmds := make([]interp.Command, len(reqs))
	for i, r := range reqs {
		cmds[i] = interp.Command{Kind: interp.Invoke, ID: int64(i + 1), Request: r}
	}
	d.apply(context.Background(), cmds)
	d.running.Wait()
	close(got)

	if len(offered) != 1 || offered[0] != "activity" {
		t.Errorf("offered to activity workers: %v, want [activity]", offered)
	}
	want := map[string]bool{"callback": false, "sync": true, "sync2": true, "plain": false}
	for i := range got {
		if w, ok := want[i.id]; !ok || w != i.submit {
			t.Errorf("%s invoked with Submit %v, want it invoked: %v, with Submit: %v", i.id, i.submit, ok, w)
		}
		delete(want, i.id)
	}
	if len(want) > 0 {
		t.Errorf("not invoked: %v", want)
	}
	// Each .sync job's Submit recorded TaskSubmitted, and the task went on.
	submitted := map[int64]bool{}
	for len(d.events) > 0 {
		ev := <-d.events
		if ev.kind == interp.TaskSubmitted {
			if !ev.more {
				t.Errorf("task %d: TaskSubmitted that ends it", ev.id)
			}
			submitted[ev.id] = true
		}
	}
	if len(submitted) != 2 || !submitted[3] || !submitted[4] {
		t.Errorf("TaskSubmitted for tasks %v, want 3 and 4", submitted)
	}
	if d.tokens["t1"] != 1 || d.tokens["t2"] != 2 {
		t.Errorf("tokens %v", d.tokens)
	}
}
