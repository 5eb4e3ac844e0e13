package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/store/memory"
)

// TestBoto3Recorded runs testdata/boto3_recorded.py, the answers of issue
// 30 as AWS recorded them, with a boto3 that knows versions and aliases
// against a real server on 127.0.0.1.
func TestBoto3Recorded(t *testing.T) {
	python := clientWith(t, "a boto3 with state machine aliases", func(p string) error {
		return exec.Command(p, "-c", "import boto3; assert hasattr(boto3.client('stepfunctions', region_name='us-east-1'), 'create_state_machine_alias')").Run()
	}, debianPython, "python3")
	_, url := newServer(t, memory.New(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "boto3_recorded.py"), url).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("boto3_recorded.py: %v", err)
	}
}

// wire sends one AWS JSON 1.0 request as raw bytes and returns the
// answer's status, code and message (or body).
func wire(t *testing.T, url, op, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	code, _ := out["__type"].(string)
	msg, _ := out["message"].(string)
	if resp.StatusCode == 200 {
		b, _ := json.Marshal(out)
		msg = string(b)
	}
	return resp.StatusCode, code, msg
}

// TestWireMembers: on the raw wire, member names are case-sensitive (a
// name in another case is a member the model does not define, ignored as
// AWS ignores it), a member of the wrong type is a SerializationException
// in AWS's words naming it, and empty required texts get AWS's length
// constraint.
func TestWireMembers(t *testing.T) {
	_, url := newServer(t, memory.New(), nil)
	def := `{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}`
	status, code, msg := wire(t, url, "CreateStateMachine", `{"name":"w","roleArn":"arn:aws:iam::123456789012:role/r","definition":"`+def+`"}`)
	if status != 200 {
		t.Fatalf("CreateStateMachine: %d %s %s", status, code, msg)
	}
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:w"
	for _, c := range []struct{ op, body, code, msg string }{
		{"DescribeStateMachine", `{"StateMachineArn":"` + arn + `"}`, "ValidationException",
			"1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null"},
		{"ListExecutions", `{"stateMachineArn":"` + arn + `","maxResults":"10"}`, "SerializationException",
			"STRING_VALUE can not be converted to an Integer (member 'maxResults')"},
		{"ListStateMachines", `{"maxResults":true}`, "SerializationException", "TRUE_VALUE can not be converted to an Integer (member 'maxResults')"},
		{"DescribeStateMachine", `{"stateMachineArn":["x"]}`, "SerializationException", "Start of list found where not expected (member 'stateMachineArn')"},
		{"CreateStateMachine", `{"name":"e","roleArn":"arn:aws:iam::123456789012:role/r","definition":""}`, "ValidationException",
			"1 validation error detected: Value at 'definition' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"CreateStateMachine", `{"name":"e","roleArn":"arn:aws:iam::123456789012:role/r"}`, "ValidationException",
			"1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null"},
		{"ValidateStateMachineDefinition", `{"definition":""}`, "ValidationException",
			"1 validation error detected: Value at 'definition' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"StartExecution", `{"stateMachineArn":"` + arn + `","input":""}`, "InvalidExecutionInput",
			"Invalid State Machine Execution Input: 'Invalid execution input.'"},
		{"CreateStateMachine", `{"name":"l","roleArn":"arn:aws:iam::123456789012:role/r","definition":"` + def + `","loggingConfiguration":{"Level":"ALL"}}`,
			"ValidationException", "loggingConfiguration: unknown member 'Level'"},
	} {
		status, code, msg := wire(t, url, c.op, c.body)
		if status != 400 || code != c.code || msg != c.msg {
			t.Errorf("%s %s: %d %s %q, want 400 %s %q", c.op, c.body, status, code, msg, c.code, c.msg)
		}
	}
	// The exact spelling still works, and wins over another case.
	if status, code, msg := wire(t, url, "DescribeStateMachine", `{"StateMachineArn":"nope","stateMachineArn":"`+arn+`"}`); status != 200 || !strings.Contains(msg, `"name":"w"`) {
		t.Errorf("DescribeStateMachine with both spellings: %d %s %s", status, code, msg)
	}
	// Without input, an execution's input is {}.
	if status, code, msg := wire(t, url, "StartExecution", `{"stateMachineArn":"`+arn+`"}`); status != 200 {
		t.Errorf("StartExecution without input: %d %s %s", status, code, msg)
	}
}
