package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stepd/stepd/store"
)

// eager checks store.EagerCreator: a step offered before the creation is written is committed with it, one
// offered after is refused by the offer and appended by the caller, a
// creation refused as existing commits no offered step, and a step that
// does not follow the first, or comes without a first, fails the creation.
func eager(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	exec := func(name string) *store.Execution {
		return &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:sm:" + name, Name: name, StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:sm",
			StateMachineName: "sm", Type: "STANDARD", Status: "RUNNING", Input: "{}"}
	}
	step := func(e *store.Execution, seq int64, status string) *store.Step {
		st := &store.Step{ExecutionARN: e.ARN, Seq: seq, Status: status, Events: []store.Event{{ID: seq + 1, Type: "PassStateEntered", JSON: fmt.Appendf(nil, `{"seq":%d}`, seq)}}}
		if status != "RUNNING" {
			st.Output = `{"done":true}`
		}
		return st
	}
	seqs := func(e *store.Execution) []int64 {
		t.Helper()
		steps, err := s.Steps(ctx, e.ARN)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, st := range steps {
			out = append(out, st.Seq)
		}
		return out
	}

	// Offered in time: one creation, two steps, the execution's summary
	// from the second.
	a := exec("a")
	next := &store.NextStep{}
	if !next.Offer(step(a, 1, "SUCCEEDED")) {
		t.Fatal("an offer before the creation was refused")
	}
	if err := s.CreateExecutionWith(ctx, a, step(a, 0, "RUNNING"), next); err != nil {
		t.Fatal(err)
	}
	if got := seqs(a); fmt.Sprint(got) != "[0 1]" {
		t.Errorf("steps %v, want [0 1]", got)
	}
	if got, err := s.GetExecution(ctx, a.ARN); err != nil || got.Status != "SUCCEEDED" || got.Output != `{"done":true}` {
		t.Errorf("execution after a step offered with its creation: %+v, %v", got, err)
	}

	// Offered too late: the caller appends it.
	b := exec("b")
	next = &store.NextStep{}
	if err := s.CreateExecutionWith(ctx, b, step(b, 0, "RUNNING"), next); err != nil {
		t.Fatal(err)
	}
	if next.Offer(step(b, 1, "RUNNING")) {
		t.Fatal("an offer after the creation was written was taken")
	}
	if got := seqs(b); fmt.Sprint(got) != "[0]" {
		t.Errorf("steps %v, want [0]", got)
	}
	if err := s.AppendStep(ctx, step(b, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}

	// Refused as existing: the existing execution (next step 2) gains no
	// step, even one whose number would fit it.
	next = &store.NextStep{}
	next.Offer(step(b, 2, "FAILED"))
	if err := s.CreateExecutionWith(ctx, b, step(b, 0, "RUNNING"), next); !errors.Is(err, store.ErrExists) {
		t.Fatalf("creating an existing execution: %v, want ErrExists", err)
	}
	if got := seqs(b); fmt.Sprint(got) != "[0 1]" {
		t.Errorf("steps of the existing execution %v, want [0 1]", got)
	}

	// A step that does not follow the first fails the creation whole.
	c := exec("c")
	next = &store.NextStep{}
	next.Offer(step(c, 2, "RUNNING"))
	if err := s.CreateExecutionWith(ctx, c, step(c, 0, "RUNNING"), next); err == nil {
		t.Fatal("a creation with step 2 after step 0 succeeded")
	}
	if _, err := s.GetExecution(ctx, c.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("execution of a failed creation: %v, want ErrNotFound", err)
	}

	// A next step without a first is refused, and creates nothing.
	d := exec("d")
	next = &store.NextStep{}
	next.Offer(step(d, 1, "RUNNING"))
	if err := s.CreateExecutionWith(ctx, d, nil, next); err == nil {
		t.Fatal("a creation with a next step and no first succeeded")
	}
	if _, err := s.GetExecution(ctx, d.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("execution of a refused creation: %v, want ErrNotFound", err)
	}
}
