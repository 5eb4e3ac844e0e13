package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
)

// TestRedriveAcrossRestart fails an execution in one Parallel branch (an
// activity whose worker fails it) on SQLite, redrives it, stops the
// service while the redriven branch waits for its worker, and finishes it
// on a new service over the same file: only the failed branch ran again,
// the redrive is counted and dated, and the execution is not redrivable
// once it succeeded.
func TestRedriveAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(`{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
		{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"a","End":true}}},
		{"StartAt":"B","States":{"B":{"Type":"Task","Resource":%q,"End":true}}}]}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "redrive", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1", Input: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RedriveExecution(ctx, e.ARN); !errors.Is(err, fault.ErrNotRedrivable) {
		t.Errorf("redriving a running execution: %v", err)
	}
	if err := svc.SendTaskFailure(ctx, takeTask(t, svc, act.ARN), "Broken", "first"); err != nil {
		t.Fatal(err)
	}
	failed, err := svc.Wait(ctx, e.ARN)
	if err != nil || failed.Status != "FAILED" {
		t.Fatalf("%+v %v", failed, err)
	}
	if r := svc.Redrive(ctx, failed); r.Status != service.Redrivable || r.Count != 0 {
		t.Errorf("before the redrive: %+v", r)
	}
	at, err := svc.RedriveExecution(ctx, e.ARN)
	if err != nil || at.IsZero() {
		t.Fatalf("redrive: %v", err)
	}
	token := takeTask(t, svc, act.ARN)
	if d, err := svc.DescribeExecution(ctx, e.ARN); err != nil || d.Status != "RUNNING" || !d.Stopped.IsZero() || d.Error != "" {
		t.Fatalf("redriven: %+v %v", d, err)
	}
	svc = restart(t, svc, st, path, service.Config{})
	if err := svc.SendTaskSuccess(ctx, token, `"b"`); err != nil {
		t.Fatal(err)
	}
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" || done.Output != `["a","b"]` {
		t.Fatalf("%+v %v", done, err)
	}
	r := svc.Redrive(ctx, done)
	if r.Count != 1 || !r.Date.Equal(at) || r.Status != service.NotRedrivable || !strings.Contains(r.Reason, "SUCCEEDED") {
		t.Errorf("after the redrive: %+v (redriven at %v)", r, at)
	}
	evs, _, err := svc.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var passes, redriven int
	for i, ev := range evs {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i+1, ev.ID)
		}
		switch ev.Type {
		case "PassStateEntered":
			passes++
		case "ExecutionRedriven":
			redriven++
			if !strings.Contains(string(ev.JSON), `"executionRedrivenEventDetails":{"redriveCount":1}`) {
				t.Errorf("ExecutionRedriven: %s", ev.JSON)
			}
		}
	}
	if passes != 1 || redriven != 1 {
		t.Errorf("history: branch A entered %d times, %d ExecutionRedriven", passes, redriven)
	}
	if _, err := svc.RedriveExecution(ctx, e.ARN); !errors.Is(err, fault.ErrNotRedrivable) {
		t.Errorf("redriving a succeeded execution: %v", err)
	}
	if _, err := svc.RedriveExecution(ctx, e.ARN+"x"); !errors.Is(err, fault.ErrExecutionNotFound) {
		t.Errorf("redriving a missing execution: %v", err)
	}
}
