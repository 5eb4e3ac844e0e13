package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task/awsmodel"
)

// TestTestStateMockValidation checks TestState's validation of mocked
// service results against the API models, in each fieldValidationMode.
func TestTestStateMockValidation(t *testing.T) {
	task := func(resource string) string {
		return `{"Type": "Task", "Resource": "` + resource + `", "End": true}`
	}
	tests := []struct {
		name, definition string
		result, mode     string // an empty result mocks an error output
		want             string // the ValidationException message, or "" for success
	}{
		{"sdk type", task("arn:aws:states:::aws-sdk:s3:getObject"), `{"ContentLength": "9000"}`, "",
			"Mock result schema validation error: Field 'ContentLength' must be a number"},
		{"sdk type, none", task("arn:aws:states:::aws-sdk:s3:getObject"), `{"ContentLength": "9000"}`, "NONE", ""},
		{"optimized nested", task("arn:aws:states:::dynamodb:putItem"), `{"ConsumedCapacity": {"CapacityUnits": "1"}}`, "PRESENT",
			"Mock result schema validation error: Field 'CapacityUnits' must be a number"},
		{"required, strict", task("arn:aws:states:::states:startExecution"), `{"ExecutionArn": "arn"}`, "STRICT",
			"Mock result schema validation error: Field 'StartDate' is required"},
		{"required, present", task("arn:aws:states:::states:startExecution"), `{"ExecutionArn": "arn"}`, "PRESENT", ""},
		{"not an object", task("arn:aws:states:::lambda:invoke"), `"text"`, "", "Mocked result must be a JSON object."},
		{"lambda payload", task("arn:aws:states:::lambda:invoke"), `{"StatusCode": 200, "Payload": {"ok": true}}`, "", ""},
		{"callback pattern", task("arn:aws:states:::sqs:sendMessage.waitForTaskToken"), `{"MD5OfMessageBody": 1}`, "", ""},
		{"no model", task("arn:aws:states:::aws-sdk:nosuchservice:doIt"), `{"Anything": 1}`, "", ""},
		{"function arn", task("arn:aws:lambda:us-east-1:111111111111:function:fn"), `{"StatusCode": "x"}`, "", ""},
		{"unknown mode", task("arn:aws:states:::lambda:invoke"), `{}`, "LAX",
			"1 validation error detected: Value 'LAX' at 'mock.fieldValidationMode' failed to satisfy constraint: Member must satisfy enum value set: [STRICT, PRESENT, NONE]"},
		{"error output unchecked", task("arn:aws:states:::lambda:invoke"), "", "", ""},
	}
	svc := service.New(service.Config{Account: "111111111111", MockResults: awsmodel.CheckResult})
	defer svc.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &service.TestMock{FieldValidationMode: tt.mode}
			if tt.result == "" {
				m.ErrorOutput, m.Error, m.Cause = true, "Oops", "mocked"
			} else {
				m.Result = &tt.result
			}
			_, err := svc.TestState(context.Background(), service.TestStateInput{Definition: tt.definition, Mock: m})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("TestState: %v", err)
			case tt.want == "":
			case !errors.Is(err, fault.ErrValidation) || err.Error() != tt.want:
				t.Fatalf("TestState error %v, want ValidationException: %s", err, tt.want)
			}
		})
	}
}
