package interp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestTaskCredentials: a Task's Credentials are recorded in its scheduled
// event as taskCredentials {roleArn}, as AWS records them (the
// LocalStack-recorded AWS cases of test_credentials_base): a literal
// RoleArn, a path, an intrinsic, a JSONata expression; a legacy Lambda
// function ARN records them in LambdaFunctionScheduled. A RoleArn that is
// not a string fails the state with States.Runtime.
func TestTaskCredentials(t *testing.T) {
	t.Parallel()
	const role = "arn:aws:iam::123456789012:role/r"
	ok := task.InvokerFunc(func(context.Context, *task.Request) task.Result { return task.Result{Output: value.NewObject(0)} })
	tests := []struct {
		name, def, event, err string
	}{
		{"literal", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","Credentials":{"RoleArn":"` + role + `"},"End":true}}}`, "TaskScheduled", ""},
		{"path", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","Credentials":{"RoleArn.$":"$.role"},"End":true}}}`, "TaskScheduled", ""},
		{"intrinsic", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","Credentials":{"RoleArn.$":"States.Format('{}', $.role)"},"End":true}}}`, "TaskScheduled", ""},
		{"jsonata", `{"QueryLanguage":"JSONata","StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","Credentials":{"RoleArn":"{% $states.input.role %}"},"End":true}}}`, "TaskScheduled", ""},
		{"legacy lambda", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Credentials":{"RoleArn.$":"$.role"},"End":true}}}`, "LambdaFunctionScheduled", ""},
		{"not a string", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","Credentials":{"RoleArn.$":"$.n"},"End":true}}}`, "", "States.Runtime"},
	}
	for _, tt := range tests {
		p := compile(t, tt.def)
		x := engine.Run(context.Background(), p, interp.Info{Name: "x"}, value.ObjectOf("role", role, "n", value.Int(1)), engine.Config{Invoker: ok})
		if tt.err != "" {
			if f := x.Failure(); x.Status() != interp.Failed || f.Error != tt.err || !strings.Contains(f.Cause, "'RoleArn'") {
				t.Errorf("%s: %s %+v, want %s", tt.name, x.Status(), f, tt.err)
			}
			continue
		}
		var got string
		for _, e := range x.History() {
			if e.Type == tt.event {
				got = string(e.AppendJSON(nil, false))
			}
		}
		if !strings.Contains(got, `"taskCredentials":{"roleArn":"`+role+`"}`) {
			t.Errorf("%s: %s %s", tt.name, tt.event, got)
		}
	}
}
