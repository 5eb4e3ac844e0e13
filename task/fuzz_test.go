package task

import (
	"os"
	"testing"
)

// FuzzParseMockConfig: any input either parses or fails with an error;
// a parsed configuration yields an invoker or an error for any test case.
func FuzzParseMockConfig(f *testing.F) {
	f.Add([]byte(`{"StateMachines":{"m":{"TestCases":{"t":{"S":"R"}}}},"MockedResponses":{"R":{"0-1":{"Return":{"a":1}},"2":{"Throw":{"Error":"E","Cause":"c"}}}}}`))
	f.Add([]byte(`{"LambdaFunctions":{"f":{"ReturnRepeat":3}}}`))
	if data, err := os.ReadFile("../examples/job-poller/mocks.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseMockConfig(data)
		if err != nil {
			if cfg != nil {
				t.Fatalf("a configuration and an error: %v", err)
			}
			return
		}
		if inv, err := cfg.Invoker("m", "t"); err == nil && inv == nil {
			t.Fatal("no invoker and no error")
		}
	})
}

// FuzzParseRegistry: any input either builds a registry or fails with an
// error; a registry answers Serves for any resource without panicking.
func FuzzParseRegistry(f *testing.F) {
	f.Add([]byte(`{"Functions":{"greet":{"Command":["sh","-c","cat"]},"arn:aws:lambda:us-east-1:123456789012:function:p:prod":{"Url":"http://127.0.0.1:1/p"}},"Resources":{"arn:aws:states:::sqs:*":{"LambdaEndpoint":"http://a"}}}`))
	f.Add([]byte(`{"Resources":{"x*":{"Url":"https://h/x","TimeoutSeconds":3}},"Connections":{"c":{"ApiKeyName":"k","ApiKeyValue":"v"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := ParseRegistry(data)
		if err != nil {
			if reg != nil {
				t.Fatalf("a registry and an error: %v", err)
			}
			return
		}
		for _, res := range []string{"arn:aws:states:::lambda:invoke", "arn:aws:lambda:us-east-1:123456789012:function:greet", "x1", ""} {
			reg.Serves(&Request{Resource: res, Input: nil})
		}
	})
}
