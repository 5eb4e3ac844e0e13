package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

func TestBounded(t *testing.T) {
	ctx := context.Background()
	const keep, n = 3, 5000
	s := NewBounded(keep)
	sm := "arn:aws:states:us-east-1:1:stateMachine:m"
	arn := func(i int) string { return fmt.Sprintf("arn:aws:states:us-east-1:1:express:m:e%d:id", i) }
	step := func(i int, seq int64, status string) *store.Step {
		return &store.Step{ExecutionARN: arn(i), Seq: seq, At: time.Unix(int64(i), 0), Status: status,
			Events: []store.Event{{ID: seq + 1, Type: "X", JSON: []byte(`{}`)}}}
	}
	for i := range n {
		e := &store.Execution{ARN: arn(i), Name: fmt.Sprint(i), StateMachineARN: sm, Type: "EXPRESS", Status: "RUNNING"}
		if err := s.CreateExecution(ctx, e, step(i, 0, "RUNNING")); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			continue // stays running
		}
		if err := s.AppendStep(ctx, step(i, 1, "SUCCEEDED")); err != nil {
			t.Fatal(err)
		}
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil || len(running) != n/10 {
		t.Fatalf("running: %d %v, want %d (running executions are never forgotten)", len(running), err, n/10)
	}
	list, _, err := s.ListExecutions(ctx, sm, "", store.Page{Limit: 1000})
	if err != nil || len(list) != n/10+keep {
		t.Fatalf("listed %d %v, want %d running and %d finished", len(list), err, n/10, keep)
	}
	for _, i := range []int{n - 1, n - 2, n - 3} {
		if _, err := s.GetExecution(ctx, arn(i)); err != nil {
			t.Errorf("a recent finished execution %d: %v", i, err)
		}
		if steps, err := s.Steps(ctx, arn(i)); err != nil || len(steps) != 2 {
			t.Errorf("the steps of %d: %d %v", i, len(steps), err)
		}
	}
	for _, i := range []int{1, n - 4} {
		if _, err := s.GetExecution(ctx, arn(i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an old finished execution %d: %v, want ErrNotFound", i, err)
		}
		if err := s.AppendStep(ctx, step(i, 2, "SUCCEEDED")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a step of a forgotten execution %d: %v", i, err)
		}
	}
	if len(s.order) > 2*(n/10+keep)+2048 || len(s.finished)-s.head != keep {
		t.Errorf("the store still holds %d executions in order and %d finished", len(s.order), len(s.finished)-s.head)
	}
	if New().keep != 0 {
		t.Error("New bounds the store")
	}
}
