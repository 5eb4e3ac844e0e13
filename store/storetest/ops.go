package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// logging checks that a state machine's loggingConfiguration is kept by
// Create and Update.
func logging(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	m := sm("logged")
	m.Logging = `{"level":"ALL"}`
	if err := s.CreateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetStateMachine(ctx, m.ARN); err != nil || got.Logging != m.Logging {
		t.Fatalf("after create: logging %q, %v; want %q", got.Logging, err, m.Logging)
	}
	m.Logging = ""
	if err := s.UpdateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetStateMachine(ctx, m.ARN); err != nil || got.Logging != "" {
		t.Fatalf("after update: logging %q, %v; want none", got.Logging, err)
	}
}

// retention checks DeleteEnded: only ended executions that stopped before
// the time given go, oldest first, limit at a time, with their steps and
// events; running ones stay whatever their age.
func retention(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	// e0..e5 end at t0+i minutes; r0 runs since t0.
	var ended []*store.Execution
	for i := 0; i < 6; i++ {
		e := exec("ret", fmt.Sprintf("e%d", i), i)
		if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 2, "RUNNING")); err != nil {
			t.Fatal(err)
		}
		end := step(e.ARN, 1, 3, 1, "SUCCEEDED")
		end.Stopped = t0.Add(time.Duration(i) * time.Minute)
		if err := s.AppendStep(ctx, end); err != nil {
			t.Fatal(err)
		}
		ended = append(ended, e)
	}
	running := exec("ret", "r0", 0)
	if err := s.CreateExecution(ctx, running, step(running.ARN, 0, 1, 2, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	// e0 ran a Map Run with one child, and was redriven: they go with it.
	run := &store.MapRun{ARN: "arn:aws:states:us-east-1:123456789012:mapRun:ret/m:1", ExecutionARN: ended[0].ARN, Status: "SUCCEEDED",
		Started: t0, Stopped: t0}
	kid := &store.ChildExecution{Execution: store.Execution{ARN: "arn:aws:states:us-east-1:123456789012:execution:ret/m:1", Name: "1",
		StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:ret/m", StateMachineName: "ret/m", Type: "STANDARD",
		Input: "{}", Status: "SUCCEEDED", Started: t0, Stopped: t0}, MapRunARN: run.ARN}
	if err := s.PutMapRuns(ctx, []*store.MapRun{run}, []*store.ChildExecution{kid}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRedrive(ctx, ended[0].ARN, store.Redrive{Count: 1, Date: t0}); err != nil {
		t.Fatal(err)
	}
	// Before t0+4m: e0..e3, two at a time, oldest first.
	before := t0.Add(4 * time.Minute)
	if n, err := s.DeleteEnded(ctx, before, 2); err != nil || n != 2 {
		t.Fatalf("DeleteEnded (limit 2) = %d, %v; want 2", n, err)
	}
	for i, e := range ended {
		_, err := s.GetExecution(ctx, e.ARN)
		if gone := errors.Is(err, store.ErrNotFound); gone != (i < 2) {
			t.Errorf("after the first batch, execution e%d: %v", i, err)
		}
	}
	if r, err := s.GetMapRun(ctx, run.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the Map Run of a deleted execution: %v, %v; want ErrNotFound", r, err)
	}
	if c, err := s.GetChildExecution(ctx, kid.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a child execution of a deleted execution: %v, %v; want ErrNotFound", c, err)
	}
	if rd, err := s.GetRedrive(ctx, ended[0].ARN); err != nil || rd.Count != 0 {
		t.Errorf("the redrive record of a deleted execution: %+v, %v; want none", rd, err)
	}
	if n, err := s.DeleteEnded(ctx, before, 10); err != nil || n != 2 {
		t.Fatalf("DeleteEnded (second batch) = %d, %v; want 2", n, err)
	}
	if n, err := s.DeleteEnded(ctx, before, 10); err != nil || n != 0 {
		t.Fatalf("DeleteEnded (nothing left) = %d, %v; want 0", n, err)
	}
	for i, e := range ended {
		_, err := s.GetExecution(ctx, e.ARN)
		gone := errors.Is(err, store.ErrNotFound)
		if gone != (i < 4) {
			t.Errorf("execution e%d: %v (deleted: %v)", i, err, gone)
		}
		evs, err := s.Events(ctx, e.ARN, 0, 10, false)
		if i < 4 && (err == nil && len(evs) > 0) {
			t.Errorf("execution e%d deleted but its history remains: %d events", i, len(evs))
		}
		if i >= 4 && (err != nil || len(evs) != 3) {
			t.Errorf("execution e%d kept: %d events, %v; want 3", i, len(evs), err)
		}
	}
	if list, _, err := s.ListExecutions(ctx, sm("ret").ARN, "", store.Page{}); err != nil || len(list) != 3 {
		t.Errorf("ListExecutions after deleting: %d, %v; want 3", len(list), err)
	}
	// A running execution is never deleted.
	if n, err := s.DeleteEnded(ctx, t0.Add(1000*time.Hour), 10); err != nil || n != 2 {
		t.Fatalf("DeleteEnded (all ended) = %d, %v; want 2", n, err)
	}
	if _, err := s.GetExecution(ctx, running.ARN); err != nil {
		t.Errorf("the running execution: %v", err)
	}
	if list, err := s.RunningExecutions(ctx); err != nil || len(list) != 1 {
		t.Errorf("RunningExecutions: %d, %v; want 1", len(list), err)
	}
	// Its name can be used again, and the new execution takes steps.
	again := exec("ret", "e0", 0)
	if err := s.CreateExecution(ctx, again, step(again.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatalf("reusing a deleted execution's name: %v", err)
	}
	if err := s.AppendStep(ctx, step(again.ARN, 1, 2, 1, "RUNNING")); err != nil {
		t.Fatalf("a step of the new execution: %v", err)
	}
}

// outbox checks the notices of status changes: queued once per execution
// and status, taken when due and then held, retried later, removed.
func outbox(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	a, b := exec("ob", "a", 0).ARN, exec("ob", "b", 1).ARN
	for _, n := range []struct{ arn, status string }{{a, "RUNNING"}, {a, "RUNNING"}, {b, "RUNNING"}, {a, "SUCCEEDED"}} {
		if err := s.AddNotice(ctx, n.arn, n.status, t0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TakeNotices(ctx, t0, time.Minute, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("TakeNotices = %d notices, %v; want 3", len(got), err)
	}
	want := []string{a + " RUNNING", b + " RUNNING", a + " SUCCEEDED"}
	for i, n := range got {
		if s := n.ExecutionARN + " " + n.Status; s != want[i] || !n.At.Equal(t0) || n.Attempts != 0 {
			t.Errorf("notice %d = %s at %v, %d attempts; want %s at %v", i, s, n.At, n.Attempts, want[i], t0)
		}
	}
	// Held: not taken again until the hold ends.
	if again, err := s.TakeNotices(ctx, t0.Add(30*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("TakeNotices while held = %d, %v; want 0", len(again), err)
	}
	if err := s.DoneNotice(ctx, got[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryNotice(ctx, got[1].ID, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	next, err := s.TakeNotices(ctx, t0.Add(10*time.Second), time.Minute, 10)
	if err != nil || len(next) != 1 || next[0].ID != got[1].ID || next[0].Attempts != 1 {
		t.Fatalf("TakeNotices after a retry = %+v, %v; want notice %d with 1 attempt", next, err, got[1].ID)
	}
	// After the hold, what is left comes back: the retried one and the one
	// whose taker never reported.
	later, err := s.TakeNotices(ctx, t0.Add(2*time.Minute), time.Minute, 1)
	if err != nil || len(later) != 1 {
		t.Fatalf("TakeNotices (limit 1) after the hold = %d, %v; want 1", len(later), err)
	}
	if err := s.DoneNotice(ctx, got[0].ID); err != nil {
		t.Errorf("DoneNotice of a notice gone: %v", err)
	}
	// The status queued again once its notice is gone is a new notice.
	if err := s.AddNotice(ctx, a, "RUNNING", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	last, err := s.TakeNotices(ctx, t0.Add(time.Hour), time.Minute, 10)
	if err != nil || len(last) != 3 || last[2].ExecutionARN != a || last[2].Status != "RUNNING" || last[2].ID == got[0].ID {
		t.Fatalf("TakeNotices at the end = %+v, %v; want the two left and a new one", last, err)
	}
}
