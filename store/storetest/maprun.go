package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// mapRuns checks store.MapRunStore: Map Runs replaced in place, child
// executions with their events added once (a replay writes them again),
// lists newest first with pages and a status filter, redrive records;
// durable stores also after a reopen (reopen nil: not durable).
func mapRuns(t *testing.T, s store.Store, reopen func() store.Store) {
	ctx := context.Background()
	defer func() { s.Close() }()
	parent := "arn:aws:states:us-east-1:1:execution:p:e"
	runARN := func(i int) string { return fmt.Sprintf("arn:aws:states:us-east-1:1:mapRun:p/M:%d", i) }
	run := &store.MapRun{ARN: runARN(1), ExecutionARN: parent, Status: "RUNNING", Started: t0, MaxConcurrency: 5,
		ToleratedFailureCount: 2, ToleratedFailurePercentage: 12.5, Items: store.MapRunCounts{Running: 3, Total: 3}, Executions: store.MapRunCounts{Running: 3, Total: 3}}
	childARN := func(i int) string { return fmt.Sprintf("arn:aws:states:us-east-1:1:execution:p/M:c%d", i) }
	var children []*store.ChildExecution
	for i := range 3 {
		c := &store.ChildExecution{MapRunARN: run.ARN, Execution: store.Execution{ARN: childARN(i), Name: fmt.Sprintf("c%d", i),
			StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:p/M", StateMachineName: "p/M", Type: "STANDARD",
			Input: fmt.Sprintf(`{"i":%d}`, i), Status: "RUNNING", Started: t0.Add(time.Duration(i) * time.Millisecond)}}
		c.Events = []store.Event{{ID: 1, Type: "ExecutionStarted", JSON: []byte(fmt.Sprintf(`{"id":1,"c":%d}`, i))}}
		children = append(children, c)
	}
	if err := s.PutMapRuns(ctx, []*store.MapRun{run}, children); err != nil {
		t.Fatal(err)
	}
	// The child ends: its summary changes and two events are added; the
	// first event comes again (a replay) and is kept once.
	done := *children[1]
	done.Status, done.Output, done.Stopped = "SUCCEEDED", `{"ok":1}`, t0.Add(time.Second)
	done.Events = []store.Event{{ID: 1, Type: "ExecutionStarted", JSON: []byte(`{"id":1,"c":"again"}`)},
		{ID: 2, Type: "PassStateEntered", JSON: []byte(`{"id":2}`)}, {ID: 3, Type: "ExecutionSucceeded", JSON: []byte(`{"id":3}`)}}
	failed := *children[2]
	failed.Status, failed.Error, failed.Cause, failed.Stopped, failed.Events = "FAILED", "E", "C", t0.Add(2*time.Second), nil
	run2 := *run
	// Every counter, and items apart from child executions (batches).
	run2.Executions = store.MapRunCounts{Pending: 1, Running: 2, Succeeded: 3, Failed: 4, TimedOut: 5, Aborted: 6, Total: 7, ResultsWritten: 8,
		FailuresNotRedrivable: 9, PendingRedrive: 10}
	run2.Items = store.MapRunCounts{Pending: 11, Running: 12, Succeeded: 13, Failed: 14, TimedOut: 15, Aborted: 16, Total: 17, ResultsWritten: 18,
		FailuresNotRedrivable: 19, PendingRedrive: 20}
	run2.MaxConcurrency, run2.RedriveCount, run2.RedriveDate = 7, 1, t0.Add(time.Minute)
	if err := s.PutMapRuns(ctx, []*store.MapRun{&run2}, []*store.ChildExecution{&done, &failed}); err != nil {
		t.Fatal(err)
	}
	other := &store.MapRun{ARN: runARN(2), ExecutionARN: parent, Status: "SUCCEEDED", Started: t0.Add(time.Hour), Stopped: t0.Add(2 * time.Hour)}
	if err := s.PutMapRuns(ctx, []*store.MapRun{other}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRedrive(ctx, parent, store.Redrive{Count: 2, Date: t0.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}

	check := func(when string) {
		t.Helper()
		got, err := s.GetMapRun(ctx, run.ARN)
		if err != nil {
			t.Fatalf("%s: GetMapRun: %v", when, err)
		}
		if got.ARN != run2.ARN || got.ExecutionARN != parent || got.Status != "RUNNING" || !got.Started.Equal(t0) || !got.Stopped.IsZero() ||
			got.MaxConcurrency != 7 || got.ToleratedFailureCount != 2 || got.ToleratedFailurePercentage != 12.5 || got.Items != run2.Items ||
			got.Executions != run2.Executions || got.RedriveCount != 1 || !got.RedriveDate.Equal(run2.RedriveDate) {
			t.Errorf("%s: map run %+v, want %+v", when, got, run2)
		}
		if _, err := s.GetMapRun(ctx, runARN(9)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: a missing map run: %v, want ErrNotFound", when, err)
		}
		keys := walk(t, 1, func(r *store.MapRun) string { return r.ARN }, func(p store.Page) ([]*store.MapRun, string, error) {
			return s.ListMapRuns(ctx, parent, p)
		})
		if fmt.Sprint(keys) != fmt.Sprint([]string{runARN(2), runARN(1)}) {
			t.Errorf("%s: ListMapRuns %v", when, keys)
		}
		if list, _, err := s.ListMapRuns(ctx, parent+"x", store.Page{}); err != nil || len(list) != 0 {
			t.Errorf("%s: ListMapRuns of another execution: %d %v", when, len(list), err)
		}
		c, err := s.GetChildExecution(ctx, childARN(1))
		if err != nil {
			t.Fatalf("%s: GetChildExecution: %v", when, err)
		}
		if c.MapRunARN != run.ARN || c.Status != "SUCCEEDED" || c.Output != `{"ok":1}` || c.Input != `{"i":1}` || c.Name != "c1" ||
			c.StateMachineARN != done.StateMachineARN || c.Type != "STANDARD" || !c.Started.Equal(done.Started) || !c.Stopped.Equal(done.Stopped) {
			t.Errorf("%s: child %+v", when, c)
		}
		if c, err := s.GetChildExecution(ctx, childARN(2)); err != nil || c.Error != "E" || c.Cause != "C" || c.Status != "FAILED" {
			t.Errorf("%s: failed child %+v %v", when, c, err)
		}
		if _, err := s.GetChildExecution(ctx, childARN(9)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: a missing child: %v", when, err)
		}
		keys = walk(t, 2, func(c *store.ChildExecution) string { return c.Name }, func(p store.Page) ([]*store.ChildExecution, string, error) {
			return s.ListChildExecutions(ctx, run.ARN, "", p)
		})
		if fmt.Sprint(keys) != "[c2 c1 c0]" {
			t.Errorf("%s: ListChildExecutions %v", when, keys)
		}
		if list, _, err := s.ListChildExecutions(ctx, run.ARN, "FAILED", store.Page{}); err != nil || len(list) != 1 || list[0].Name != "c2" {
			t.Errorf("%s: ListChildExecutions FAILED: %v", when, err)
		}
		evs, err := s.ChildEvents(ctx, childARN(1), 0, 100, false)
		if err != nil || len(evs) != 3 || string(evs[0].JSON) != `{"id":1,"c":1}` || evs[2].Type != "ExecutionSucceeded" {
			t.Errorf("%s: child events %+v %v", when, evs, err)
		}
		if evs, err := s.ChildEvents(ctx, childARN(1), 0, 2, true); err != nil || len(evs) != 2 || evs[0].ID != 3 || evs[1].ID != 2 {
			t.Errorf("%s: child events reversed %+v %v", when, evs, err)
		}
		if evs, err := s.ChildEvents(ctx, childARN(1), 1, 1, false); err != nil || len(evs) != 1 || evs[0].ID != 2 {
			t.Errorf("%s: child events after 1 %+v %v", when, evs, err)
		}
		if r, err := s.GetRedrive(ctx, parent); err != nil || r.Count != 2 || !r.Date.Equal(t0.Add(3*time.Minute)) {
			t.Errorf("%s: redrive %+v %v", when, r, err)
		}
		if r, err := s.GetRedrive(ctx, parent+"x"); err != nil || r.Count != 0 || !r.Date.IsZero() {
			t.Errorf("%s: redrive of another %+v %v", when, r, err)
		}
		if rs, err := s.GetRedrives(ctx, []string{parent + "x", parent}); err != nil || len(rs) != 1 || rs[parent].Count != 2 || !rs[parent].Date.Equal(t0.Add(3*time.Minute)) {
			t.Errorf("%s: redrives of a page %+v %v", when, rs, err)
		}
		if rs, err := s.GetRedrives(ctx, nil); err != nil || len(rs) != 0 {
			t.Errorf("%s: redrives of no execution %+v %v", when, rs, err)
		}
	}
	check("written")
	if reopen != nil {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen()
		check("after reopen")
	}
}

// redriven checks what a redrive needs of a store: a step appended after
// an execution's final one (the redrive's) makes it RUNNING again, with
// no stop date, output or error, and lists it among the running ones; its
// next final step ends it again.
func redriven(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	e := exec("r", "e", 1)
	if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	failed := step(e.ARN, 1, 2, 1, "FAILED")
	failed.Output, failed.Error, failed.Cause = "", "E", "C"
	if err := s.AppendStep(ctx, failed); err != nil {
		t.Fatal(err)
	}
	again := step(e.ARN, 2, 3, 2, "RUNNING")
	again.Wake = time.Time{}
	if err := s.AppendStep(ctx, again); err != nil {
		t.Fatalf("a step after the final one: %v", err)
	}
	got, err := s.GetExecution(ctx, e.ARN)
	if err != nil || got.Status != "RUNNING" || !got.Stopped.IsZero() || got.Error != "" || got.Cause != "" || got.Output != "" {
		t.Fatalf("redriven execution %+v %v", got, err)
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil || len(running) != 1 || running[0].ARN != e.ARN {
		t.Fatalf("running after the redrive: %v %v", names(running), err)
	}
	n := 0
	if err := s.ScanRunning(ctx, func(x *store.Execution, steps []*store.Step) error {
		n++
		if len(steps) != 3 {
			t.Errorf("ScanRunning gave %d steps of the redriven execution, want 3", len(steps))
		}
		return nil
	}); err != nil || n != 1 {
		t.Fatalf("ScanRunning: %d %v", n, err)
	}
	if list, _, err := s.ListExecutions(ctx, e.StateMachineARN, "RUNNING", store.Page{}); err != nil || len(list) != 1 {
		t.Errorf("ListExecutions RUNNING after the redrive: %v %v", names(list), err)
	}
	if err := s.AppendStep(ctx, step(e.ARN, 3, 5, 1, "SUCCEEDED")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetExecution(ctx, e.ARN); err != nil || got.Status != "SUCCEEDED" || got.Stopped.IsZero() {
		t.Fatalf("ended again %+v %v", got, err)
	}
	if evs, err := s.Events(ctx, e.ARN, 0, 100, false); err != nil || len(evs) != 5 {
		t.Errorf("events of the redriven execution: %d %v", len(evs), err)
	}
}
