package service_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
)

// TestRedriveMetrics redrives a failed execution twice (it fails again,
// then succeeds) with the metrics as the service's Observer: the
// ExecutionsRedriven and RedrivenExecutions… counters are AWS's
// (AWS/States, Redrive group), labelled by state machine.
func TestRedriveMetrics(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	svc := service.New(service.Config{Store: st, Observer: m})
	defer svc.Close()
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(`{"StartAt":"B","States":{"B":{"Type":"Task","Resource":%q,"End":true}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "redriven", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1", Input: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range []bool{false, false, true} {
		if i > 0 {
			if _, err := svc.RedriveExecution(ctx, e.ARN); err != nil {
				t.Fatalf("redrive %d: %v", i, err)
			}
		}
		tok := takeTask(t, svc, act.ARN)
		if ok {
			err = svc.SendTaskSuccess(ctx, tok, `"ok"`)
		} else {
			err = svc.SendTaskFailure(ctx, tok, "Broken", "again")
		}
		if err != nil {
			t.Fatal(err)
		}
		if d, err := svc.Wait(ctx, e.ARN); err != nil || d.Status == "RUNNING" {
			t.Fatalf("%+v %v", d, err)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	label := fmt.Sprintf(`{state_machine_arn=%q}`, sm.ARN)
	for _, want := range []string{
		"stepd_executions_started_total" + label + " 1",
		"stepd_executions_failed_total" + label + " 2",
		"stepd_executions_succeeded_total" + label + " 1",
		"stepd_executions_redriven_total" + label + " 2",
		"stepd_redriven_executions_failed_total" + label + " 1",
		"stepd_redriven_executions_succeeded_total" + label + " 1",
		"stepd_redriven_executions_aborted_total" + label + " 0",
		"stepd_redriven_executions_timed_out_total" + label + " 0",
		"AWS/States ExecutionsRedriven:",
		"AWS/States RedrivenExecutionsSucceeded:",
		"AWS/States RedrivenExecutionsFailed:",
		"AWS/States RedrivenExecutionsAborted:",
		"AWS/States RedrivenExecutionsTimedOut:",
	} {
		if !strings.Contains(text, want+"\n") && !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
