package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task/registry"
)

// TestRegistryFailures runs Lambda tasks served by local commands through
// the API and checks how their failures reach the execution: a crash, output
// that is not JSON, a Lambda-style error object, and a task timeout.
func TestRegistryFailures(t *testing.T) {
	t.Parallel()
	reg, err := registry.Parse([]byte(`{"Functions":{
		"ok":      {"Command": ["sh", "-c", "cat >/dev/null; echo '{\"done\":true}'"]},
		"crash":   {"Command": ["sh", "-c", "echo 'segfault in handler' >&2; exit 139"]},
		"garbage": {"Command": ["sh", "-c", "echo 'not json'"]},
		"typed":   {"Command": ["sh", "-c", "echo '{\"errorType\":\"InvalidOrder\",\"errorMessage\":\"no items\"}'; exit 1"]},
		"slow":    {"Command": ["sh", "-c", "sleep 30"]}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, memory.New(), reg)
	ctx := context.Background()
	tests := []struct {
		function, timeout string
		status            types.ExecutionStatus
		output, error     string
		cause             string // text the cause contains
	}{
		{function: "ok", status: types.ExecutionStatusSucceeded, output: `{"done":true}`},
		{function: "crash", status: types.ExecutionStatusFailed, error: "States.TaskFailed", cause: "segfault in handler"},
		{function: "garbage", status: types.ExecutionStatusFailed, error: "States.TaskFailed", cause: "not json"},
		{function: "typed", status: types.ExecutionStatusFailed, error: "InvalidOrder", cause: "no items"},
		{function: "slow", timeout: `,"TimeoutSeconds":1`, status: types.ExecutionStatusFailed, error: "States.Timeout"},
	}
	for _, tt := range tests {
		def := `{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:` + tt.function + `"` + tt.timeout + `,"End":true}}}`
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("reg-" + tt.function), RoleArn: aws.String(role), Definition: aws.String(def)})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"order":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		d := waitDone(t, c, aws.ToString(ex.ExecutionArn))
		if d.Status != tt.status || aws.ToString(d.Output) != tt.output || aws.ToString(d.Error) != tt.error || !strings.Contains(aws.ToString(d.Cause), tt.cause) {
			t.Errorf("%s: %s output %q error %q cause %q; want %s %q %q containing %q", tt.function, d.Status,
				aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), tt.status, tt.output, tt.error, tt.cause)
		}
	}
}
