package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/sqlite"
)

// waitMapRun polls until the execution has a Map Run for which ok holds.
func waitMapRun(t *testing.T, svc *service.Service, execARN string, ok func(r *store.MapRun) bool) *store.MapRun {
	t.Helper()
	ctx := context.Background()
	var last *store.MapRun
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runs, _, err := svc.ListMapRuns(ctx, execARN, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			r, err := svc.DescribeMapRun(ctx, runs[0].ARN)
			if err != nil {
				t.Fatal(err)
			}
			if last = r; ok(r) {
				return r
			}
		}
	}
	t.Fatalf("the Map Run did not get there; last seen %+v", last)
	return nil
}

func takeTask(t *testing.T, svc *service.Service, act string) string {
	t.Helper()
	token, _, err := svc.GetActivityTask(context.Background(), act, "w", 20*time.Second)
	if err != nil || token == "" {
		t.Fatalf("no activity task: %v", err)
	}
	return token
}

// restart stops svc and closes its SQLite store st, as a server that
// stops, then serves the file at path again with a new service (cfg, its
// Store set here), which must resume the one execution left running.
func restart(t *testing.T, svc *service.Service, st *sqlite.Store, path string, cfg service.Config) *service.Service {
	t.Helper()
	ctx := context.Background()
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = st
	svc = service.New(cfg)
	t.Cleanup(func() {
		svc.Close()
		_ = st.Close()
	})
	if n, err := svc.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d: %v", n, err)
	}
	return svc
}

// TestMapRunUpdateAcrossRestart runs a Distributed Map of four activity
// tasks, one at a time, on SQLite: UpdateMapRun raises the concurrency so
// that two more tasks are offered at once; the service then stops and a
// new one on the same file resumes the execution, whose Map Run keeps the
// new limit (the update was committed as a step and replayed); a child
// fails within the tolerance and the Map Run succeeds. Its child
// executions are listed, described and have their own histories.
func TestMapRunUpdateAcrossRestart(t *testing.T) {
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
	def := fmt.Sprintf(`{"StartAt":"M","States":{"M":{"Type":"Map","Label":"Items","MaxConcurrency":1,"ToleratedFailureCount":1,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Task","Resource":%q,"End":true}}},
		"End":true}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "maprun", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "m1", Input: `[1,2,3,4]`})
	if err != nil {
		t.Fatal(err)
	}
	first := takeTask(t, svc, act.ARN)
	r := waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Executions.Running == 1 })
	if r.Status != "RUNNING" || r.MaxConcurrency != 1 || r.ToleratedFailureCount != 1 || r.Executions.Pending != 3 || r.Executions.Total != 4 ||
		!strings.HasPrefix(r.ARN, "arn:aws:states:us-east-1:123456789012:mapRun:maprun/Items:") || r.ExecutionARN != e.ARN {
		t.Fatalf("map run %+v", r)
	}
	if err := svc.UpdateMapRun(ctx, r.ARN, service.MapRunUpdate{}); err == nil {
		t.Error("an empty UpdateMapRun was accepted")
	}
	three := 3
	if err := svc.UpdateMapRun(ctx, r.ARN, service.MapRunUpdate{MaxConcurrency: &three}); err != nil {
		t.Fatal(err)
	}
	second, third := takeTask(t, svc, act.ARN), takeTask(t, svc, act.ARN)
	waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool {
		return r.MaxConcurrency == 3 && r.Executions.Running == 3 && r.Executions.Pending == 1
	})
	svc = restart(t, svc, st, path, service.Config{})
	if err := svc.SendTaskFailure(ctx, first, "Broken", "item 1"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{second, third} {
		if err := svc.SendTaskSuccess(ctx, tok, `"ok"`); err != nil {
			t.Fatal(err)
		}
	}
	// The fourth starts only now, with three at most running at once.
	if err := svc.SendTaskSuccess(ctx, takeTask(t, svc, act.ARN), `"last"`); err != nil {
		t.Fatal(err)
	}
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	r = waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status != "RUNNING" })
	if r.Status != "SUCCEEDED" || r.MaxConcurrency != 3 || r.Executions.Succeeded != 3 || r.Executions.Failed != 1 || r.Executions.Running != 0 ||
		r.Executions.Pending != 0 || r.Stopped.IsZero() {
		t.Errorf("map run at the end %+v", r)
	}
	kids, _, err := svc.ListMapRunExecutions(ctx, r.ARN, "", store.Page{})
	if err != nil || len(kids) != 4 {
		t.Fatalf("children: %d %v", len(kids), err)
	}
	failed, _, err := svc.ListMapRunExecutions(ctx, r.ARN, "FAILED", store.Page{})
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed children: %d %v", len(failed), err)
	}
	k, err := svc.DescribeExecution(ctx, failed[0].ARN)
	if err != nil || k.Status != "FAILED" || k.Error != "Broken" || k.Input != "1" ||
		k.StateMachineARN != "arn:aws:states:us-east-1:123456789012:stateMachine:maprun/Items" {
		t.Fatalf("failed child %+v %v", k, err)
	}
	if !strings.HasPrefix(k.Definition, `{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W"`) || k.RoleARN != "arn:aws:iam::123456789012:role/r" {
		t.Errorf("the child's definition %q and role %q", k.Definition, k.RoleARN)
	}
	if got := svc.MapRunOf(ctx, k.ARN); got != r.ARN {
		t.Errorf("MapRunOf(child) = %q", got)
	}
	if got := svc.MapRunOf(ctx, e.ARN); got != "" {
		t.Errorf("MapRunOf(parent) = %q", got)
	}
	evs, _, err := svc.History(ctx, k.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); got != "ExecutionStarted TaskStateEntered ActivityScheduled ActivityStarted ActivityFailed ExecutionFailed" {
		t.Errorf("the failed child's history: %s", got)
	}
	parent, _, err := svc.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range parent {
		if strings.HasPrefix(ev.Type, "Activity") || strings.HasPrefix(ev.Type, "MapIteration") {
			t.Errorf("the parent's history holds a child's %s", ev.Type)
		}
	}
}

// childTypes returns the event types of an execution's history.
func historyTypes(t *testing.T, svc *service.Service, arn string) string {
	t.Helper()
	evs, _, err := svc.History(context.Background(), arn, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	return strings.Join(types, " ")
}

// TestMapRunCountsAcrossRestart: a Distributed Map of five items in
// batches of two (three child executions) on SQLite: DescribeMapRun counts
// child executions in executionCounts and items in itemCounts; the
// service stops while the last child waits for an activity and a new one
// on the same file resumes it (the counts are rebuilt by replay); that
// child's ItemProcessor TimeoutSeconds elapses: it is TIMED_OUT, counted
// in timedOut, and the Map Run succeeds within its tolerance, its
// failures then not redrivable.
func TestMapRunCountsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "never"})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(`{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailureCount":2,"ItemBatcher":{"MaxItemsPerBatch":2},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"TimeoutSeconds":3,"StartAt":"C","States":{
			"C":{"Type":"Choice","Choices":[{"Variable":"$.Items[0]","NumericEquals":1,"Next":"P"},{"Variable":"$.Items[0]","NumericEquals":3,"Next":"F"}],"Default":"W"},
			"P":{"Type":"Pass","End":true},
			"F":{"Type":"Fail","Error":"Bad"},
			"W":{"Type":"Task","Resource":%q,"End":true}}},
		"End":true}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "counts", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "c1", Input: `[1,2,3,4,5]`})
	if err != nil {
		t.Fatal(err)
	}
	r := waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Executions.Succeeded == 1 && r.Executions.Failed == 1 })
	wantExec := store.MapRunCounts{Running: 1, Succeeded: 1, Failed: 1, Total: 3}
	wantItems := store.MapRunCounts{Running: 1, Succeeded: 2, Failed: 2, Total: 5}
	if r.Status != "RUNNING" || r.Executions != wantExec || r.Items != wantItems {
		t.Fatalf("map run %s\nexecutionCounts %+v, want %+v\nitemCounts %+v, want %+v", r.Status, r.Executions, wantExec, r.Items, wantItems)
	}
	svc = restart(t, svc, st, path, service.Config{})
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	r = waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status != "RUNNING" })
	wantExec = store.MapRunCounts{Succeeded: 1, Failed: 1, TimedOut: 1, Total: 3, ResultsWritten: 3, FailuresNotRedrivable: 2}
	wantItems = store.MapRunCounts{Succeeded: 2, Failed: 2, TimedOut: 1, Total: 5, ResultsWritten: 5, FailuresNotRedrivable: 3}
	if r.Status != "SUCCEEDED" || r.Executions != wantExec || r.Items != wantItems {
		t.Errorf("map run %s\nexecutionCounts %+v, want %+v\nitemCounts %+v, want %+v", r.Status, r.Executions, wantExec, r.Items, wantItems)
	}
	timedOut, _, err := svc.ListMapRunExecutions(ctx, r.ARN, "TIMED_OUT", store.Page{})
	if err != nil || len(timedOut) != 1 {
		t.Fatalf("timed-out children: %d %v", len(timedOut), err)
	}
	k, err := svc.DescribeExecution(ctx, timedOut[0].ARN)
	if err != nil || k.Status != "TIMED_OUT" || k.Error != "States.Timeout" {
		t.Fatalf("timed-out child %+v %v", k, err)
	}
	if got := historyTypes(t, svc, k.ARN); got != "ExecutionStarted ChoiceStateEntered ChoiceStateExited TaskStateEntered ActivityScheduled ExecutionTimedOut" {
		t.Errorf("the timed-out child's history: %s", got)
	}
}

// TestMapRunStopped stops an execution while its Map Run's children wait
// for activities: the parent's history ends with ExecutionAborted (no
// MapRunAborted: AWS's "Redriving Map Runs" has the Map Run go on after
// its parent is stopped, cancelling the children), the Map Run is ABORTED
// with its children counted as aborted, each child ABORTED and its
// history ending, as a stopped execution's, with ExecutionAborted alone;
// the aborted children stay redrivable with their parent.
func TestMapRunStopped(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(`{"StartAt":"M","States":{"M":{"Type":"Map",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Task","Resource":%q,"End":true}}},
		"End":true}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "stopped", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "s1", Input: `[1,2]`})
	if err != nil {
		t.Fatal(err)
	}
	waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Executions.Running == 2 })
	if _, err := svc.StopExecution(ctx, e.ARN, "Stop", "by the test"); err != nil {
		t.Fatal(err)
	}
	r := waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status != "RUNNING" })
	want := store.MapRunCounts{Aborted: 2, Total: 2}
	if r.Status != "ABORTED" || r.Executions != want || r.Items != want || r.Stopped.IsZero() {
		t.Errorf("map run %s %+v, want %+v", r.Status, r.Executions, want)
	}
	if got := historyTypes(t, svc, e.ARN); got != "ExecutionStarted MapStateEntered MapStateStarted MapRunStarted ExecutionAborted" {
		t.Errorf("the parent's history: %s", got)
	}
	kids, _, err := svc.ListMapRunExecutions(ctx, r.ARN, "ABORTED", store.Page{})
	if err != nil || len(kids) != 2 {
		t.Fatalf("aborted children: %d %v", len(kids), err)
	}
	for _, k := range kids {
		if got := historyTypes(t, svc, k.ARN); got != "ExecutionStarted TaskStateEntered ActivityScheduled ExecutionAborted" {
			t.Errorf("an aborted child's history: %s", got)
		}
	}
}

// TestMapRunCaughtNotRedrivable: a Map Run whose failure the Map state
// catches is never redriven (the parent left the state and succeeds):
// DescribeMapRun counts its failed child as failuresNotRedrivable.
func TestMapRunCaughtNotRedrivable(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","Catch":[{"ErrorEquals":["States.ALL"],"Next":"Done"}],
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Bad"}}},
		"End":true},"Done":{"Type":"Pass","End":true}}}`
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "caught", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "c1", Input: `[1]`})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := svc.Wait(ctx, e.ARN); err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	r := waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status != "RUNNING" })
	want := store.MapRunCounts{Failed: 1, Total: 1, FailuresNotRedrivable: 1}
	if r.Status != "FAILED" || r.Executions != want || r.Items != want {
		t.Errorf("map run %s %+v, want %+v", r.Status, r.Executions, want)
	}
}
