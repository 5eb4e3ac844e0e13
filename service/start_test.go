package service_test

import (
	"context"
	"testing"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
)

// stepGate holds every AppendStep until the gate opens.
type stepGate struct {
	store.Store
	gate chan struct{}
}

func (g *stepGate) AppendStep(ctx context.Context, s *store.Step) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.AppendStep(ctx, s)
}

// TestStartCommitsBeforeTheFirstState: StartExecution commits
// ExecutionStarted alone and answers; the first state runs in a step of
// its own, after it. While that step cannot commit, the execution is
// RUNNING, its history is ExecutionStarted, and StopExecution finds it.
func TestStartCommitsBeforeTheFirstState(t *testing.T) {
	ctx := context.Background()
	st := &stepGate{Store: memory.New(), gate: make(chan struct{})}
	svc := service.New(service.Config{Store: st})
	defer svc.Close()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "m", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% $states.input.n * 2 %}","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "e", Input: `{"n":21}`})
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.DescribeExecution(ctx, e.ARN)
	if err != nil || d.Status != "RUNNING" {
		t.Fatalf("DescribeExecution after StartExecution: %+v %v, want RUNNING", d, err)
	}
	evs, _, err := svc.History(ctx, e.ARN, "", 0, false)
	if err != nil || len(evs) != 1 || evs[0].Type != "ExecutionStarted" {
		t.Fatalf("history after StartExecution: %d events %v, want ExecutionStarted alone", len(evs), err)
	}
	close(st.gate)
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" || done.Output != "42" {
		t.Fatalf("the execution: %+v %v", done, err)
	}
	evs, _, err = svc.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"}
	if len(evs) != len(want) {
		t.Fatalf("history: %d events, want %v", len(evs), want)
	}
	for i, ev := range evs {
		if ev.Type != want[i] || ev.ID != int64(i+1) {
			t.Fatalf("event %d: %s id %d, want %s id %d", i, ev.Type, ev.ID, want[i], i+1)
		}
	}
}
