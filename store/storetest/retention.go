package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

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
