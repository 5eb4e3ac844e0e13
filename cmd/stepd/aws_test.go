package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/internal/awstest"
)

// stepd run calls AWS services where AWS_ENDPOINT_URL_<SERVICE> and
// AWS_ENDPOINT_URL send them: here s3rver and dynalite on 127.0.0.1.
func TestRunAgainstEmulators(t *testing.T) {
	awstest.Env(t, "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER") // s3rver checks signatures with its own keys
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	const emulators = "../../task/awssdk/testdata/emulators"
	t.Setenv("AWS_ENDPOINT_URL", awstest.StartEmulator(t, emulators, "s3rver").URL)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", awstest.StartEmulator(t, emulators, "dynalite").URL)
	def := writeFile(t, "pipeline.json", `{
	  "StartAt": "MakeBucket",
	  "States": {
	    "MakeBucket": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:createBucket",
	      "Parameters": {"Bucket.$": "$.bucket"}, "ResultPath": null, "Next": "MakeTable"},
	    "MakeTable": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:dynamodb:createTable",
	      "Parameters": {"TableName": "runs", "BillingMode": "PAY_PER_REQUEST",
	        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
	        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]},
	      "ResultPath": null, "Next": "Store"},
	    "Store": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:putObject",
	      "Parameters": {"Bucket.$": "$.bucket", "Key": "rows.json", "Body.$": "$.rows"}, "ResultSelector": {"ETag.$": "$.ETag"},
	      "ResultPath": "$.put", "Next": "Load"},
	    "Load": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
	      "Parameters": {"Bucket.$": "$.bucket", "Key": "rows.json"},
	      "ResultSelector": {"rows.$": "States.StringToJson($.Body)"}, "ResultPath": "$.loaded", "Next": "Record"},
	    "Record": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem",
	      "Parameters": {"TableName": "runs", "Item": {"id": {"S": "run-1"}, "rows": {"N.$": "States.Format('{}', States.ArrayLength($.loaded.rows))"}}},
	      "Retry": [{"ErrorEquals": ["DynamoDb.ResourceNotFoundException"], "IntervalSeconds": 1, "MaxAttempts": 20}],
	      "ResultPath": null, "Next": "Read"},
	    "Read": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem",
	      "Parameters": {"TableName": "runs", "Key": {"id": {"S": "run-1"}}},
	      "ResultSelector": {"rows.$": "$.Item.rows.N", "status.$": "$.SdkHttpMetadata.HttpStatusCode"}, "ResultPath": "$.read", "Next": "Missing"},
	    "Missing": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
	      "Parameters": {"Bucket.$": "$.bucket", "Key": "nope"},
	      "Catch": [{"ErrorEquals": ["S3.NoSuchKeyException"], "ResultPath": "$.caught", "Next": "Done"}], "End": true},
	    "Done": {"Type": "Pass", "Parameters": {"etag.$": "$.put.ETag", "read.$": "$.read", "error.$": "$.caught.Error"}, "End": true}
	  }
	}`)
	code, stdout, stderr := runMain(t, "", "run", def, "--input", `{"bucket":"pipeline","rows":[{"a":1},{"a":2}]}`)
	// The ETag is the MD5 of the rows' JSON text, [{"a":1},{"a":2}].
	want := `{"etag":"\"` + "f729e2fdf635f20ffa664fa04f80043e" + `\"","read":{"rows":"2","status":200},"error":"S3.NoSuchKeyException"}`
	if code != 0 || strings.TrimSpace(stdout) != want {
		t.Fatalf("stepd run: exit %d\n%s\nwant %s\n%s", code, stdout, want, stderr)
	}
}

// The README's example examples/aws-pipeline runs against the emulators
// with its registry's endpoints pointed at them, twice: the second run
// finds the bucket, table and queue there ("already exists" is caught).
func TestAWSPipelineExample(t *testing.T) {
	awstest.Env(t, "")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	const emulators = "../../task/awssdk/testdata/emulators"
	data, err := os.ReadFile("../../examples/aws-pipeline/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := string(data)
	for name, port := range map[string]string{"s3rver": "4569", "dynalite": "4567", "fauxqs": "4566"} {
		reg = strings.Replace(reg, "http://127.0.0.1:"+port, awstest.StartEmulator(t, emulators, name).URL, 1)
	}
	cfg := writeFile(t, "registry.json", reg)
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := runMain(t, "", "run", "../../examples/aws-pipeline/pipeline.json", "--config", cfg, "--input", "@../../examples/aws-pipeline/input.json")
		// The ETag is the MD5 of the rows' JSON text.
		want := `{"batchId":"2026-11-25","rows":3,"firstRowBatch":"2026-11-25","etag":"\"bd42b4b0279597b7973c3c4bb43d58fa\"","announced":1}`
		if code != 0 || strings.TrimSpace(stdout) != want {
			t.Fatalf("run %d: exit %d\n%s\nwant %s\n%s", run, code, stdout, want, stderr)
		}
	}
}

// stepd serve runs the same pipeline as a Standard execution, its registry
// pointing at the emulators, through the AWS API.
func TestServeAgainstEmulators(t *testing.T) {
	awstest.Env(t, "")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	const emulators = "../../task/awssdk/testdata/emulators"
	data, err := os.ReadFile("../../examples/aws-pipeline/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := string(data)
	for name, port := range map[string]string{"s3rver": "4569", "dynalite": "4567", "fauxqs": "4566"} {
		reg = strings.Replace(reg, "http://127.0.0.1:"+port, awstest.StartEmulator(t, emulators, name).URL, 1)
	}
	reg = strings.Replace(reg, `"Region": "us-east-1"`, `"Region": "us-east-1", "TimeoutSeconds": 30`, 1)
	url := startInProcess(t, "--data", "", "--config", writeFile(t, "registry.json", reg))
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	def, err := os.ReadFile("../../examples/aws-pipeline/pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile("../../examples/aws-pipeline/input.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("pipeline"), Definition: aws.String(string(def)),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/r")})
	if err != nil {
		t.Fatal(err)
	}
	input = []byte(strings.Replace(string(input), "stepd-pipeline", "stepd-pipeline-serve", 1))
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(string(input))})
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinished(t, c, *x.ExecutionArn)
	want := `{"batchId":"2026-11-25","rows":3,"firstRowBatch":"2026-11-25","etag":"\"bd42b4b0279597b7973c3c4bb43d58fa\"","announced":1}`
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
		t.Fatalf("%s %s %s: %s", d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause))
	}
}
