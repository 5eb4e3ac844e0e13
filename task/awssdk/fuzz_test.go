package awssdk

import (
	"net/http"
	"testing"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// ops cover the five protocols.
var fuzzOps = [][2]string{
	{"s3", "getObject"}, {"s3", "listObjectsV2"}, {"sns", "publish"}, {"dynamodb", "getItem"},
	{"sqs", "receiveMessage"}, {"lambda", "invoke"}, {"ec2", "describeInstances"}, {"s3", "putBucketTagging"},
}

// FuzzResponse feeds answers to the response and error parsers of every
// protocol: they never panic, and a result is a JSON value.
func FuzzResponse(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`<?xml version="1.0"?><GetObjectOutput/>`))
	f.Add(uint8(2), 200, []byte(`<PublishResponse><PublishResult><MessageId>m</MessageId></PublishResult></PublishResponse>`))
	f.Add(uint8(3), 200, []byte(`{"Item":{"id":{"S":"1"}}}`))
	f.Add(uint8(3), 400, []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"x"}`))
	f.Add(uint8(0), 404, []byte(`<Error><Code>NoSuchKey</Code><Message>m</Message></Error>`))
	f.Add(uint8(1), 200, []byte(`<ListBucketResult><Contents><Key>k</Key><Size>1</Size></Contents></ListBucketResult>`))
	f.Fuzz(func(t *testing.T, which uint8, status int, body []byte) {
		o := fuzzOps[int(which)%len(fuzzOps)]
		api, op, ok, err := awsmodel.Operation(o[0], o[1])
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", o, ok, err)
		}
		resp := &response{status: status, header: http.Header{"Content-Length": {"5"}, "Last-Modified": {string(body)}}, body: body}
		if out, err := parseOutput(api, op, resp); err == nil {
			if _, err := value.Parse(value.Append(nil, out)); err != nil {
				t.Fatalf("output %q is not JSON: %v", value.Append(nil, out), err)
			}
		}
		if r := apiError(api, resp, call{service: o[0], action: o[1], optimized: which%2 == 0}); r.Error == "" {
			t.Fatal("an error answer without an error name")
		}
	})
}

// FuzzRequest builds requests from arbitrary resources and parameters:
// never a panic.
func FuzzRequest(f *testing.F) {
	f.Add("arn:aws:states:::aws-sdk:s3:putObject", uint8(task.RequestResponse), `{"Bucket":"b","Key":"a/b c","Body":{"x":1},"Metadata":{"k":"v"}}`)
	f.Add("arn:aws:states:::dynamodb:putItem", uint8(task.RequestResponse), `{"TableName":"t","Item":{"id":{"S":"1"}}}`)
	f.Add("arn:aws:states:::sns:publish.waitForTaskToken", uint8(task.WaitForTaskToken), `{"TopicArn":"t","Message":{"a":[1]}}`)
	f.Add("arn:aws:states:::aws-sdk:ec2:describeInstances", uint8(task.RequestResponse), `{"Filters":[{"Name":"n","Values":["v"]}]}`)
	f.Add("arn:aws:states:::aws-sdk:s3:putBucketTagging", uint8(task.RequestResponse), `{"Bucket":"b","Tagging":{"TagSet":[{"Key":"k","Value":"v"}]}}`)
	f.Add("arn:aws:states:::ecs:runTask.sync", uint8(task.Sync), `{"Cluster":"c","TaskDefinition":"d"}`)
	f.Fuzz(func(t *testing.T, resource string, pattern uint8, params string) {
		c, ok := parseResource(resource, task.Pattern(pattern))
		if !ok {
			return
		}
		api, op, found, err := awsmodel.Operation(c.service, c.action)
		if err != nil || !found {
			return
		}
		v, err := value.ParseString(params)
		if err != nil {
			return
		}
		if c.optimized {
			if v, err = optimizedParams(c, v); err != nil {
				return
			}
		}
		_, _ = buildRequest(api, op, v)
	})
}
