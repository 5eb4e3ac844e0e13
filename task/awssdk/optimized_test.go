package awssdk

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// EventBridge putEvents, with no emulator here: the request carries each
// Detail as JSON text, and an answer with failed entries fails the task
// with the answer as its cause, as recorded
// (services.events_task_service.put_events_no_source).
func TestPutEvents(t *testing.T) {
	c, ok := parseResource("arn:aws:states:::events:putEvents", task.RequestResponse)
	if !ok {
		t.Fatal("events:putEvents not served")
	}
	params, _ := value.ParseString(`{"Entries":[{"Detail":"{\"Message\": \"HelloWorld0\"}","DetailType":"d","Source":"s"},{"Detail":{"Message":"HelloWorld1"},"DetailType":"d"}]}`)
	p, err := optimizedParams(c, params)
	if err != nil {
		t.Fatal(err)
	}
	api, op, _, _ := awsmodel.Operation(c.service, c.action)
	r, err := buildRequest(api, op, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"Entries":[{"Detail":"{\"Message\": \"HelloWorld0\"}","DetailType":"d","Source":"s"},{"Detail":"{\"Message\":\"HelloWorld1\"}","DetailType":"d"}]}`; string(r.body) != want {
		t.Errorf("body %s\nwant %s", r.body, want)
	}
	if r.header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || r.header.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Errorf("headers %v", r.header)
	}
	answer := &response{status: 200, header: http.Header{}, body: []byte(`{"FailedEntryCount":1,"Entries":[{"EventId":"e1"},{"ErrorCode":"InvalidArgument","ErrorMessage":"Parameter Source is not valid. Reason: Source is a required argument."}]}`)}
	out, err := parseOutput(api, op, answer)
	if err != nil {
		t.Fatal(err)
	}
	res := optimizedResult(c, out, answer)
	if want := `{"Entries":[{"EventId":"e1"},{"ErrorCode":"InvalidArgument","ErrorMessage":"Parameter Source is not valid. Reason: Source is a required argument."}],"FailedEntryCount":1}`; res.Error != "EventBridge.FailedEntry" || res.Cause != want {
		t.Errorf("got %s: %s\nwant EventBridge.FailedEntry: %s", res.Error, res.Cause, want)
	}
	answer.body = []byte(`{"FailedEntryCount":0,"Entries":[{"EventId":"e1"}]}`)
	out, _ = parseOutput(api, op, answer)
	if res := optimizedResult(c, out, answer); res.Failed() || value.String(res.Output) != `{"Entries":[{"EventId":"e1"}],"FailedEntryCount":0}` {
		t.Errorf("got %s %s: %s", value.String(res.Output), res.Error, res.Cause)
	}
}

// The SdkHttpMetadata of an optimized integration's answer is the SDK for
// Java's: AllHttpHeaders in java.util.HashMap order, HttpHeaders by name,
// and SQS's and SNS's lower-case connection header, as AWS recorded for
// sqs:sendMessage (LocalStack's AWS-validated
// test_sqs_task_service.py::TestTaskServiceSqs::test_send_message and
// test_sns_task_service.py::TestTaskServiceSns::test_fifo_message_attribute)
// and for DynamoDB (services.dynamodb_task_service.base_integrations).
func TestHTTPMetadataOrder(t *testing.T) {
	header := http.Header{}
	for k, v := range map[string]string{"X-Amzn-Requestid": "r", "Connection": "keep-alive", "Content-Length": "106",
		"Date": "d", "Content-Type": "application/x-amz-json-1.0"} {
		header.Set(k, v)
	}
	resp := &response{status: 200, header: header}
	sqs := httpMetadata(call{service: "sqs", action: "sendMessage", optimized: true}, resp)
	if got, want := value.String(sqs), `{"AllHttpHeaders":{"x-amzn-RequestId":["r"],"connection":["keep-alive"],"Content-Length":["106"],"Date":["d"],"Content-Type":["application/x-amz-json-1.0"]},`+
		`"HttpHeaders":{"connection":"keep-alive","Content-Length":"106","Content-Type":"application/x-amz-json-1.0","Date":"d","x-amzn-RequestId":"r"},"HttpStatusCode":200}`; got != want {
		t.Errorf("sqs metadata\n got %s\nwant %s", got, want)
	}
	header.Set("Server", "Server")
	header.Set("X-Amz-Crc32", "1")
	ddb := httpMetadata(call{service: "dynamodb", action: "putItem", optimized: true}, resp)
	all, _ := ddb.Get("AllHttpHeaders")
	if got, want := strings.Join(all.(*value.Object).Keys(), ","), "Server,Connection,x-amzn-RequestId,x-amz-crc32,Content-Length,Date,Content-Type"; got != want {
		t.Errorf("dynamodb AllHttpHeaders = %s, want %s", got, want)
	}
}

// SQS answers an error with its JSON shape's name and, for the SDKs of the
// query protocol, the query code (x-amzn-query-error); the optimized
// integration names the error by the shape, as the SDK for Java 1.x does,
// and its cause gives the query code as that SDK reports it
// (SQS.QueueDoesNotExistException, "Error Code:
// AWS.SimpleQueueService.NonExistentQueue"), as for MissingParameter in
// LocalStack's AWS-validated
// test_task_service_sqs.py::TestTaskServiceSqs::test_send_message_empty_body.
func TestSQSQueryErrorCode(t *testing.T) {
	c, _ := parseResource("arn:aws:states:::sqs:sendMessage", task.RequestResponse)
	api, _, _, _ := awsmodel.Operation(c.service, c.action)
	for _, tc := range []struct{ query, body, name, cause string }{
		{"AWS.SimpleQueueService.NonExistentQueue;Sender", `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`,
			"SQS.QueueDoesNotExistException", "The specified queue does not exist. (Service: AmazonSQS; Status Code: 400; Error Code: AWS.SimpleQueueService.NonExistentQueue; Request ID: rid; Proxy: null)"},
		{"MissingParameter;Sender", `{"__type":"com.amazon.coral.validate#ValidationException","message":"The request must contain the parameter MessageBody."}`,
			"SQS.AmazonSQSException", "The request must contain the parameter MessageBody. (Service: AmazonSQS; Status Code: 400; Error Code: MissingParameter; Request ID: rid; Proxy: null)"},
	} {
		h := http.Header{}
		h.Set("X-Amzn-Query-Error", tc.query)
		h.Set("X-Amzn-Requestid", "rid")
		r := apiError(api, &response{status: 400, header: h, body: []byte(tc.body)}, c)
		if r.Error != tc.name || r.Cause != tc.cause {
			t.Errorf("%s: got %s: %s\nwant %s: %s", tc.query, r.Error, r.Cause, tc.name, tc.cause)
		}
	}
}
