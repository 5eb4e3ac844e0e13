package interp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// drive answers the commands of an execution with inv until it stops.
func drive(x *interp.Execution, cmds []interp.Command, now time.Time, inv task.InvokerFunc) {
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = cmds[1:]
		switch c.Kind {
		case interp.Invoke:
			cmds = append(cmds, x.Step(now, interp.Input{Kind: interp.TaskDone, ID: c.ID, Result: inv(context.Background(), c.Request)})...)
		case interp.StartTimer:
			cmds = append(cmds, x.Step(now, interp.Input{Kind: interp.TimerFired, ID: c.ID})...)
		}
	}
}

func types(x *interp.Execution, from int) string {
	var b []string
	for _, e := range x.History()[from:] {
		b = append(b, e.Type)
	}
	return strings.Join(b, " ")
}

// TestRedrive fails an execution in one Parallel branch and in one
// Distributed Map iteration (each a task that fails the first time it is
// called for that item) and redrives it: only the failed branch and the
// failed child execution run again, the Map Run is redriven (same ARN),
// and the execution succeeds with every result.
func TestRedrive(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"P","States":{
		"P":{"Type":"Parallel","Branches":[
			{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"a","End":true}}},
			{"StartAt":"B","States":{"B":{"Type":"Task","Resource":"b","End":true}}}],"ResultPath":"$.p","Next":"M"},
		"M":{"Type":"Map","ItemsPath":"$.items","ResultPath":"$.m","End":true,
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"T","States":{"T":{"Type":"Task","Resource":"t","End":true}}}}}}`)
	calls := map[string]int{}
	fail := true
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		key := req.Resource + value.String(req.Input)
		calls[key]++
		if fail && (req.Resource == "b" || value.String(req.Input) == "2") {
			return task.Result{Error: "Boom", Cause: key}
		}
		return task.Result{Output: req.Resource}
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: true, StartTime: now}
	in, _ := value.ParseString(`{"items":[1,2,3]}`)
	x, cmds := p.Start(info, in, now)
	drive(x, cmds, now, inv)
	if x.Status() != interp.Failed {
		t.Fatalf("first attempt: %s", x.Status())
	}
	// The Parallel fails in branch B; redriven, only B runs again.
	fail = false
	n := len(x.History())
	drive(x, x.Step(now, interp.Input{Kind: interp.Redrive}), now, inv)
	if x.Status() != interp.Succeeded {
		t.Fatalf("after the redrive: %s %+v\n%s", x.Status(), x.Failure(), types(x, n))
	}
	if got := types(x, n); !strings.HasPrefix(got, "ExecutionRedriven TaskStateEntered TaskScheduled") || strings.Contains(got, "PassStateEntered") {
		t.Errorf("redriven history: %s", got)
	}
	// A second run of the same kind: now the Map fails on item 2.
	fail = true
	calls = map[string]int{}
	x, cmds = p.Start(info, in, now)
	drive(x, cmds, now, task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		if req.Resource == "b" {
			return task.Result{Output: "b"}
		}
		return inv(ctx, req)
	}))
	if x.Status() != interp.Failed || calls["t1"] != 1 || calls["t2"] != 1 {
		t.Fatalf("the Map's first attempt: %s %v", x.Status(), calls)
	}
	runs, kids := x.TakeMapRuns()
	if len(runs) != 1 || runs[0].Status != "FAILED" {
		t.Fatalf("map runs %+v", runs)
	}
	runArn := runs[0].ARN
	var failedChild string
	for _, k := range kids {
		if k.Status == interp.Failed {
			failedChild = k.ARN
		}
	}
	fail = false
	n = len(x.History())
	drive(x, x.Step(now, interp.Input{Kind: interp.Redrive}), now, inv)
	if x.Status() != interp.Succeeded {
		t.Fatalf("Map after the redrive: %s %+v\n%s", x.Status(), x.Failure(), types(x, n))
	}
	if got := types(x, n); got != "ExecutionRedriven MapRunRedriven MapRunSucceeded MapStateSucceeded MapStateExited ExecutionSucceeded" {
		t.Errorf("redriven history: %s", got)
	}
	if calls["t1"] != 1 || calls["t2"] != 2 {
		t.Errorf("calls %v: the succeeded iterations ran again or the failed one did not", calls)
	}
	if out := value.String(x.Output()); !strings.Contains(out, `"m":["t","t","t"]`) {
		t.Errorf("output %s", out)
	}
	runs, kids = x.TakeMapRuns()
	if len(runs) != 1 || runs[0].ARN != runArn || runs[0].Status != "SUCCEEDED" || runs[0].RedriveCount != 1 || runs[0].Executions.Succeeded != 3 || runs[0].Executions.Failed != 0 || runs[0].Executions.PendingRedrive != 0 {
		t.Errorf("redriven map run %+v", runs)
	}
	for _, k := range kids {
		if k.ARN != failedChild {
			continue
		}
		var h []string
		for _, e := range k.Events {
			h = append(h, e.Type)
		}
		if got := strings.Join(h, " "); k.Status != interp.Succeeded || got != "ExecutionRedriven TaskStateEntered TaskScheduled TaskStarted TaskSucceeded TaskStateExited ExecutionSucceeded" {
			t.Errorf("redriven child %s: %s", k.Status, got)
		}
	}
	if c, _ := x.RedriveCount(); c != 1 {
		t.Errorf("redrive count %d", c)
	}
	// A succeeded execution is not redriven.
	if cmds := x.Step(now, interp.Input{Kind: interp.Redrive}); cmds != nil || x.Status() != interp.Succeeded {
		t.Error("a succeeded execution was redriven")
	}
}
