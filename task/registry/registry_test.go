package registry

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	var lambdaPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/price":
			var in struct{ Qty int }
			_ = json.Unmarshal(body, &in)
			w.Write([]byte(`{"total":` + strings.Repeat("1", in.Qty) + `}`))
		case r.URL.Path == "/broken":
			http.Error(w, "database down", http.StatusBadGateway)
		case r.URL.Path == "/text":
			w.Write([]byte("not json"))
		case strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/"):
			lambdaPath = r.URL.Path
			if strings.Contains(string(body), "fail") {
				w.Header().Set("X-Amz-Function-Error", "Unhandled")
				w.Write([]byte(`{"errorMessage":"no stock","errorType":"OutOfStock"}`))
				return
			}
			w.Write(append([]byte(`{"echo":`), append(body, '}')...))
		case r.URL.Path == "/sqs":
			w.Write([]byte(`{"MessageId":"m-1"}`))
		}
	}))
	defer srv.Close()
	cfg := `{
	  "Functions": {
	    "greet": {"Command": ["sh", "-c", "read -r line; printf '{\"hello\":%s}' \"$line\""]},
	    "arn:aws:lambda:us-east-1:123456789012:function:price": {"Url": "` + srv.URL + `/price"},
	    "broken": {"Url": "` + srv.URL + `/broken"},
	    "text": {"Url": "` + srv.URL + `/text"},
	    "resize": {"LambdaEndpoint": "` + srv.URL + `/"}
	  },
	  "Resources": {"arn:aws:states:::sqs:*": {"Url": "` + srv.URL + `/sqs"}}
	}`
	reg, err := Parse([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctxObj := mustParse(t, `{"Execution":{"Id":"arn:aws:states:us-east-1:123456789012:execution:m:e"}}`)
	invoke := func(resource, input string) *task.Request {
		return &task.Request{Resource: resource, StateName: "S", Input: mustParse(t, input), Context: ctxObj}
	}
	tests := []struct {
		name        string
		req         *task.Request
		serves      bool
		output      string // JSON, or a prefix of it ending in "..." for invoke responses
		error, want string // error name, and text its cause contains
	}{
		{name: "bare ARN to a command", req: invoke("arn:aws:lambda:us-east-1:123456789012:function:greet", `{"n":1}`), serves: true, output: `{"hello":{"n":1}}`},
		{name: "lambda:invoke to a command", req: invoke("arn:aws:states:::lambda:invoke", `{"FunctionName":"greet","Payload":{"n":2}}`), serves: true, output: `{"ExecutedVersion":"$LATEST","Payload":{"hello":{"n":2}},...`},
		{name: "qualified ARN to a Url", req: invoke("arn:aws:lambda:us-east-1:123456789012:function:price:prod", `{"Qty":3}`), serves: true, output: `{"total":111}`},
		// A function no handler serves does not exist, as Lambda answers.
		{name: "function in another account", req: invoke("arn:aws:lambda:us-east-1:999999999999:function:price", `{}`), serves: true, error: "Lambda.ResourceNotFoundException",
			want: "Function not found: arn:aws:lambda:us-east-1:999999999999:function:price:$LATEST (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: "},
		{name: "Url answering 502", req: invoke("arn:aws:lambda:us-east-1:123456789012:function:broken", `{}`), serves: true, error: "States.TaskFailed", want: "502 Bad Gateway: database down"},
		{name: "Url answering text", req: invoke("arn:aws:lambda:us-east-1:123456789012:function:text", `{}`), serves: true, error: "States.TaskFailed", want: "other than JSON"},
		{name: "Lambda endpoint", req: invoke("arn:aws:states:::lambda:invoke", `{"FunctionName":"resize","Payload":{"w":1}}`), serves: true, output: `{"ExecutedVersion":"$LATEST","Payload":{"echo":{"w":1}},...`},
		{name: "Lambda endpoint function error", req: invoke("arn:aws:states:::lambda:invoke", `{"FunctionName":"resize","Payload":{"fail":true}}`), serves: true, error: "OutOfStock", want: `"errorMessage":"no stock"`},
		{name: "unregistered function", req: invoke("arn:aws:states:::lambda:invoke", `{"FunctionName":"nope"}`), serves: true, error: "Lambda.ResourceNotFoundException",
			want: "Function not found: arn:aws:lambda:us-east-1:123456789012:function:nope:$LATEST (Service: AWSLambda; Status Code: 404;"},
		{name: "resource prefix", req: invoke("arn:aws:states:::sqs:sendMessage", `{"QueueUrl":"q"}`), serves: true, output: `{"MessageId":"m-1"}`},
		{name: "unknown resource", req: invoke("arn:aws:states:::elasticmapreduce:createCluster.sync", `{}`), serves: false, error: "States.Runtime", want: "add it to Resources"},
	}
	for _, tt := range tests {
		if got := reg.Serves(tt.req); got != tt.serves {
			t.Errorf("%s: Serves = %v, want %v", tt.name, got, tt.serves)
		}
		res := reg.Invoke(context.Background(), tt.req)
		if res.Error != tt.error || !strings.Contains(res.Cause, tt.want) {
			t.Errorf("%s: error %q cause %q, want %q containing %q", tt.name, res.Error, res.Cause, tt.error, tt.want)
			continue
		}
		checkOutput(t, tt.name, res, tt.output)
	}
	if lambdaPath != "/2015-03-31/functions/resize/invocations" {
		t.Errorf("Lambda endpoint called at %q", lambdaPath)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ cfg, want string }{
		{`{"Function":{}}`, `registry: 1:2: Function: unknown member (did you mean Functions?)`},
		{`{"Functions":{"f":{"Comand":["x"]}}}`, `registry: 1:20: Functions.f.Comand: unknown member (did you mean Command?)`},
		{`{"Resources":{"arn:aws:states:::sqs:sendMessage":{"Command":["x"],"Evn":{}}}}`, `Resources."arn:aws:states:::sqs:sendMessage".Evn: unknown member (did you mean Env?)`},
		{`{"Connections":{"arn:c":{"ApiKeyNam":"x"}}}`, `Connections."arn:c".ApiKeyNam: unknown member (did you mean ApiKeyName?)`},
		{`{"Functions":{"f":{"Command":["x"],"TimeoutSeconds":"9"}}}`, `Functions.f.TimeoutSeconds: want a whole number, got a string`},
		{`{"Functions":{"f":{}}}`, "Functions.f: want exactly one of Command, Url, LambdaEndpoint and AwsLambda"},
		{`{"Functions":{"f":{"Command":["x"],"Url":"http://a"}}}`, "Functions.f: want exactly one"},
		{`{"Functions":{"bad name!":{"Command":["x"]}}}`, "Functions.bad name!: not a Lambda function name"},
		{`{"Functions":{"f":{"Url":"ftp://a"}}}`, `Functions.f.Url: want an http or https URL, got "ftp://a"`},
		{`{"Functions":{"f":{"Url":"http://a","TimeoutSeconds":-1}}}`, "Functions.f.TimeoutSeconds: must not be negative"},
		{`{"Resources":{"arn:aws:states:::sqs:*":{"LambdaEndpoint":"http://a"}}}`, "LambdaEndpoint serves Functions only"},
		{`{"Resources":{"":{"Command":["x"]}}}`, "an empty resource name"},
		{`{"Functions":{"f":{"AwsLambda":{"Region":"us-east-1"},"LambdaShaped":true}}}`, "Functions.f.LambdaShaped: AwsLambda reports function errors itself"},
		{`{"Functions":{"f":{"Url":"http://a","LambdaShaped":"yes"}}}`, "Functions.f.LambdaShaped"},
		{`{"Functions":[]}`, "registry: 1:14: Functions: want an object, got an array"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.cfg))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.cfg, err, tt.want)
		}
	}
}

// checkOutput compares a result's output with want: JSON, or a prefix of
// it ending in "..." for a lambda:invoke response; "" checks nothing.
func checkOutput(t *testing.T, name string, res task.Result, want string) {
	t.Helper()
	if want == "" {
		return
	}
	got := value.String(res.Output)
	if prefix, ok := strings.CutSuffix(want, "..."); ok {
		if !strings.HasPrefix(got, prefix) || !strings.Contains(got, `"StatusCode":200`) {
			t.Errorf("%s: output %s, want an invoke response starting %s", name, got, prefix)
		}
	} else if got != want {
		t.Errorf("%s: output %s, want %s", name, got, want)
	}
}
