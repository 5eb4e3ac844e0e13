package mock

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func obj(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func loadConfig(t *testing.T, file string) *Config {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mustInvoker(t *testing.T, cfg *Config, sm, tc string) task.Invoker {
	t.Helper()
	inv, err := cfg.Invoker(sm, tc)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestMockTestCases(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, "testdata/sfn-local.json")
	const sm = "LambdaSQSIntegration"
	tests := []struct {
		testCase, state string
		attempt         int
		out, err, cause string
		delay           time.Duration
	}{
		{"HappyPath", "LambdaState", 0, `{"StatusCode":200,"Payload":{"StatusCode":200,"body":"Hello from Lambda!"}}`, "", "", 0},
		{"HappyPath", "SQSState", 0, `{"MD5OfMessageBody":"3bcb6e8e","MessageId":"3bcb6e8e-8b51"}`, "", "", 0},
		// Past the last key: the last entry again.
		{"HappyPath", "SQSState", 7, `{"MD5OfMessageBody":"3bcb6e8e","MessageId":"3bcb6e8e-8b51"}`, "", "", 0},
		{"RetryPath", "LambdaState", 0, "", "Lambda.ResourceNotReadyException", "Lambda resource is not ready.", 0},
		{"RetryPath", "LambdaState", 1, "", "Lambda.TimeoutException", "Lambda timed out.", 0},
		{"RetryPath", "LambdaState", 2, "", "Lambda.TimeoutException", "Lambda timed out.", 0},
		{"RetryPath", "LambdaState", 3, `{"StatusCode":200,"Payload":{"StatusCode":200,"body":"Hello from Lambda!"}}`, "", "", 0},
		{"RetryPath", "LambdaState", 4, `{"StatusCode":200,"Payload":{"StatusCode":200,"body":"Hello from Lambda!"}}`, "", "", 0},
		// Invocations before the first key or in a gap have no answer.
		{"GapPath", "LambdaState", 0, "", "States.Runtime", `no entry for invocation 0 of state "LambdaState"`, 0},
		{"GapPath", "LambdaState", 1, `"one"`, "", "", 0},
		{"GapPath", "LambdaState", 2, "", "States.Runtime", "no entry for invocation 2", 0},
		{"GapPath", "LambdaState", 4, `"three-four"`, "", "", 1500 * time.Millisecond},
		{"GapPath", "LambdaState", 9, `"three-four"`, "", "", 1500 * time.Millisecond},
		// A state outside the test case is not mocked.
		{"GapPath", "SQSState", 0, "", "States.Runtime", `no mock for state "SQSState" (resource arn:aws:states:::sqs:sendMessage) in state machine "LambdaSQSIntegration", test case "GapPath": map the state`, 0},
	}
	for _, tt := range tests {
		inv := mustInvoker(t, cfg, sm, tt.testCase)
		r := inv.Invoke(context.Background(), &task.Request{StateName: tt.state, Attempt: tt.attempt, Resource: "arn:aws:states:::sqs:sendMessage", Input: value.NewObject(0)})
		name := tt.testCase + "/" + tt.state
		if tt.err != "" {
			if r.Error != tt.err || !strings.Contains(r.Cause, tt.cause) {
				t.Errorf("%s #%d: got %+v, want error %s with cause containing %q", name, tt.attempt, r, tt.err, tt.cause)
			}
			continue
		}
		if r.Failed() || value.String(r.Output) != tt.out || r.Delay != tt.delay {
			t.Errorf("%s #%d: got %+v (output %s), want %s after %v", name, tt.attempt, r, value.String(r.Output), tt.out, tt.delay)
		}
	}
}

func TestInvokerSelection(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, "testdata/sfn-local.json")
	tests := []struct{ sm, tc, err string }{
		{"LambdaSQSIntegration", "HappyPath", ""},
		{"LambdaSQSIntegration", "", ""},
		{"LambdaSQSIntegration", "Nope", `state machine "LambdaSQSIntegration" has no test case "Nope" (it has "GapPath", "HappyPath", "RetryPath")`},
		{"Other", "HappyPath", `StateMachines has no state machine "Other"`},
	}
	for _, tt := range tests {
		_, err := cfg.Invoker(tt.sm, tt.tc)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Invoker(%q, %q) = %v, want %q", tt.sm, tt.tc, err, tt.err)
		}
	}
	// Without a test case, no state is mocked.
	inv := mustInvoker(t, cfg, "LambdaSQSIntegration", "")
	if r := inv.Invoke(context.Background(), &task.Request{StateName: "LambdaState"}); r.Error != "States.Runtime" {
		t.Errorf("no test case: %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ doc, want string }{
		{`[]`, "must be a JSON object, not an array"},
		{`{"a":`, "mock configuration: "},
		{`{"MockedResponse": {}}`, `unknown member "MockedResponse"`},
		{`{"MockedResponses": {"R1": {"1-x": {"Return": 1}}}}`, `MockedResponses.R1."1-x": invalid invocation range`},
		{`{"MockedResponses": {"R1": {"x": {"Return": 1}}}}`, `MockedResponses.R1.x: invalid invocation index`},
		{`{"MockedResponses": {"R1": {"-1": {"Return": 1}}}}`, `MockedResponses.R1."-1": invalid invocation range`},
		{`{"MockedResponses": {"R1": {"2-1": {"Return": 1}}}}`, `MockedResponses.R1."2-1": invalid invocation range`},
		{`{"MockedResponses": {"R1": {"0-2": {"Return": 1}, "2": {"Return": 2}}}}`, `MockedResponses.R1: the invocations "0-2" and "2" overlap`},
		{`{"MockedResponses": {"R1": {}}}`, `MockedResponses.R1: has no entries`},
		{`{"MockedResponses": {"R1": []}}`, `MockedResponses.R1: must be an object keyed by invocation index, not an array`},
		{`{"MockedResponses": {"my resp": {"0": 5}}}`, `MockedResponses."my resp"."0": must be an object with Return or Throw, not a number`},
		{`{"MockedResponses": {"R": {"0": {"Return": 1, "Throw": {"Error": "E"}}}}}`, `MockedResponses.R."0": must have exactly one of`},
		{`{"MockedResponses": {"R": {"0": {}}}}`, `MockedResponses.R."0": must have exactly one of`},
		{`{"MockedResponses": {"R": {"0": {"Returns": 1}}}}`, `MockedResponses.R."0".Returns: unknown member`},
		{`{"MockedResponses": {"R": {"0": {"Throw": {"Cause": "c"}}}}}`, `MockedResponses.R."0".Throw.Error: must be a non-empty string`},
		{`{"MockedResponses": {"R": {"0": {"Throw": {"Error": 1}}}}}`, `MockedResponses.R."0".Throw.Error: must be a string, not a number`},
		{`{"MockedResponses": {"R": {"0": {"Throw": {"Error": "E", "Why": ""}}}}}`, `MockedResponses.R."0".Throw.Why: unknown member`},
		{`{"MockedResponses": {"R": {"0": {"ReturnInput": false}}}}`, `MockedResponses.R."0".ReturnInput: must be true`},
		{`{"MockedResponses": {"R": {"0": {"ReturnRepeat": {"Value": "a", "Count": 1.5}}}}}`, `MockedResponses.R."0".ReturnRepeat: must be`},
		{`{"MockedResponses": {"R": {"0": {"ReturnRepeat": {"Value": "a", "Count": 1e12}}}}}`, `would exceed`},
		{`{"MockedResponses": {"R": {"0": {"Return": 1, "Delay": -1}}}}`, `MockedResponses.R."0".Delay: must be a non-negative number`},
		{`{"StateMachines": {"sm": {"TestCases": {"t": {"S": "Missing"}}}}, "MockedResponses": {}}`, `StateMachines.sm.TestCases.t.S: names the response "Missing", which MockedResponses does not define`},
		{`{"StateMachines": {"sm": {"TestCase": {}}}}`, `StateMachines.sm: unknown member "TestCase" (want TestCases)`},
		{`{"StateMachines": {"sm": {"TestCases": {"t": {"S": 1}}}}}`, `StateMachines.sm.TestCases.t.S: must be the name of a mocked response (a string), not a number`},
		{`{"TestCase": {"S": "R"}}`, `TestCase.S: names the response "R"`},
		{`{"LambdaFunctions": {"arn:aws:s3:::bucket": {"0": {"ReturnInput": true}}}}`, `LambdaFunctions."arn:aws:s3:::bucket": not a Lambda function ARN or name`},
		{`{"LambdaFunctions": {"fn": {"0": {"Throw": {}}}}}`, `LambdaFunctions.fn."0".Throw.Error: must be a non-empty string`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", tt.doc, err, tt.want)
		}
	}
}

const invokeARN = "arn:aws:states:::lambda:invoke"

func TestLambdaFunctions(t *testing.T) {
	t.Parallel()
	inv := mustInvoker(t, loadConfig(t, "testdata/lambda-functions.json"), "any", "")
	tests := []struct {
		name, resource, input string
		out                   string // direct: the result; lambda:invoke: the Payload
		err, cause            string
		delay                 time.Duration
		version               string
	}{
		{name: "invoke object", resource: invokeARN, input: `{"FunctionName":"echo","Payload":{"a":[1,"x"]}}`, out: `{"a":[1,"x"]}`},
		{name: "invoke absent payload", resource: invokeARN, input: `{"FunctionName":"echo"}`, out: `{}`},
		{name: "invoke null payload", resource: invokeARN, input: `{"FunctionName":"echo","Payload":null}`, out: `{}`},
		{name: "invoke string payload is JSON text", resource: invokeARN, input: `{"FunctionName":"echo","Payload":"\"hi\""}`, out: `"hi"`},
		{name: "invoke bad JSON text", resource: invokeARN, input: `{"FunctionName":"echo","Payload":"{nope"}`, err: "Lambda.InvalidRequestContentException", cause: "Could not parse request body into json"},
		{name: "invoke by ARN", resource: invokeARN, input: `{"FunctionName":"arn:aws:lambda:us-east-1:111111111111:function:fixed"}`, out: `{"b":"é"}`},
		{name: "invoke by partial ARN", resource: invokeARN, input: `{"FunctionName":"111111111111:function:big"}`, out: `"ababab"`},
		{name: "invoke with version", resource: invokeARN, input: `{"FunctionName":"echo:3","Payload":1}`, out: `1`, version: "3"},
		{name: "invoke with Qualifier", resource: invokeARN, input: `{"FunctionName":"echo","Qualifier":"12","Payload":1}`, out: `1`, version: "12"},
		{name: "invoke alias", resource: invokeARN, input: `{"FunctionName":"arn:aws:lambda:eu-west-1:222222222222:function:prod:live"}`, out: `"live"`},
		{name: "invoke unknown alias", resource: invokeARN, input: `{"FunctionName":"prod:dev"}`, err: "Lambda.ResourceNotFoundException",
			cause: `^Function not found: arn:aws:lambda:us-east-1:111111111111:function:prod:dev \(Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: [0-9a-f-]{36}; Proxy: null\)$`},
		{name: "invoke missing function", resource: invokeARN, input: `{"FunctionName":"missing"}`, err: "Lambda.ResourceNotFoundException", cause: `function:missing:\$LATEST `},
		{name: "invoke without FunctionName", resource: invokeARN, input: `{"Payload":{}}`, err: "States.Runtime", cause: "without a FunctionName"},
		{name: "invoke failure", resource: invokeARN, input: `{"FunctionName":"fail"}`, err: "Exception", cause: `^\{"errorMessage":"x","errorType":"Exception"\}$`},
		{name: "invoke delay", resource: invokeARN, input: `{"FunctionName":"slow","Payload":{"z":1}}`, out: `{"z":1}`, delay: time.Minute},
		{name: "direct", resource: "arn:aws:lambda:us-east-1:111111111111:function:echo", input: `{"b":2}`, out: `{"b":2}`},
		{name: "direct qualified", resource: "arn:aws:lambda:us-east-1:111111111111:function:echo:prod", input: `[true]`, out: `[true]`},
		{name: "direct repeat", resource: "arn:aws:lambda:us-east-1:111111111111:function:big", input: `{}`, out: `"ababab"`},
		// The direct integration reports the cause as the Python runtime wrote it.
		{name: "direct failure", resource: "arn:aws:lambda:us-east-1:111111111111:function:fail", input: `{}`, err: "Exception", cause: `^\{"errorMessage": "x", "errorType": "Exception"\}$`},
		{name: "direct missing", resource: "arn:aws:lambda:us-east-1:111111111111:function:gone", input: `{}`, err: "Lambda.ResourceNotFoundException", cause: "function:gone:"},
		{name: "test case wins", resource: invokeARN, input: `{"FunctionName":"echo"}`, out: `"from the test case"`},
		{name: "other service", resource: "arn:aws:states:::dynamodb:getItem", input: `{}`, err: "States.Runtime", cause: regexp.QuoteMeta(`no mock for state "other service" (resource arn:aws:states:::dynamodb:getItem) in state machine "any": map the state to a MockedResponses entry`)},
	}
	for _, tt := range tests {
		state := tt.name
		if tt.name == "test case wins" {
			state = "Overridden"
		}
		r := inv.Invoke(context.Background(), &task.Request{Resource: tt.resource, StateName: state, Input: obj(t, tt.input)})
		if tt.err != "" {
			if r.Error != tt.err || !regexp.MustCompile(tt.cause).MatchString(r.Cause) {
				t.Errorf("%s: got %+v, want error %s with cause matching %s", tt.name, r, tt.err, tt.cause)
			}
			continue
		}
		if r.Failed() || r.Delay != tt.delay {
			t.Errorf("%s: got %+v, want success after %v", tt.name, r, tt.delay)
			continue
		}
		got := r.Output
		if tt.resource == invokeARN && tt.name != "test case wins" {
			o := r.Output.(*value.Object)
			got, _ = o.Get("Payload")
			want := tt.version
			if want == "" {
				want = "$LATEST"
			}
			if v, _ := o.Get("ExecutedVersion"); v != want {
				t.Errorf("%s: ExecutedVersion %v, want %s", tt.name, v, want)
			}
		}
		if value.String(got) != tt.out {
			t.Errorf("%s: result %s, want %s", tt.name, value.String(got), tt.out)
		}
	}
}

// TestInvokeResponseShape checks the lambda:invoke response against the
// shape AWS records (member and header order, Content-Length as the Python
// runtime's body length, LogResult for LogType Tail).
func TestInvokeResponseShape(t *testing.T) {
	t.Parallel()
	inv := mustInvoker(t, loadConfig(t, "testdata/lambda-functions.json"), "any", "")
	tests := []struct {
		input, keys, all, hdr, length string
	}{
		{
			input:  `{"FunctionName":"echo","Payload":{"a":[1,"é😀"],"b":"\n"}}`,
			keys:   "ExecutedVersion Payload SdkHttpMetadata SdkResponseMetadata StatusCode",
			all:    "X-Amz-Executed-Version x-amzn-Remapped-Content-Length Connection x-amzn-RequestId Content-Length Date X-Amzn-Trace-Id Content-Type",
			hdr:    "Connection Content-Length Content-Type Date X-Amz-Executed-Version x-amzn-Remapped-Content-Length x-amzn-RequestId X-Amzn-Trace-Id",
			length: "43", // {"a": [1, "\u00e9\ud83d\ude00"], "b": "\n"}
		},
		{
			input:  `{"FunctionName":"echo","Payload":"{}","LogType":"Tail"}`,
			keys:   "ExecutedVersion LogResult Payload SdkHttpMetadata SdkResponseMetadata StatusCode",
			all:    "X-Amz-Log-Result X-Amz-Executed-Version x-amzn-Remapped-Content-Length Connection x-amzn-RequestId Content-Length Date X-Amzn-Trace-Id Content-Type",
			hdr:    "Connection Content-Length Content-Type Date X-Amz-Executed-Version X-Amz-Log-Result x-amzn-Remapped-Content-Length x-amzn-RequestId X-Amzn-Trace-Id",
			length: "2",
		},
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, tt := range tests {
		r := inv.Invoke(context.Background(), &task.Request{Resource: invokeARN, StateName: "S", Input: obj(t, tt.input)})
		out, ok := r.Output.(*value.Object)
		if !ok {
			t.Fatalf("%s: %+v", tt.input, r)
		}
		meta := get(t, out, "SdkHttpMetadata").(*value.Object)
		all := get(t, meta, "AllHttpHeaders").(*value.Object)
		hdr := get(t, meta, "HttpHeaders").(*value.Object)
		for _, c := range []struct {
			o    *value.Object
			want string
		}{{out, tt.keys}, {meta, "AllHttpHeaders HttpHeaders HttpStatusCode"}, {all, tt.all}, {hdr, tt.hdr}} {
			if got := strings.Join(c.o.Keys(), " "); got != c.want {
				t.Errorf("%s: keys %q, want %q", tt.input, got, c.want)
			}
		}
		if got := get(t, hdr, "Content-Length"); got != tt.length {
			t.Errorf("%s: Content-Length %v, want %s", tt.input, got, tt.length)
		}
		if got := value.String(get(t, all, "Content-Length")); got != `["`+tt.length+`"]` {
			t.Errorf("%s: AllHttpHeaders Content-Length %s", tt.input, got)
		}
		id := get(t, get(t, out, "SdkResponseMetadata").(*value.Object), "RequestId").(string)
		if !uuid.MatchString(id) || get(t, hdr, "x-amzn-RequestId") != id {
			t.Errorf("%s: request ids %q / %v", tt.input, id, get(t, hdr, "x-amzn-RequestId"))
		}
		if value.String(get(t, all, "X-Amzn-Trace-Id")) != value.String([]any{get(t, hdr, "X-Amzn-Trace-Id")}) {
			t.Errorf("%s: trace ids differ", tt.input)
		}
		if _, err := time.Parse(http.TimeFormat, get(t, hdr, "Date").(string)); err != nil {
			t.Errorf("%s: Date: %v", tt.input, err)
		}
		if get(t, out, "StatusCode") != value.Int(200) || get(t, meta, "HttpStatusCode") != value.Int(200) {
			t.Errorf("%s: status codes", tt.input)
		}
		if lr, ok := out.Get("LogResult"); ok {
			log, err := base64.StdEncoding.DecodeString(lr.(string))
			if err != nil || !strings.HasPrefix(string(log), "START RequestId: "+id) {
				t.Errorf("LogResult %q: %v", log, err)
			}
		}
	}
}

func get(t *testing.T, o *value.Object, k string) any {
	t.Helper()
	v, ok := o.Get(k)
	if !ok {
		t.Fatalf("no %s in %s", k, value.String(o))
	}
	return v
}

func TestMockServes(t *testing.T) {
	t.Parallel()
	inv := mustInvoker(t, loadConfig(t, "testdata/lambda-functions.json"), "any", "").(task.Partial)
	tests := []struct {
		state, resource, input string
		want                   bool
	}{
		{"Overridden", "arn:aws:states:::sqs:sendMessage", `{}`, true},
		{"S", invokeARN, `{"FunctionName":"echo"}`, true},
		{"S", invokeARN, `{"FunctionName":"missing"}`, false},
		{"S", "arn:aws:lambda:us-east-1:111111111111:function:echo", `{}`, true},
		{"S", "arn:aws:states:::sqs:sendMessage", `{}`, false},
	}
	for _, tt := range tests {
		if got := inv.Serves(&task.Request{StateName: tt.state, Resource: tt.resource, Input: obj(t, tt.input)}); got != tt.want {
			t.Errorf("Serves(%s %s %s) = %v", tt.state, tt.resource, tt.input, got)
		}
	}
}

// TestInvokeSubmitted: a mocked response to a .waitForTaskToken or .sync
// Task, success or failure, asks for a TaskSubmitted before it
// (task.Result.Submitted), as AWS records the call that handed the token
// on or started the job (LocalStack's
// local_mocking/test_base_callbacks.snapshot.json); a request-response
// Task's, and a gap in the responses, do not.
func TestInvokeSubmitted(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, "testdata/sfn-local.json")
	inv := mustInvoker(t, cfg, "LambdaSQSIntegration", "RetryPath")
	gap := mustInvoker(t, cfg, "LambdaSQSIntegration", "GapPath")
	for _, tt := range []struct {
		inv     task.Invoker
		pattern task.Pattern
		attempt int
		want    bool
	}{
		{inv, task.WaitForTaskToken, 0, true}, // Throw
		{inv, task.WaitForTaskToken, 3, true}, // Return
		{inv, task.Sync, 3, true},
		{inv, task.Sync2, 0, true},
		{inv, task.RequestResponse, 3, false},
		{gap, task.WaitForTaskToken, 0, false}, // no entry: States.Runtime
	} {
		r := tt.inv.Invoke(context.Background(), &task.Request{StateName: "LambdaState", Attempt: tt.attempt, Pattern: tt.pattern, Resource: "arn:aws:states:::lambda:invoke" + tt.pattern.Suffix(), Input: value.NewObject(0)})
		if got := r.Submitted != nil; got != tt.want {
			t.Errorf("%v #%d: Submitted %v, want %v", tt.pattern, tt.attempt, r.Submitted, tt.want)
		}
	}
}
