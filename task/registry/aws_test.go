package registry_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/internal/testlog"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/registry"
	"github.com/stepd/stepd/value"
)

func TestMain(m *testing.M) {
	code := testlog.Run(m)
	awstest.StopEmulators()
	os.Exit(code)
}

// The registry's Aws section sends AWS SDK and optimized integrations to
// an emulator; its own handlers still take precedence.
func TestRegistryAws(t *testing.T) {
	awstest.Env(t, "us-east-1")
	dyn := awstest.StartEmulator(t, "../awssdk/testdata/emulators", "dynalite")
	reg, err := registry.Parse([]byte(`{
		"Resources": {"arn:aws:states:::dynamodb:getItem": {"Command": ["echo", "{\"local\":true}"]}},
		"Aws": {"Region": "eu-west-1", "Endpoints": {"dynamodb": "` + dyn.URL + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	run := func(resource, params string) task.Result {
		in, err := value.ParseString(params)
		if err != nil {
			t.Fatal(err)
		}
		req := &task.Request{Resource: resource, StateName: "T", Input: in}
		if !reg.Serves(req) {
			t.Errorf("%s: Serves = false", resource)
		}
		return reg.Invoke(context.Background(), req)
	}
	res := run("arn:aws:states:::aws-sdk:dynamodb:listTables", `{}`)
	if res.Failed() || value.String(res.Output) != `{"TableNames":[]}` {
		t.Errorf("listTables = %s %s: %s", value.String(res.Output), res.Error, res.Cause)
	}
	if res := run("arn:aws:states:::dynamodb:getItem", `{}`); value.String(res.Output) != `{"local":true}` {
		t.Errorf("getItem with a Resources handler = %s %s: %s", value.String(res.Output), res.Error, res.Cause)
	}
	res = run("arn:aws:states:::dynamodb:putItem", `{"TableName":"none","Item":{"id":{"S":"1"}}}`)
	if res.Error != "DynamoDB.ResourceNotFoundException" { // optimized: the 1.x SDK's name
		t.Errorf("putItem = %s: %s", res.Error, res.Cause)
	}
	if _, err := registry.Parse([]byte(`{"Aws": {"Endpoints": {"s3": "localhost:4569"}}}`)); err == nil || !strings.Contains(err.Error(), "want an http or https URL") {
		t.Errorf("a bad endpoint: %v", err)
	}
}
