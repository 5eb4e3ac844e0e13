package registry

import (
	"testing"

	"github.com/stepd/stepd/task"
)

// FuzzParse: any input either builds a registry or fails with an
// error; a registry answers Serves for any resource without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"Functions":{"greet":{"Command":["sh","-c","cat"]},"arn:aws:lambda:us-east-1:123456789012:function:p:prod":{"Url":"http://127.0.0.1:1/p"}},"Resources":{"arn:aws:states:::sqs:*":{"LambdaEndpoint":"http://a"}}}`))
	f.Add([]byte(`{"Resources":{"x*":{"Url":"https://h/x","TimeoutSeconds":3}},"Connections":{"c":{"ApiKeyName":"k","ApiKeyValue":"v"}}}`))
	f.Add([]byte(`{"Functions":{"f":{"Url":"http://127.0.0.1:1/f","LambdaShaped":true},"g":{"AwsLambda":{"Region":"us-east-1"},"LambdaShaped":true}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := Parse(data)
		if err != nil {
			if reg != nil {
				t.Fatalf("a registry and an error: %v", err)
			}
			return
		}
		for _, res := range []string{"arn:aws:states:::lambda:invoke", "arn:aws:lambda:us-east-1:123456789012:function:greet", "x1", ""} {
			reg.Serves(&task.Request{Resource: res, Input: nil})
		}
	})
}
