package awssdk

import (
	"net/http"
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
