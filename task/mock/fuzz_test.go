package mock

import (
	"os"
	"testing"
)

// FuzzParse: any input either parses or fails with an error;
// a parsed configuration yields an invoker or an error for any test case.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"StateMachines":{"m":{"TestCases":{"t":{"S":"R"}}}},"MockedResponses":{"R":{"0-1":{"Return":{"a":1}},"2":{"Throw":{"Error":"E","Cause":"c"}}}}}`))
	f.Add([]byte(`{"LambdaFunctions":{"f":{"ReturnRepeat":3}}}`))
	if data, err := os.ReadFile("../../examples/job-poller/mocks.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
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
