package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/value"
)

// TestMockedCallbackAndSyncTasksRecordSubmitted: a Task whose mocked
// response answers a .waitForTaskToken or .sync integration records
// TaskSubmitted between TaskStarted and its TaskSucceeded or TaskFailed,
// as AWS recorded for the same definitions, inputs and mock configurations
// (LocalStack's local_mocking/test_base_callbacks.snapshot.json:
// test_sfn_start_execution_sync[SFN_SYNC], [SFN_SYNC2],
// test_sqs_wait_for_task_token and
// test_sqs_wait_for_task_token_task_failure). A request-response Task
// records none.
func TestMockedCallbackAndSyncTasksRecordSubmitted(t *testing.T) {
	t.Parallel()
	cfg, err := mock.Parse([]byte(`{"StateMachines": {"sm": {"TestCases": {
		"sync": {"StartExecution": "sync"},
		"ok": {"SendMessageWithWait": "ok"},
		"fail": {"SendMessageWithWait": "fail"}}}},
	 "MockedResponses": {
		"sync": {"0": {"Return": {"ExecutionArn": "arn:aws:states:us-east-1:111111111111:execution:Part:TestStartTarget", "Input": "{}", "InputDetails": {"Included": true}, "Name": "TestStartTarget", "Output": "{\"Arg1\":\"argument1\"}", "OutputDetails": {"Included": true}, "StateMachineArn": "arn:aws:states:us-east-1:111111111111:stateMachine:Part", "StartDate": "1745486528077", "StopDate": "1745486528078", "Status": "SUCCEEDED"}}},
		"ok": {"0": {"Return": "string-literal"}},
		"fail": {"0": {"Throw": {"Error": "Failure error", "Cause": "Failure cause"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	sync := func(resource string) string {
		return `{"StartAt": "StartExecution", "States": {"StartExecution": {"Type": "Task", "Resource": "` + resource + `",
			"Parameters": {"StateMachineArn.$": "$.StateMachineArn", "Input.$": "$.Input", "Name.$": "$.Name"}, "End": true}}}`
	}
	const wait = `{"StartAt": "SendMessageWithWait", "States": {"SendMessageWithWait": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters": {"QueueUrl.$": "$.QueueUrl", "MessageBody": {"Message.$": "$.Message", "TaskToken.$": "$$.Task.Token"}}, "End": true}}}`
	const waitCatch = `{"StartAt": "SendMessageWithWait", "States": {"SendMessageWithWait": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters": {"QueueUrl.$": "$.QueueUrl", "MessageBody": {"Context.$": "$", "TaskToken.$": "$$.Task.Token"}},
		"Catch": [{"ErrorEquals": ["States.Runtime"], "ResultPath": "$.states_runtime_error", "Next": "CaughtRuntimeError"},
		          {"ErrorEquals": ["States.ALL"], "ResultPath": "$.states_all_error", "Next": "CaughtStatesALL"}], "End": true},
		"CaughtRuntimeError": {"Type": "Pass", "End": true}, "CaughtStatesALL": {"Type": "Pass", "End": true}}}`
	const syncInput = `{"StateMachineArn": "state-machine-arn", "Input": null, "Name": "TestStartTarget"}`
	const sqsInput = `{"QueueUrl": "sqs_queue_url", "Message": "string-literal"}`
	const done = "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskSucceeded TaskStateExited ExecutionSucceeded"
	for _, tt := range []struct {
		name, def, testCase, input, want, failed string
	}{
		{"SFN_SYNC", sync("arn:aws:states:::states:startExecution.sync"), "sync", syncInput, done, ""},
		{"SFN_SYNC2", sync("arn:aws:states:::states:startExecution.sync:2"), "sync", syncInput, done, ""},
		{"wait_for_task_token", wait, "ok", sqsInput, done, ""},
		{"wait_for_task_token_task_failure", waitCatch, "fail", sqsInput,
			"ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskFailed TaskStateExited PassStateEntered PassStateExited ExecutionSucceeded",
			`{"cause":"Failure cause","error":"Failure error","resource":"sendMessage.waitForTaskToken","resourceType":"sqs"}`},
		{"request_response", strings.Replace(strings.Replace(wait, ".waitForTaskToken", "", 1), `, "TaskToken.$": "$$.Task.Token"`, "", 1), "ok", sqsInput,
			"ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSucceeded TaskStateExited ExecutionSucceeded", ""},
	} {
		def, err := value.Parse([]byte(tt.def))
		if err != nil {
			t.Fatal(err)
		}
		in, _ := value.Parse([]byte(tt.input))
		c := &Case{Name: tt.name, Definition: def, Input: in, MockConfig: cfg, StateMachineName: "sm", TestCase: tt.testCase, Type: "STANDARD"}
		o, err := RunExecution(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var types []string
		for i, e := range o.History {
			ev := e.(*value.Object)
			typ, _ := ev.Get("type")
			types = append(types, typ.(string))
			if id, _ := ev.Get("id"); value.String(id) != value.String(int64(i+1)) && value.String(id) != value.String(float64(i+1)) {
				t.Errorf("%s: event %d has id %s", tt.name, i+1, value.String(id))
			}
			if typ == "TaskFailed" && tt.failed != "" {
				if d, _ := ev.Get("taskFailedEventDetails"); value.String(d) != tt.failed {
					t.Errorf("%s: TaskFailed %s, want %s", tt.name, value.String(d), tt.failed)
				}
			}
		}
		if got := strings.Join(types, " "); got != tt.want || o.Status != "SUCCEEDED" {
			t.Errorf("%s: %s %v %v\n%s\nwant %s", tt.name, o.Status, o.Error, o.Cause, got, tt.want)
		}
	}
}
