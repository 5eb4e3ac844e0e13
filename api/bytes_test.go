package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
)

// TestBadBytes: bytes outside UTF-8 anywhere in a request are refused
// with a SerializationException naming the member; NUL and lone surrogate
// escapes in names and ARNs with InvalidName and InvalidArn; a lone
// surrogate in an input is read as U+FFFD and NUL kept.
func TestBadBytes(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	const role = `"roleArn":"arn:aws:iam::123456789012:role/r"`
	const def = `"definition":"{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"`
	code, typ, msg := post(t, srv.URL, "", "CreateStateMachine", `{"name":"m",`+role+`,`+def+`}`)
	if code != 200 {
		t.Fatalf("CreateStateMachine: %d %s %s", code, typ, msg)
	}
	smARN := "arn:aws:states:us-east-1:123456789012:stateMachine:m"
	for _, c := range []struct {
		op, body, code, member string
	}{
		{"StartExecution", `{"stateMachineArn":"` + smARN + `","input":"{\"a\":\"` + "\xff" + `\"}"}`, "SerializationException", "'input'"},
		{"CreateStateMachine", `{"name":"n",` + role + `,"definition":"{\"StartAt\":\"` + "\xc3\x28" + `\"}"}`, "SerializationException", "'definition'"},
		{"CreateStateMachine", `{"name":"n",` + role + `,` + def + `,"tags":[{"key":"k","value":"` + "\xed\xa0\x80" + `"}]}`, "SerializationException", "'tags[0].value'"},
		{"StartExecution", `{"stateMachineArn":"` + smARN + `","na` + "\xff" + `me":"x"}`, "SerializationException", "'na"},
		{"StartExecution", `{"stateMachineArn":"` + smARN + `","name":"a\u0000b"}`, "InvalidName", "Invalid Name: 'a\x00b'"},
		{"StartExecution", `{"stateMachineArn":"` + smARN + `","name":"a\ud800b"}`, "InvalidName", "surrogate"},
		{"StartExecution", `{"stateMachineArn":"` + smARN + `","name":"a\udc00\ud800"}`, "InvalidName", "surrogate"},
		{"CreateActivity", `{"name":"\u0000"}`, "InvalidName", "Invalid Name: '\x00'"},
		{"StartExecution", `{"stateMachineArn":"` + smARN + `\u0000"}`, "InvalidArn", "'stateMachineArn'"},
		{"DescribeExecution", `{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:m:\ud800"}`, "InvalidArn", "'executionArn'"},
		{"ListStateMachines", `{"nextToken":"` + "\x80" + `"}`, "SerializationException", "'nextToken'"},
		{"ListStateMachines", `{"nextToken":` + "\x80", "SerializationException", "offset"},
	} {
		code, typ, msg := post(t, srv.URL, "", c.op, c.body)
		if code != 400 || typ != c.code || !strings.Contains(msg, c.member) {
			t.Errorf("%s %q: %d %s %q, want 400 %s naming %s", c.op, c.body, code, typ, msg, c.code, c.member)
		}
	}
	// A surrogate pair is no lone surrogate, and \\ud800 is no escape.
	if code, typ, msg := post(t, srv.URL, "", "StartExecution", `{"stateMachineArn":"`+smARN+`","name":"a\ud83d\ude00"}`); typ == "InvalidName" && strings.Contains(msg, "surrogate") {
		t.Errorf("a surrogate pair: %d %s %s", code, typ, msg)
	}
	// In an input, a lone surrogate is read as U+FFFD, and NUL is kept
	// (an Express state machine, whose StartSyncExecution answers the
	// output).
	if code, typ, msg := post(t, srv.URL, "", "CreateStateMachine", `{"name":"x","type":"EXPRESS",`+role+`,`+def+`}`); code != 200 {
		t.Fatalf("CreateStateMachine: %d %s %s", code, typ, msg)
	}
	for _, c := range []struct{ input, want string }{
		{`{\"a\":\"x\\ud800y\"}`, "{\"a\":\"x\ufffdy\"}"},
		{`{\"a\":\"x\ud800y\"}`, "{\"a\":\"x\ufffdy\"}"},
		{`{\"a\":\"x\\u0000y\"}`, `{"a":"x\u0000y"}`},
	} {
		var out struct {
			Status string `json:"status"`
			Output string `json:"output"`
		}
		code := rawPost(t, srv.URL, "StartSyncExecution", `{"stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:x","input":"`+c.input+`"}`, &out)
		if code != 200 || out.Status != "SUCCEEDED" || out.Output != c.want {
			t.Errorf("input %s: %d %s output %q, want %q", c.input, code, out.Status, out.Output, c.want)
		}
	}
}

// rawPost sends one API request and decodes its answer into out.
func rawPost(t *testing.T, url, op, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v: %s", op, err, b)
	}
	return resp.StatusCode
}
