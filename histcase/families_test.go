package histcase

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// families runs a Task of each integration pattern in the branches of a
// Parallel state: an activity, a callback (.waitForTaskToken), a .sync
// job, an HTTP Task, an AWS SDK call that fails once and is retried, and a
// Lambda function that times out and is caught; then draws a UUID.
const families = `{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Parallel", "Next": "Ids", "Branches": [
      {"StartAt": "Approve", "States": {"Approve": {"Type": "Task", "Resource": "arn:aws:states:us-east-1:111111111111:activity:approve", "TimeoutSeconds": 300, "End": true}}},
      {"StartAt": "Callback", "States": {"Callback": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/111111111111/q", "MessageBody": {"token.$": "$$.Task.Token"}}, "End": true}}},
      {"StartAt": "Job", "States": {"Job": {"Type": "Task", "Resource": "arn:aws:states:::glue:startJobRun.sync", "Parameters": {"JobName": "etl"}, "End": true}}},
      {"StartAt": "Http", "States": {"Http": {"Type": "Task", "Resource": "arn:aws:states:::http:invoke",
        "Parameters": {"ApiEndpoint": "https://example.com/orders", "Method": "GET", "Authentication": {"ConnectionArn": "arn:aws:events:us-east-1:111111111111:connection/c/1"}},
        "ResultSelector": {"body.$": "$.ResponseBody"}, "End": true}}},
      {"StartAt": "Sdk", "States": {"Sdk": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject", "Parameters": {"Bucket": "b", "Key": "k"},
        "Retry": [{"ErrorEquals": ["S3.NoSuchKeyException"], "IntervalSeconds": 1, "MaxAttempts": 2}], "ResultSelector": {"body.$": "$.Body"}, "End": true}}},
      {"StartAt": "Slow", "States": {
        "Slow": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:111111111111:function:slow", "TimeoutSeconds": 5,
          "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": "$.timedOut", "Next": "Caught"}], "End": true},
        "Caught": {"Type": "Pass", "End": true}}}
    ]},
    "Ids": {"Type": "Pass", "Parameters": {"id.$": "States.UUID()", "results.$": "$"}, "End": true}
  }
}`

// services stands in for the services the Tasks call.
func services(_ context.Context, req *task.Request) task.Result {
	switch req.StateName {
	case "Approve":
		return task.Result{Output: value.ObjectOf("approved", true)}
	case "Callback":
		return task.Result{Output: value.ObjectOf("answer", "yes")}
	case "Job":
		return task.Result{Output: value.ObjectOf("JobRunState", "SUCCEEDED", "Id", "jr_1")}
	case "Http":
		return task.Result{Output: value.ObjectOf("StatusCode", value.Int(200), "ResponseBody", value.ObjectOf("orders", value.Int(3)))}
	case "Sdk":
		if req.Attempt == 0 {
			return task.Result{Error: "S3.NoSuchKeyException", Cause: "The specified key does not exist. (Service: S3, Status Code: 404)"}
		}
		return task.Result{Output: value.ObjectOf("Body", "hello")}
	case "Slow":
		return task.Result{Output: "late", Delay: 10 * time.Second}
	}
	return task.Result{Error: "States.Runtime", Cause: "no service for " + req.StateName}
}

// TestFamilies: a case built from the history of every kind of Task
// reproduces its outcome, with each Task's responses as recorded.
func TestFamilies(t *testing.T) {
	sm, err := asl.Parse([]byte(families))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := &engine.Local{Region: "us-east-1", Account: "111111111111", Config: engine.Config{Invoker: task.InvokerFunc(services)}}
	x, err := l.Run(ctx, sm, engine.Execution{StateMachineName: "families", Name: "run-1", Input: value.NewObject(0)})
	if err != nil {
		t.Fatal(err)
	}
	if x.Status() != "SUCCEEDED" {
		t.Fatalf("the recorded run: %s %+v", x.Status(), x.Failure())
	}
	text := value.String(value.ObjectOf("events", history.Values(x.History(), true)))
	for _, typ := range []string{"ActivityScheduled", "ActivitySucceeded", "TaskSucceeded", "TaskFailed", "LambdaFunctionTimedOut"} {
		if !strings.Contains(text, `"`+typ+`"`) {
			t.Fatalf("the recorded history has no %s event", typ)
		}
	}
	h, err := Read([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	def, _ := value.ParseString(families)
	res, err := Build(ctx, h, Options{Definition: def, ExecutionArn: "arn:aws:states:us-east-1:111111111111:execution:families:run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reproduced {
		t.Fatalf("not reproduced: %v\nnotes: %s", res.Diffs, strings.Join(res.Notes, "\n"))
	}
	mocked, _ := res.Case.Get("mocks")
	for path, want := range map[string]string{
		"Approve.0.Return":  `{"approved":true}`,
		"Callback.0.Return": `{"answer":"yes"}`,
		"Job.0.Return":      `{"JobRunState":"SUCCEEDED","Id":"jr_1"}`,
		"Http.0.Return":     `{"StatusCode":200,"ResponseBody":{"orders":3}}`,
		"Sdk.0.Throw.Error": `"S3.NoSuchKeyException"`,
		"Sdk.1.Return":      `{"Body":"hello"}`,
		"Slow.0.Delay":      `6`,
		"Slow.0.Return":     `null`,
	} {
		v := any(mocked)
		for _, k := range append([]string{"MockedResponses"}, strings.Split(path, ".")...) {
			o, _ := v.(*value.Object)
			v, _ = o.Get(k)
		}
		if got := value.String(v); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	exp, _ := res.Case.Get("expected")
	if id := value.String(value.AsObject(exp).With("x", nil)); !strings.Contains(id, `"id":"<random-uuid>"`) {
		t.Errorf("the drawn UUID is not a wildcard: %s", id)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"state Ids uses a random UUID", "output $.id", "state Callback uses the task token"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note about %q in:\n%s", want, notes)
		}
	}
	// The case as stepd test reads and runs it.
	c, err := conformance.FromValue(res.Case, "families")
	if err != nil {
		t.Fatal(err)
	}
	if r := conformance.Check(ctx, c); !r.Passed() {
		t.Fatalf("stepd test: %s", r.Explain())
	}
}

// TestLongLoop: a Task state run 2,000 times in a loop, each time with
// other parameters, gets its 2,000 answers in order.
func TestLongLoop(t *testing.T) {
	const def = `{"StartAt": "Step", "States": {
	  "Step": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "inc", "Payload.$": "$"}, "OutputPath": "$.Payload", "Next": "More"},
	  "More": {"Type": "Choice", "Choices": [{"Variable": "$.i", "NumericLessThan": 2000, "Next": "Step"}], "Default": "Done"},
	  "Done": {"Type": "Succeed"}}}`
	inc := func(_ context.Context, req *task.Request) task.Result {
		in, _ := value.AsObject(req.Input).Get("Payload")
		i, _ := value.AsObject(in).Get("i")
		n, _ := i.(value.Number).Int64()
		return task.Result{Output: value.ObjectOf("Payload", value.ObjectOf("i", value.Int(n+1), "seen", value.Int(n*n)))}
	}
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := &engine.Local{Config: engine.Config{Invoker: task.InvokerFunc(inc)}}
	x, err := l.Run(ctx, sm, engine.Execution{StateMachineName: "loop", Name: "l1", Input: value.ObjectOf("i", value.Int(0))})
	if err != nil || x.Status() != "SUCCEEDED" {
		t.Fatalf("the recorded run: %v %v", err, x.Failure())
	}
	h, err := Read([]byte(value.String(value.ObjectOf("events", history.Values(x.History(), true)))))
	if err != nil {
		t.Fatal(err)
	}
	dv, _ := value.ParseString(def)
	res, err := Build(ctx, h, Options{Definition: dv})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reproduced {
		t.Fatalf("not reproduced: %v", res.Diffs)
	}
	mocked, _ := res.Case.Get("mocks")
	rs, _ := value.AsObject(mocked).Get("MockedResponses")
	step, _ := value.AsObject(rs).Get("Step")
	if n := value.AsObject(step).Len(); n != 2000 {
		t.Errorf("Step has %d responses, want 2000", n)
	}
}
