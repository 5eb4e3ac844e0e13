package task

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

const sfnLocal = `{
 "StateMachines": {"sm": {"TestCases": {"happy": {"Check": "Seq", "Boom": "Fail"}}}},
 "MockedResponses": {
  "Seq": {"0": {"Return": {"n": 0}}, "1-2": {"Return": {"n": 1}}, "3": {"Return": {"n": 3}}},
  "Fail": {"0": {"Throw": {"Error": "Custom.Error", "Cause": "it broke"}}}
 }
}`

func TestMockConfigSequences(t *testing.T) {
	t.Parallel()
	cfg, err := ParseMockConfig([]byte(sfnLocal))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := cfg.Invoker("sm", "happy")
	if err != nil {
		t.Fatal(err)
	}
	for attempt, want := range []string{`{"n":0}`, `{"n":1}`, `{"n":1}`, `{"n":3}`, `{"n":3}`} {
		r := inv.Invoke(context.Background(), &Request{StateName: "Check", Attempt: attempt})
		if r.Failed() || value.String(r.Output) != want {
			t.Errorf("attempt %d: %+v, want %s", attempt, r, want)
		}
	}
	r := inv.Invoke(context.Background(), &Request{StateName: "Boom"})
	if r.Error != "Custom.Error" || r.Cause != "it broke" {
		t.Errorf("Throw: %+v", r)
	}
	r = inv.Invoke(context.Background(), &Request{StateName: "Other", Resource: "arn:aws:states:::sqs:sendMessage"})
	if r.Error != "States.Runtime" || !strings.Contains(r.Cause, "Other") {
		t.Errorf("unmocked state: %+v", r)
	}
	if _, err := cfg.Invoker("sm", "nope"); err == nil {
		t.Error("unknown test case accepted")
	}
}

func TestMockConfigErrors(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		`[]`,
		`{"Nope": {}}`,
		`{"MockedResponses": {"R": {"x": {"Return": 1}}}}`,
		`{"MockedResponses": {"R": {"2-1": {"Return": 1}}}}`,
		`{"MockedResponses": {"R": {"0": {"Return": 1, "Throw": {"Error": "E"}}}}}`,
		`{"MockedResponses": {"R": {"0": {"Throw": {"Cause": "no error"}}}}}`,
		`{"StateMachines": {"sm": {"TestCases": {"t": {"S": "Missing"}}}}, "MockedResponses": {}}`,
	} {
		if _, err := ParseMockConfig([]byte(bad)); err == nil {
			t.Errorf("ParseMockConfig(%s) succeeded, want an error", bad)
		}
	}
}

func TestLambdaFunctions(t *testing.T) {
	t.Parallel()
	cfg, err := MockConfigFromValue(obj(t, `{"LambdaFunctions": {
		"arn:aws:lambda:us-east-1:111111111111:function:echo": {"0": {"ReturnInput": true}},
		"arn:aws:lambda:us-east-1:111111111111:function:fail": {"0": {"Throw": {"Error": "Exception", "Cause": "{\"errorMessage\":\"x\",\"errorType\":\"Exception\"}"}}},
		"arn:aws:lambda:us-east-1:111111111111:function:slow": {"0": {"Return": 1, "Delay": 60}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	inv, _ := cfg.Invoker("any", "")
	ctx := context.Background()

	// lambda:invoke wraps the function's result.
	r := inv.Invoke(ctx, &Request{Resource: "arn:aws:states:::lambda:invoke", Input: obj(t, `{"FunctionName":"echo","Payload":{"a":1}}`)})
	out, _ := r.Output.(*value.Object)
	if p, _ := out.Get("Payload"); value.String(p) != `{"a":1}` || r.Failed() {
		t.Errorf("lambda:invoke: %+v", r)
	}
	if sc, _ := out.Get("StatusCode"); sc != value.Int(200) {
		t.Errorf("StatusCode = %v", sc)
	}
	// A string payload is JSON text for the function.
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:states:::lambda:invoke", Input: obj(t, `{"FunctionName":"arn:aws:lambda:us-east-1:111111111111:function:echo","Payload":"\"hi\""}`)})
	if p, _ := r.Output.(*value.Object).Get("Payload"); p != "hi" {
		t.Errorf("string payload: %v", p)
	}
	// A direct function ARN returns the payload itself.
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:lambda:us-east-1:111111111111:function:echo", Input: obj(t, `{"b":2}`)})
	if value.String(r.Output) != `{"b":2}` {
		t.Errorf("direct ARN: %+v", r)
	}
	// Direct ARN failures carry the cause as Lambda's Python runtime writes it.
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:lambda:us-east-1:111111111111:function:fail", Input: obj(t, `{}`)})
	if r.Error != "Exception" || r.Cause != `{"errorMessage": "x", "errorType": "Exception"}` {
		t.Errorf("direct failure: %+v", r)
	}
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:states:::lambda:invoke", Input: obj(t, `{"FunctionName":"fail"}`)})
	if r.Error != "Exception" || r.Cause != `{"errorMessage":"x","errorType":"Exception"}` {
		t.Errorf("invoke failure: %+v", r)
	}
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:states:::lambda:invoke", Input: obj(t, `{"FunctionName":"slow"}`)})
	if r.Delay != time.Minute {
		t.Errorf("Delay = %v", r.Delay)
	}
	r = inv.Invoke(ctx, &Request{Resource: "arn:aws:states:::lambda:invoke", Input: obj(t, `{"FunctionName":"missing"}`)})
	if r.Error != "Lambda.ResourceNotFoundException" {
		t.Errorf("missing function: %+v", r)
	}
}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "handler.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body  string
		out, errStr string
		cause       string
	}{
		{name: "echo input", body: "cat", out: `{"x":[1,"a"]}`},
		{name: "lambda error", body: `echo '{"errorType":"ValueError","errorMessage":"bad"}'; exit 1`, errStr: "ValueError", cause: `{"errorType":"ValueError","errorMessage":"bad"}`},
		{name: "ASL error on stderr", body: `echo '{"Error":"My.Error","Cause":"why"}' >&2; exit 3`, errStr: "My.Error", cause: "why"},
		{name: "plain failure", body: `echo oops >&2; exit 2`, errStr: "States.TaskFailed", cause: "oops"},
		{name: "not JSON", body: `echo hello`, errStr: "States.TaskFailed", cause: "not JSON"},
	}
	for _, tt := range tests {
		c := &Command{Path: script(t, tt.body)}
		r := c.Invoke(context.Background(), &Request{Input: obj(t, `{"x":[1,"a"]}`)})
		if tt.errStr == "" {
			if r.Failed() || value.String(r.Output) != tt.out {
				t.Errorf("%s: %+v", tt.name, r)
			}
			continue
		}
		if r.Error != tt.errStr || !strings.Contains(r.Cause, tt.cause) {
			t.Errorf("%s: %+v, want error %s with cause containing %q", tt.name, r, tt.errStr, tt.cause)
		}
	}
}

func TestCommandCancel(t *testing.T) {
	t.Parallel()
	c := &Command{Path: script(t, "sleep 30")}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := c.Invoke(ctx, &Request{Input: value.NewObject(0)})
	if !r.Failed() || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled command: %+v after %v", r, time.Since(start))
	}
}
