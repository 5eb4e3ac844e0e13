package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/internal/sdkhttp"
)

// The executions of this file are driven from outside, as AWS records
// them: a task-token sender and an activity worker (testdata/outside_worker.py,
// a separate process speaking the Step Functions API through botocore),
// nested state machines, and Lambda functions served by Url and Command
// handlers, all through stepd serve on 127.0.0.1.

const outsideRole = "arn:aws:iam::123456789012:role/outside"

// outsideServer starts stepd serve with a registry whose Url handlers are
// served by a local HTTP server, and returns an SDK client and the URL.
func outsideServer(t *testing.T) (*sfn.Client, string) {
	t.Helper()
	handlers := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/header" {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
		}
		w.Write([]byte(`{"errorType":"CustomError","errorMessage":"boom"}`))
	}))
	t.Cleanup(handlers.Close)
	shape := `cat >/dev/null; echo '{\"errorType\":\"CustomError\",\"errorMessage\":\"boom\"}'`
	cfg := writeFile(t, "registry.json", `{
	  "Functions": {
	    "shaped": {"Url": "`+handlers.URL+`/shaped", "LambdaShaped": true},
	    "plain": {"Url": "`+handlers.URL+`/shaped"},
	    "flagged": {"Url": "`+handlers.URL+`/header"},
	    "cmdshaped": {"Command": ["sh", "-c", "`+shape+`"], "LambdaShaped": true},
	    "cmdplain": {"Command": ["sh", "-c", "`+shape+`"]}
	  },
	  "Resources": {"arn:aws:states:::sqs:sendMessage.waitForTaskToken": {"Command": ["sh", "-c", "cat >/dev/null; echo '{\"MessageId\":\"m-1\"}'"]}}
	}`)
	url, _, _ := serveInProcess(t, "--data", filepath.Join(t.TempDir(), "data"), "--config", cfg)
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(strings.TrimSuffix(url, "/")),
		HTTPClient: sdkhttp.Wrap(nil), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	return c, url
}

// pythonWorker returns the python3 that runs outside_worker.py (it needs
// botocore), skipping the test without one unless CI=true.
func pythonWorker(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import botocore.session").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs python3 with botocore: %v", err)
		}
		t.Skipf("this test needs python3 with botocore: %v", err)
	}
	return py
}

// worker runs outside_worker.py with args in the background; the returned
// function waits for it and fails the test when it failed.
func worker(t *testing.T, py, url string, args ...string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join("testdata", "outside_worker.py"), url}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(cancel)
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Errorf("outside_worker.py %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

func createSM(t *testing.T, c *sfn.Client, name, def string) string {
	t.Helper()
	sm, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(outsideRole), Definition: aws.String(def)})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return aws.ToString(sm.StateMachineArn)
}

func startSM(t *testing.T, c *sfn.Client, sm, input string) string {
	t.Helper()
	ex, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(input)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(ex.ExecutionArn)
}

func historyOf(t *testing.T, c *sfn.Client, arn string) []types.HistoryEvent {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return h.Events
}

// outputOf is an ended execution's output, decoded.
func outputOf(t *testing.T, d *sfn.DescribeExecutionOutput) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil {
		t.Fatalf("output %q: %v (%s: %s)", aws.ToString(d.Output), err, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	return out
}

// TestOutsideCallbacks: a .waitForTaskToken task answered by a separate
// process, as AWS records it (the LocalStack-recorded AWS cases of
// test_callback and test_heartbeats): every Task event names the resource
// with its suffix, TaskScheduled has the Credentials' role as
// taskCredentials, a SendTaskFailure without an error is caught with a null
// Error and Cause, and a lapsed heartbeat is States.Timeout, which a
// States.HeartbeatTimeout catcher still catches.
func TestOutsideCallbacks(t *testing.T) {
	t.Parallel()
	py := pythonWorker(t)
	c, url := outsideServer(t)
	send := func(catch, more string) string {
		return `{"StartAt":"Send","States":{"Send":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		  "Parameters":{"QueueUrl":"q","MessageBody":{"Message.$":"$.msg","TaskToken.$":"$$.Task.Token"}},
		  "Credentials":{"RoleArn.$":"$.role"},"HeartbeatSecondsPath":"$.hb","TimeoutSeconds":600` + catch + `,"End":true}` + more + `}}`
	}
	caught := createSM(t, c, "callback", send(`,"Catch":[{"ErrorEquals":["States.HeartbeatTimeout"],"ResultPath":"$.heartbeat","Next":"Done"},
		{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Done"}]`, `,"Done":{"Type":"Pass","End":true}`))
	bare := createSM(t, c, "callback-bare", send("", ""))
	const role = "arn:aws:iam::123456789012:role/sender"
	input := func(hb string) string { return `{"msg":"hello","role":"` + role + `","hb":` + hb + `}` }

	// Success, answered by the worker.
	ok := startSM(t, c, caught, input("60"))
	wait := worker(t, py, url, "token", ok, "success", `"answered"`)
	d := waitFinished(t, c, ok)
	wait()
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `"answered"` {
		t.Fatalf("answered: %s %s %s %s", d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	var resources []string
	for _, ev := range historyOf(t, c, ok) {
		switch ev.Type {
		case types.HistoryEventTypeTaskScheduled:
			s := ev.TaskScheduledEventDetails
			resources = append(resources, aws.ToString(s.Resource))
			if s.TaskCredentials == nil || aws.ToString(s.TaskCredentials.RoleArn) != role || aws.ToInt64(s.HeartbeatInSeconds) != 60 {
				t.Errorf("TaskScheduled %+v: want taskCredentials {roleArn: %s} and heartbeatInSeconds 60", s, role)
			}
		case types.HistoryEventTypeTaskStarted:
			resources = append(resources, aws.ToString(ev.TaskStartedEventDetails.Resource))
		case types.HistoryEventTypeTaskSubmitted:
			resources = append(resources, aws.ToString(ev.TaskSubmittedEventDetails.Resource))
		case types.HistoryEventTypeTaskSucceeded:
			resources = append(resources, aws.ToString(ev.TaskSucceededEventDetails.Resource))
		}
	}
	if want := slices.Repeat([]string{"sendMessage.waitForTaskToken"}, 4); !slices.Equal(resources, want) {
		t.Errorf("resources %v, want %v", resources, want)
	}

	// SendTaskFailure without an error or cause.
	unnamed := startSM(t, c, caught, input("60"))
	wait = worker(t, py, url, "token", unnamed, "failure")
	d = waitFinished(t, c, unnamed)
	wait()
	if out := outputOf(t, d); !jsonEqual(out["err"], `{"Error":null,"Cause":null}`) {
		t.Errorf("caught unnamed failure: %s", aws.ToString(d.Output))
	}
	for _, ev := range historyOf(t, c, unnamed) {
		if f := ev.TaskFailedEventDetails; f != nil && (f.Error != nil || f.Cause != nil || aws.ToString(f.Resource) != "sendMessage.waitForTaskToken") {
			t.Errorf("TaskFailed %+v: want no error or cause", f)
		}
	}

	// A heartbeat that lapses: States.Timeout, caught by
	// States.HeartbeatTimeout, and failing the execution without a catcher.
	lapsed := startSM(t, c, caught, input("1"))
	bareLapsed := startSM(t, c, bare, input("1"))
	d = waitFinished(t, c, lapsed)
	if hb, _ := outputOf(t, d)["heartbeat"].(map[string]any); hb["Error"] != "States.Timeout" {
		t.Errorf("caught heartbeat timeout: %s", aws.ToString(d.Output))
	}
	d = waitFinished(t, c, bareLapsed)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Timeout" {
		t.Errorf("heartbeat timeout: %s %s", d.Status, aws.ToString(d.Error))
	}
	var timedOut *types.TaskTimedOutEventDetails
	for _, ev := range historyOf(t, c, bareLapsed) {
		if ev.TaskTimedOutEventDetails != nil {
			timedOut = ev.TaskTimedOutEventDetails
		}
	}
	if timedOut == nil || aws.ToString(timedOut.Error) != "States.Timeout" || timedOut.Cause != nil || aws.ToString(timedOut.Resource) != "sendMessage.waitForTaskToken" {
		t.Errorf("TaskTimedOut %+v", timedOut)
	}
}

// TestOutsideActivity: an activity worker process answers an activity
// task; a SendTaskFailure without an error is caught with a null Error and
// Cause, and the ActivityFailed event has neither.
func TestOutsideActivity(t *testing.T) {
	t.Parallel()
	py := pythonWorker(t)
	c, url := outsideServer(t)
	act, err := c.CreateActivity(context.Background(), &sfn.CreateActivityInput{Name: aws.String("outside")})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(act.ActivityArn)
	sm := createSM(t, c, "activity", `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"`+arn+`",
	  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"Done"}],"End":true},"Done":{"Type":"Pass","End":true}}}`)

	done := worker(t, py, url, "activity", arn, "success", `{"worked":true}`)
	ok := startSM(t, c, sm, `{}`)
	done()
	if d := waitFinished(t, c, ok); aws.ToString(d.Output) != `{"worked":true}` {
		t.Errorf("activity success: %s %s", d.Status, aws.ToString(d.Output))
	}

	done = worker(t, py, url, "activity", arn, "failure")
	failed := startSM(t, c, sm, `{"n":1}`)
	done()
	d := waitFinished(t, c, failed)
	if out := outputOf(t, d); !jsonEqual(out["err"], `{"Error":null,"Cause":null}`) || out["n"] != 1.0 {
		t.Errorf("caught unnamed activity failure: %s", aws.ToString(d.Output))
	}
	for _, ev := range historyOf(t, c, failed) {
		if f := ev.ActivityFailedEventDetails; f != nil && (f.Error != nil || f.Cause != nil) {
			t.Errorf("ActivityFailed %+v: want no error or cause", f)
		}
	}

	// A Task on a deleted activity fails the execution with States.Runtime
	// in AWS's words (test_activities' activity_task_on_deleted), which no
	// catcher catches.
	if _, err := c.DeleteActivity(context.Background(), &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn}); err != nil {
		t.Fatal(err)
	}
	gone := startSM(t, c, sm, `{}`)
	d = waitFinished(t, c, gone)
	want := "An error occurred while executing the state 'Work' (entered at the event id #2). The activity " + arn + " does not exist."
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Runtime" || aws.ToString(d.Cause) != want {
		t.Errorf("deleted activity: %s %s %q, want States.Runtime %q", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause), want)
	}
	// Nothing is scheduled: TaskStateEntered, then ExecutionFailed.
	var kinds []string
	for _, ev := range historyOf(t, c, gone) {
		kinds = append(kinds, string(ev.Type))
	}
	if got := strings.Join(kinds, " "); got != "ExecutionStarted TaskStateEntered ExecutionFailed" {
		t.Errorf("deleted activity's history: %s", got)
	}
}

// TestOutsideNested: startExecution, .sync and .sync:2 as AWS records them
// (test_callback's start_execution_sync cases and test_credentials_base):
// a null Input starts the child with {}, the resource keeps its suffix,
// request-response and TaskSubmitted outputs carry the SDK's HTTP metadata,
// the .sync output is DescribeExecution's with its redrive status and
// reason, members by name, and a start on a missing state machine fails
// with the SDK's details in its cause.
func TestOutsideNested(t *testing.T) {
	t.Parallel()
	c, _ := outsideServer(t)
	child := createSM(t, c, "child", `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"Arg1":"argument1"},"End":true}}}`)
	missing := strings.Replace(child, ":child", ":missing", 1)
	parent := createSM(t, c, "parent", `{"StartAt":"Sync","States":{
	  "Sync":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync","Parameters":{"StateMachineArn":"`+child+`","Input":null},"ResultPath":"$.sync","Next":"Sync2"},
	  "Sync2":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"`+child+`"},"ResultPath":"$.sync2","Next":"Fire"},
	  "Fire":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution","Parameters":{"StateMachineArn":"`+child+`","Input":null},"ResultPath":"$.fire","Next":"Missing"},
	  "Missing":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution","Parameters":{"StateMachineArn":"`+missing+`"},
	    "Catch":[{"ErrorEquals":["StepFunctions.StateMachineDoesNotExistException"],"ResultPath":"$.missing","Next":"Done"}],"End":true},
	  "Done":{"Type":"Pass","End":true}}}`)
	ex := startSM(t, c, parent, `{}`)
	d := waitFinished(t, c, ex)
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("parent: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	raw := aws.ToString(d.Output)
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	keys := func(m json.RawMessage) []string {
		dec := json.NewDecoder(strings.NewReader(string(m)))
		var ks []string
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				return ks
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
				continue
			case json.Delim('}'), json.Delim(']'):
				depth--
				continue
			}
			if s, ok := tok.(string); ok && depth == 1 && dec.More() {
				ks = append(ks, s)
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return ks
				}
			}
		}
	}
	describe := []string{"ExecutionArn", "Input", "InputDetails", "Name", "Output", "OutputDetails", "RedriveCount", "RedriveStatus",
		"RedriveStatusReason", "StartDate", "StateMachineArn", "Status", "StopDate"}
	var sync, sync2, fire, caught map[string]any
	for name, dst := range map[string]*map[string]any{"sync": &sync, "sync2": &sync2, "fire": &fire, "missing": &caught} {
		if err := json.Unmarshal(out[name], dst); err != nil {
			t.Fatalf("%s: %v in %s", name, err, raw)
		}
	}
	if got := keys(out["sync"]); !slices.Equal(got, describe) || sync["Input"] != "{}" || sync["Output"] != `{"Arg1":"argument1"}` ||
		sync["RedriveStatus"] != "NOT_REDRIVABLE" || sync["RedriveStatusReason"] != "Execution is SUCCEEDED and cannot be redriven" {
		t.Errorf(".sync output %s (members %v)", out["sync"], got)
	}
	if got := keys(out["sync2"]); !slices.Equal(got, describe) || !jsonEqual(sync2["Input"], `{}`) || !jsonEqual(sync2["Output"], `{"Arg1":"argument1"}`) {
		t.Errorf(".sync:2 output %s (members %v)", out["sync2"], got)
	}
	if got := keys(out["fire"]); !slices.Equal(got, []string{"ExecutionArn", "SdkHttpMetadata", "SdkResponseMetadata", "StartDate"}) {
		t.Errorf("startExecution output %s (members %v)", out["fire"], got)
	}
	if meta, _ := fire["SdkHttpMetadata"].(map[string]any); meta["HttpStatusCode"] != 200.0 {
		t.Errorf("startExecution SdkHttpMetadata %v", fire["SdkHttpMetadata"])
	}
	cause := regexp.MustCompile(`^State Machine Does Not Exist: '` + regexp.QuoteMeta(missing) +
		`' \(Service: AWSStepFunctions; Status Code: 400; Error Code: StateMachineDoesNotExist; Request ID: [0-9a-f-]{36}; Proxy: null\)$`)
	if c, _ := caught["Cause"].(string); !cause.MatchString(c) {
		t.Errorf("missing state machine: %v", caught)
	}
	// The children started with {} (Input null or absent), and the
	// parent's events name each resource with its suffix.
	list, err := c.ListExecutions(context.Background(), &sfn.ListExecutionsInput{StateMachineArn: aws.String(child)})
	if err != nil || len(list.Executions) != 3 {
		t.Fatalf("children %+v %v", list, err)
	}
	for _, e := range list.Executions {
		ce, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
		if err != nil || aws.ToString(ce.Input) != "{}" {
			t.Errorf("child %s input %q %v", aws.ToString(e.ExecutionArn), aws.ToString(ce.Input), err)
		}
	}
	var resources []string
	for _, ev := range historyOf(t, c, ex) {
		if s := ev.TaskScheduledEventDetails; s != nil {
			resources = append(resources, aws.ToString(s.Resource))
		}
		if s := ev.TaskSucceededEventDetails; s != nil {
			resources = append(resources, aws.ToString(s.Resource))
		}
	}
	if want := []string{"startExecution.sync", "startExecution.sync", "startExecution.sync:2", "startExecution.sync:2", "startExecution", "startExecution", "startExecution"}; !slices.Equal(resources, want) {
		t.Errorf("resources %v, want %v", resources, want)
	}
}

// TestOutsideHandlers: Url and Command handlers fail like Lambda — on
// X-Amz-Function-Error, or on Lambda's error shape when marked LambdaShaped
// — and a function no handler serves is Lambda.ResourceNotFoundException,
// which a Catch catches.
func TestOutsideHandlers(t *testing.T) {
	t.Parallel()
	c, _ := outsideServer(t)
	sm := createSM(t, c, "handlers", `{"StartAt":"Call","States":{"Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Parameters":{"FunctionName.$":"$.fn","Payload":{}},"OutputPath":"$.Payload",
	  "Catch":[{"ErrorEquals":["CustomError","Lambda.ResourceNotFoundException"],"Next":"Caught"}],"End":true},
	  "Caught":{"Type":"Pass","End":true}}}`)
	notFound := regexp.MustCompile(`^Function not found: arn:aws:lambda:[a-z0-9-]+:[0-9]{12}:function:nope:\$LATEST \(Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: [0-9a-f-]{36}; Proxy: null\)$`)
	for _, tt := range []struct {
		fn, error string // the error caught, "" for a success
	}{
		{"shaped", "CustomError"},
		{"flagged", "CustomError"},
		{"cmdshaped", "CustomError"},
		{"plain", ""},
		{"cmdplain", ""},
		{"nope", "Lambda.ResourceNotFoundException"},
	} {
		d := waitFinished(t, c, startSM(t, c, sm, `{"fn":"`+tt.fn+`"}`))
		out := outputOf(t, d)
		if d.Status != types.ExecutionStatusSucceeded {
			t.Errorf("%s: %s %s", tt.fn, d.Status, aws.ToString(d.Error))
			continue
		}
		if tt.error == "" {
			if out["errorType"] != "CustomError" || out["Error"] != nil {
				t.Errorf("%s: output %s, want the answer as the result", tt.fn, aws.ToString(d.Output))
			}
			continue
		}
		cause, _ := out["Cause"].(string)
		if out["Error"] != tt.error || (tt.fn == "nope" && !notFound.MatchString(cause)) || (tt.fn != "nope" && !strings.Contains(cause, `"errorMessage":"boom"`)) {
			t.Errorf("%s: caught %s, want %s", tt.fn, aws.ToString(d.Output), tt.error)
		}
	}
}

// TestOutsideSDKStart: aws-sdk:sfn:startExecution with an object Input
// starts the execution with that object, as on AWS; the registry sends the
// call to this stepd serve itself (Aws.Endpoints.sfn).
func TestOutsideSDKStart(t *testing.T) {
	awstest.Env(t, "us-east-1")
	addr := freeAddr(t)
	cfg := writeFile(t, "registry.json", `{"Aws": {"Endpoints": {"sfn": "http://`+addr+`"}}}`)
	url, _, _ := serveInProcess(t, "--data", filepath.Join(t.TempDir(), "data"), "--config", cfg, "--addr", addr)
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(strings.TrimSuffix(url, "/")),
		HTTPClient: sdkhttp.Wrap(nil), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	child := createSM(t, c, "sdkchild", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	parent := createSM(t, c, "sdkparent", `{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:sfn:startExecution",
	  "Parameters":{"StateMachineArn":"`+child+`","Input":{"amount":1200,"items":["a"]}},"End":true}}}`)
	d := waitFinished(t, c, startSM(t, c, parent, `{}`))
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("parent: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	arn, _ := outputOf(t, d)["ExecutionArn"].(string)
	ce := waitFinished(t, c, arn)
	if aws.ToString(ce.Input) != `{"amount":1200,"items":["a"]}` || ce.Status != types.ExecutionStatusSucceeded {
		t.Errorf("child %s: %s input %q", arn, ce.Status, aws.ToString(ce.Input))
	}
}

// jsonEqual reports whether v, decoded from JSON, is the JSON text want.
func jsonEqual(v any, want string) bool {
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return false
	}
	a, _ := json.Marshal(v)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}
