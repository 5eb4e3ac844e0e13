package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

const mapRunDef = `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"L","ItemsPath":"$.items","ToleratedFailureCount":%d,%s
	"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[{"Variable":"$.fail","BooleanEquals":true,"Next":"F"}],"Default":"P"},
		"F":{"Type":"Fail","Error":"Bad","Cause":"item"},
		"P":{"Type":"Pass","End":true}}},"End":true}}}`

func childHistory(k *interp.ChildExecution) string {
	var b []string
	for _, e := range k.Events {
		b = append(b, fmt.Sprintf("%d<%d %s", e.ID, e.PreviousEventID, e.Type))
	}
	return strings.Join(b, ", ")
}

// TestMapRunChildren runs a Distributed Map whose second item fails: each
// item is a child execution with its own history, ARN and status, and the
// Map Run's counts follow them; within the tolerance the run succeeds,
// beyond it it fails and the children still running are aborted.
func TestMapRunChildren(t *testing.T) {
	t.Parallel()
	in, _ := value.ParseString(`{"items":[{"fail":false},{"fail":true},{"fail":false}]}`)
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: true,
		Region: "us-east-1", Account: "123456789012", StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		tolerated, conc                     int
		status                              interp.Status
		run                                 string
		succeeded, failed, aborted, pending int64
		events                              string
	}{
		{1, 0, interp.Succeeded, "SUCCEEDED", 2, 1, 0, 0, "MapRunStarted MapRunSucceeded MapStateSucceeded MapStateExited"},
		// The three run interleaved: the failure aborts the other two.
		{0, 0, interp.Failed, "FAILED", 0, 1, 2, 0, "MapRunStarted MapRunFailed MapStateFailed"},
		{0, 1, interp.Failed, "FAILED", 1, 1, 0, 1, "MapRunStarted MapRunFailed MapStateFailed"},
	} {
		conc := ""
		if tc.conc > 0 {
			conc = fmt.Sprintf(`"MaxConcurrency":%d,`, tc.conc)
		}
		p := compile(t, fmt.Sprintf(mapRunDef, tc.tolerated, conc))
		x := engine.Run(context.Background(), p, info, in, engine.Config{})
		if x.Status() != tc.status {
			t.Fatalf("tolerated %d: status %s, want %s (%+v)", tc.tolerated, x.Status(), tc.status, x.Failure())
		}
		var parent []string
		for _, e := range x.History() {
			if strings.HasPrefix(e.Type, "MapRun") || strings.HasPrefix(e.Type, "MapState") && e.Type != "MapStateEntered" && e.Type != "MapStateStarted" {
				parent = append(parent, e.Type)
			}
			if strings.HasPrefix(e.Type, "MapIteration") {
				t.Errorf("a Distributed Map's parent history has %s", e.Type)
			}
		}
		if got := strings.Join(parent, " "); got != tc.events {
			t.Errorf("tolerated %d: parent's Map events %q, want %q", tc.tolerated, got, tc.events)
		}
		runs, kids := x.TakeMapRuns()
		if len(runs) != 1 {
			t.Fatalf("%d map runs", len(runs))
		}
		r := runs[0]
		if !strings.HasPrefix(r.ARN, "arn:aws:states:us-east-1:123456789012:mapRun:sm/L:") || r.Status != tc.run || r.Executions.Total != 3 ||
			r.Executions.Succeeded != tc.succeeded || r.Executions.Failed != tc.failed || r.Executions.Aborted != tc.aborted ||
			r.Executions.Pending != tc.pending || r.Executions.Running != 0 || r.Items != r.Executions ||
			r.ToleratedFailureCount != int64(tc.tolerated) || r.MaxConcurrency != tc.conc {
			t.Errorf("tolerated %d conc %d: map run %+v", tc.tolerated, tc.conc, *r)
		}
		if int64(len(kids)) != 3-tc.pending {
			t.Fatalf("%d children", len(kids))
		}
		for _, k := range kids {
			if k.MapRunARN != r.ARN || !strings.HasPrefix(k.ARN, "arn:aws:states:us-east-1:123456789012:execution:sm/L:") ||
				k.StateMachineARN != "arn:aws:states:us-east-1:123456789012:stateMachine:sm/L" || !strings.HasSuffix(k.ARN, ":"+k.Name) {
				t.Errorf("child %+v", *k)
			}
			h := childHistory(k)
			var want string
			switch {
			case k.Status == interp.Succeeded:
				want = "1<0 ExecutionStarted, 2<0 ChoiceStateEntered, 3<2 ChoiceStateExited, 4<3 PassStateEntered, 5<4 PassStateExited, 6<5 ExecutionSucceeded"
			case k.Status == interp.Failed:
				want = "1<0 ExecutionStarted, 2<0 ChoiceStateEntered, 3<2 ChoiceStateExited, 4<3 FailStateEntered, 5<4 ExecutionFailed"
				if k.Failure == nil || k.Failure.Error != "Bad" {
					t.Errorf("failed child's failure %+v", k.Failure)
				}
			case k.Status == interp.Aborted:
				if !strings.HasPrefix(h, "1<0 ExecutionStarted") || !strings.HasSuffix(h, "ExecutionAborted") {
					t.Errorf("aborted child's history %s", h)
				}
				continue
			default:
				t.Errorf("child status %s", k.Status)
			}
			if h != want {
				t.Errorf("%s child's history:\n%s\nwant\n%s", k.Status, h, want)
			}
		}
		if again, kids := x.TakeMapRuns(); len(again) != 0 || len(kids) != 0 {
			t.Errorf("TakeMapRuns again: %d %d", len(again), len(kids))
		}
	}
}

// pendingInvokes keeps the task invocations a driver has not answered,
// by their input.
type pendingInvokes map[string]interp.Command

func (p pendingInvokes) add(cmds []interp.Command) (timers []interp.Command) {
	for _, c := range cmds {
		switch c.Kind {
		case interp.Invoke:
			p[value.String(c.Request.Input)] = c
		case interp.StartTimer:
			timers = append(timers, c)
		}
	}
	return timers
}

func (p pendingInvokes) answer(t *testing.T, x *interp.Execution, now time.Time, input string, res task.Result) []interp.Command {
	t.Helper()
	c, ok := p[input]
	if !ok {
		t.Fatalf("no task for %s; pending %v", input, p)
	}
	delete(p, input)
	return x.Step(now, interp.Input{Kind: interp.TaskDone, ID: c.ID, Result: res})
}

// TestMapRunCounts: with an ItemBatcher the Map Run counts child
// executions in Executions and their items in Items (AWS's
// MapRunExecutionCounts and MapRunItemCounts); a child whose
// ItemProcessor TimeoutSeconds elapses is TIMED_OUT (its history ends
// with ExecutionTimedOut and it counts as a failure); the Map Run
// succeeds within its tolerance and its failures are then never
// redriven (failuresNotRedrivable).
func TestMapRunCounts(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ToleratedFailureCount":2,
		"ItemBatcher":{"MaxItemsPerBatch":2},"End":true,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"TimeoutSeconds":10,
			"StartAt":"T","States":{"T":{"Type":"Task","Resource":"t","End":true}}}}}}`)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: true, StartTime: now}
	in, _ := value.ParseString(`{"items":[1,2,3,4,5]}`)
	x, cmds := p.Start(info, in, now)
	inv := pendingInvokes{}
	timers := inv.add(cmds)
	if len(inv) != 3 || len(timers) != 3 {
		t.Fatalf("%d tasks and %d timers for three batches", len(inv), len(timers))
	}
	runs, first := x.TakeMapRuns()
	if r := runs[0]; r.Executions.Total != 3 || r.Executions.Running != 3 || r.Items.Total != 5 || r.Items.Running != 5 {
		t.Fatalf("map run at the start %+v", *r)
	}
	inv.add(inv.answer(t, x, now, `{"Items":[1,2]}`, task.Result{Output: `"ok"`}))
	inv.add(inv.answer(t, x, now, `{"Items":[3,4]}`, task.Result{Error: "Boom"}))
	// The last batch's task never answers: its child execution times out
	// (the other two timers were cancelled when their children ended).
	later := now.Add(10 * time.Second)
	for _, tm := range timers {
		inv.add(x.Step(later, interp.Input{Kind: interp.TimerFired, ID: tm.ID}))
	}
	if x.Status() != interp.Succeeded {
		t.Fatalf("status %s %+v", x.Status(), x.Failure())
	}
	runs, kids := x.TakeMapRuns()
	r := runs[0]
	// No ResultWriter: a Map Run that succeeds writes its children's
	// results into the state's output.
	wantExec := interp.MapRunCounts{Succeeded: 1, Failed: 1, TimedOut: 1, Total: 3, ResultsWritten: 3, FailuresNotRedrivable: 2}
	wantItems := interp.MapRunCounts{Succeeded: 2, Failed: 2, TimedOut: 1, Total: 5, ResultsWritten: 5, FailuresNotRedrivable: 3}
	if r.Status != "SUCCEEDED" || r.Executions != wantExec || r.Items != wantItems {
		t.Errorf("map run %s\nexecutions %+v\nwant       %+v\nitems %+v\nwant  %+v", r.Status, r.Executions, wantExec, r.Items, wantItems)
	}
	var timedOut *interp.ChildExecution
	for _, k := range kids {
		if k.Status == interp.TimedOut {
			timedOut = k
		}
	}
	if timedOut == nil || timedOut.Failure == nil || timedOut.Failure.Error != "States.Timeout" || !timedOut.Stop.Equal(later) {
		t.Fatalf("the timed-out child %+v", timedOut)
	}
	for _, k := range first {
		if k.ARN == timedOut.ARN {
			timedOut.Events = append(k.Events, timedOut.Events...)
		}
	}
	if h := childHistory(timedOut); h != "1<0 ExecutionStarted, 2<0 TaskStateEntered, 3<2 TaskScheduled, 4<3 TaskStarted, 5<4 ExecutionTimedOut" {
		t.Errorf("the timed-out child's history: %s", h)
	}
}

// TestMapRunPendingRedrive: a redriven Map Run counts the unsuccessful
// children waiting to run again as pendingRedrive (they leave failed and
// aborted), and those it restarts as running.
func TestMapRunPendingRedrive(t *testing.T) {
	t.Parallel()
	p := compile(t, `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ToleratedFailureCount":1,"MaxConcurrency":2,"End":true,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
			"StartAt":"T","States":{"T":{"Type":"Task","Resource":"t","End":true}}}}}}`)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: true, StartTime: now}
	in, _ := value.ParseString(`{"items":[1,2,3,4]}`)
	x, cmds := p.Start(info, in, now)
	inv := pendingInvokes{}
	inv.add(cmds)
	inv.add(inv.answer(t, x, now, "1", task.Result{Error: "Boom"})) // tolerated: 3 starts
	inv.add(inv.answer(t, x, now, "2", task.Result{Error: "Boom"})) // the Map Run fails: 3 is aborted, 4 never starts
	if x.Status() != interp.Failed {
		t.Fatalf("status %s", x.Status())
	}
	runs, _ := x.TakeMapRuns()
	want := interp.MapRunCounts{Pending: 1, Failed: 2, Aborted: 1, Total: 4}
	if r := runs[0]; r.Status != "FAILED" || r.Executions != want || r.Items != want {
		t.Fatalf("failed map run %s %+v, want %+v", r.Status, r.Executions, want)
	}
	clear(inv)
	inv.add(x.Step(now, interp.Input{Kind: interp.Redrive}))
	runs, _ = x.TakeMapRuns()
	want = interp.MapRunCounts{Pending: 1, Running: 2, PendingRedrive: 1, Total: 4}
	if r := runs[0]; r.Status != "RUNNING" || r.Executions != want || r.Items != want || len(inv) != 2 {
		t.Fatalf("redriven map run %s %+v, want %+v (%d tasks)", r.Status, r.Executions, want, len(inv))
	}
	for len(inv) > 0 {
		for in := range inv {
			inv.add(inv.answer(t, x, now, in, task.Result{Output: `"ok"`}))
			break
		}
	}
	runs, _ = x.TakeMapRuns()
	want = interp.MapRunCounts{Succeeded: 4, Total: 4, ResultsWritten: 4}
	if r := runs[0]; x.Status() != interp.Succeeded || r.Status != "SUCCEEDED" || r.Executions != want {
		t.Errorf("%s: map run %s %+v, want %+v", x.Status(), r.Status, r.Executions, want)
	}
}
