package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// TestCreateEnded: an execution whose step offered with its creation ends
// it is written with that step's summary (no update follows), and is not
// among the running ones, in the database itself (not only the memory of
// recent executions).
func TestCreateEnded(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	at := time.Unix(1700000000, 0)
	e := &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:sm:a", Name: "a", StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:sm",
		StateMachineName: "sm", Type: "STANDARD", Status: "RUNNING", Input: "{}", Started: at}
	next := &store.NextStep{}
	next.Offer(&store.Step{ExecutionARN: e.ARN, Seq: 1, At: at, Status: "FAILED", Error: "E", Cause: "C", Stopped: at.Add(time.Second),
		Events: []store.Event{{ID: 2, Type: "ExecutionFailed", JSON: []byte(`{}`)}}})
	first := &store.Step{ExecutionARN: e.ARN, Seq: 0, At: at, Status: "RUNNING", Events: []store.Event{{ID: 1, Type: "ExecutionStarted", JSON: []byte(`{}`)}}}
	if err := s.CreateExecutionWith(ctx, e, first, next); err != nil {
		t.Fatal(err)
	}
	var status, errName, cause string
	var stopped int64
	if err := s.db.QueryRowContext(ctx, `SELECT status, error, cause, stopped FROM executions WHERE arn=?`, e.ARN).Scan(&status, &errName, &cause, &stopped); err != nil {
		t.Fatal(err)
	}
	if status != "FAILED" || errName != "E" || cause != "C" || stopped != at.Add(time.Second).UnixNano() {
		t.Errorf("row: %s %s %s %d, want FAILED E C %d", status, errName, cause, stopped, at.Add(time.Second).UnixNano())
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil || len(running) != 0 {
		t.Errorf("running: %v %v, want none", running, err)
	}
	got, err := s.GetExecution(ctx, e.ARN)
	if err != nil || got.Status != "FAILED" || got.Error != "E" || got.Cause != "C" {
		t.Errorf("GetExecution: %+v %v", got, err)
	}
}
