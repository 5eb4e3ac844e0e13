package server

import (
	"testing"
	"time"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// TestTextOnPostgres: an execution that fails with an error and a cause
// holding NUL and U+FFFF, and a version whose description holds NUL, are
// kept by a PostgreSQL store (whose text cannot hold NUL) and described
// back exactly.
func TestTextOnPostgres(t *testing.T) {
	s, _ := start(t, Config{StoreURL: pgtest.DSN(t)})
	const odd = "a\x00b\uffff00c"
	sm := call(t, s, "CreateStateMachine", map[string]any{"name": "fail", "roleArn": "arn:aws:iam::123456789012:role/r",
		"definition": `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E\u0000","Cause":"a\u0000b\uffff00c"}}}`})
	v := call(t, s, "PublishStateMachineVersion", map[string]any{"stateMachineArn": sm["stateMachineArn"], "description": odd})
	if d := call(t, s, "DescribeStateMachine", map[string]any{"stateMachineArn": v["stateMachineVersionArn"]}); d["description"] != odd {
		t.Errorf("the version's description: %q, want %q", d["description"], odd)
	}
	ex := call(t, s, "StartExecution", map[string]any{"stateMachineArn": sm["stateMachineArn"], "traceHeader": "Root=1\x00"})
	d := waitEnd(t, s, ex["executionArn"])
	if d["status"] != "FAILED" || d["error"] != "E\x00" || d["cause"] != odd {
		t.Errorf("DescribeExecution: %v, want FAILED with error %q and cause %q", d, "E\x00", odd)
	}
}

// waitEnd polls DescribeExecution until the execution has ended.
func waitEnd(t *testing.T, s *Server, arn any) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if d := call(t, s, "DescribeExecution", map[string]any{"executionArn": arn}); d["status"] != "RUNNING" {
			return d
		}
	}
	t.Fatal("the execution did not end")
	return nil
}
