package registry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stepd/stepd/internal/awstest"

	"github.com/stepd/stepd/task"
)

// TestAwsLambda serves functions with AwsLambda handlers against a fake
// Lambda Invoke API on 127.0.0.1: the SDK signs each call with the
// environment's credentials for the configured region, and results, function
// errors and API errors come back as Step Functions reports them.
func TestAwsLambda(t *testing.T) {
	awstest.Env(t, "")
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDSTEPDTEST/") || !strings.Contains(auth, "/eu-west-3/lambda/aws4_request") {
			w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"message":"The security token included in the request is invalid."}`))
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/2015-03-31/functions/"), "/invocations")
		if _, fn, ok := strings.Cut(name, ":function:"); ok {
			name, _, _ = strings.Cut(fn, ":")
		}
		w.Header().Set("X-Amzn-Requestid", "req-1")
		switch name {
		case "echo":
			w.Header().Set("X-Amz-Executed-Version", "$LATEST")
			w.Write(append(append([]byte(`{"got":`), body...), '}'))
		case "fails":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorMessage":"no items","errorType":"OrderError","stackTrace":[]}`))
		case "text":
			w.Write([]byte(`not json`))
		case "throttled":
			w.Header().Set("X-Amzn-Errortype", "TooManyRequestsException")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"Type":"User","message":"Rate Exceeded."}`))
		default:
			w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"Type":"User","message":"Function not found: ` + name + `"}`))
		}
	}))
	defer srv.Close()
	handler := `{"AwsLambda": {"Region": "eu-west-3", "Endpoint": "` + srv.URL + `"}}`
	reg, err := Parse([]byte(`{"Functions": {"echo": ` + handler + `, "fails": ` + handler + `, "text": ` + handler +
		`, "throttled": ` + handler + `, "gone": ` + handler + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctxObj := mustParse(t, `{"Execution":{"Id":"arn:aws:states:eu-west-3:123456789012:execution:m:e"}}`)
	tests := []struct {
		name, resource, input string
		output                string // JSON, or a prefix of it ending in "..." for invoke responses
		error, cause          string // error name, and text its cause contains
		call                  string
	}{
		{name: "bare ARN", resource: "arn:aws:lambda:eu-west-3:123456789012:function:echo", input: `{"n":1}`, output: `{"got":{"n":1}}`,
			call: "POST /2015-03-31/functions/arn%3Aaws%3Alambda%3Aeu-west-3%3A123456789012%3Afunction%3Aecho/invocations"},
		{name: "lambda:invoke", resource: "arn:aws:states:::lambda:invoke", input: `{"FunctionName":"echo","Payload":{"n":2}}`,
			output: `{"ExecutedVersion":"$LATEST","Payload":{"got":{"n":2}},...`, call: "POST /2015-03-31/functions/echo/invocations"},
		{name: "lambda:invoke with a Qualifier", resource: "arn:aws:states:::lambda:invoke", input: `{"FunctionName":"echo","Qualifier":"prod","Payload":{}}`,
			call: "POST /2015-03-31/functions/echo/invocations?Qualifier=prod"},
		{name: "function error", resource: "arn:aws:states:::lambda:invoke", input: `{"FunctionName":"fails"}`,
			error: "OrderError", cause: `"errorMessage":"no items"`, call: "POST /2015-03-31/functions/fails/invocations"},
		{name: "not JSON", resource: "arn:aws:states:::lambda:invoke", input: `{"FunctionName":"text"}`,
			error: "States.TaskFailed", cause: "other than JSON", call: "POST /2015-03-31/functions/text/invocations"},
		{name: "throttled", resource: "arn:aws:states:::lambda:invoke", input: `{"FunctionName":"throttled"}`, error: "Lambda.TooManyRequestsException",
			cause: "Rate Exceeded. (Service: AWSLambda; Status Code: 429; Error Code: TooManyRequestsException; Request ID: req-1; Proxy: null)",
			call:  "POST /2015-03-31/functions/throttled/invocations"},
		{name: "function not found", resource: "arn:aws:lambda:eu-west-3:123456789012:function:gone", input: `{}`, error: "Lambda.ResourceNotFoundException",
			cause: "Status Code: 404", call: "POST /2015-03-31/functions/arn%3Aaws%3Alambda%3Aeu-west-3%3A123456789012%3Afunction%3Agone/invocations"},
	}
	for _, tt := range tests {
		mu.Lock()
		calls = nil
		mu.Unlock()
		req := &task.Request{Resource: tt.resource, StateName: "S", Input: mustParse(t, tt.input), Context: ctxObj}
		if !reg.Serves(req) {
			t.Errorf("%s: not served", tt.name)
			continue
		}
		res := reg.Invoke(context.Background(), req)
		if res.Error != tt.error || !strings.Contains(res.Cause, tt.cause) {
			t.Errorf("%s: error %q cause %q, want %q containing %q", tt.name, res.Error, res.Cause, tt.error, tt.cause)
		}
		mu.Lock()
		if len(calls) != 1 || calls[0] != tt.call {
			t.Errorf("%s: calls %q, want one %q (no retries: the state's Retry decides)", tt.name, calls, tt.call)
		}
		mu.Unlock()
		checkOutput(t, tt.name, res, tt.output)
	}
}

// TestAwsLambdaConfiguration: a region must come from the handler or the
// environment, and AwsLambda serves functions only.
func TestAwsLambdaConfiguration(t *testing.T) {
	awstest.Env(t, "")
	for _, tt := range []struct{ cfg, want string }{
		{`{"Functions":{"f":{"AwsLambda":{}}}}`, "Functions.f.AwsLambda: no region"},
		{`{"Functions":{"f":{"AwsLambda":{"Region":"us-east-1","Endpoint":"ftp://x"}}}}`, "Functions.f.AwsLambda.Endpoint: want an http or https URL"},
		{`{"Resources":{"arn:aws:states:::sqs:*":{"AwsLambda":{"Region":"us-east-1"}}}}`, "AwsLambda serves Functions only"},
		{`{"Functions":{"f":{"AwsLambda":{"Region":"us-east-1"},"Command":["x"]}}}`, "want exactly one of Command, Url, LambdaEndpoint and AwsLambda"},
	} {
		if _, err := Parse([]byte(tt.cfg)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.cfg, err, tt.want)
		}
	}
	t.Setenv("AWS_REGION", "ap-south-1")
	if _, err := Parse([]byte(`{"Functions":{"f":{"AwsLambda":{}}}}`)); err != nil {
		t.Errorf("region from AWS_REGION: %v", err)
	}
}
