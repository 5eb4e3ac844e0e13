package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/awstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	awstest.StopEmulators()
	os.Exit(code)
}

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
