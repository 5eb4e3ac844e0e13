package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRunHTTPTask runs an HTTP Task against a real server on 127.0.0.1,
// authorised by an API key connection from --connections.
func TestRunHTTPTask(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "s3cret" {
			http.Error(w, `{"message":"forbidden"}`, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"order":%q}`, r.URL.Query().Get("id"))
	}))
	defer srv.Close()
	const arn = "arn:aws:events:us-east-1:123456789012:connection/orders/abc"
	def := writeFile(t, "http.json", `{"StartAt":"Get","States":{"Get":{"Type":"Task","Resource":"arn:aws:states:::http:invoke",
		"Parameters":{"ApiEndpoint":"`+srv.URL+`/orders","Method":"GET","QueryParameters":{"id.$":"$.id"},
		"Authentication":{"ConnectionArn":"`+arn+`"}},
		"ResultSelector":{"status.$":"$.StatusCode","body.$":"$.ResponseBody"},"End":true}}}`)
	good := writeFile(t, "good.json", `{"`+arn+`":{"ApiKeyName":"X-Api-Key","ApiKeyValue":"s3cret"}}`)
	bad := writeFile(t, "bad.json", `{"`+arn+`":{"ApiKeyName":"X-Api-Key","ApiKeyValue":"wrong"}}`)
	typo := writeFile(t, "typo.json", `{"`+arn+`":{"ApiKey":"X-Api-Key"}}`)

	tests := []runCase{
		{name: "authorised", args: []string{"run", def, "--input", `{"id":"42"}`, "--connections", good}, code: 0, stdout: `{"status":200,"body":{"order":"42"}}` + "\n"},
		{name: "refused by the server", args: []string{"run", def, "--input", `{"id":"42"}`, "--connections", bad}, code: 1, stderr: "States.Http.StatusCode.403"},
		{name: "unknown connection", args: []string{"run", def, "--input", `{"id":"42"}`}, code: 1, stderr: "Events.ConnectionResource.ResourceNotFound"},
		{name: "unknown field in connections", args: []string{"run", def, "--connections", typo}, code: 2, stderr: "ApiKey"},
	}
	checkRuns(t, tests)
}

// TestRunRegistry serves a lambda:invoke Task and a bare function ARN from
// local commands named in a --config registry file.
func TestRunRegistry(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "fn.json", `{"StartAt":"Invoke","States":{
		"Invoke":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"double","Payload":{"n.$":"$.n"}},"OutputPath":"$.Payload","Next":"Bare"},
		"Bare":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:double","End":true}}}`)
	cfg := writeFile(t, "registry.json", `{"Functions":{"double":{"Command":["sh","-c","read -r line; n=${line#*:}; n=${n%\\}}; printf '{\"n\":%d}' $((n*2))"]}}}`)
	failing := writeFile(t, "failing.json", `{"Functions":{"double":{"Command":["sh","-c","echo '{\"errorType\":\"Overflow\",\"errorMessage\":\"too big\"}'; exit 1"]}}}`)
	bad := writeFile(t, "bad.json", `{"Functions":{"double":{"Command":["x"],"Url":"http://127.0.0.1:1"}}}`)
	tests := []runCase{
		{name: "served", args: []string{"run", def, "--input", `{"n":5}`, "--config", cfg}, code: 0, stdout: `{"n":20}` + "\n"},
		{name: "function error", args: []string{"run", def, "--input", `{"n":5}`, "--config", failing}, code: 1, stderr: "error: Overflow"},
		// As on AWS, a function nothing serves does not exist: a task
		// error (catchable), with a hint how to serve it.
		{name: "no registry", args: []string{"run", def, "--input", `{"n":5}`}, code: 1, stderr: "error: Lambda.ResourceNotFoundException\ncause: Function not found: arn:aws:lambda:us-east-1:123456789012:function:double:$LATEST (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: "},
		{name: "no registry hint", args: []string{"run", def, "--input", `{"n":5}`}, code: 1, stderr: "hint: serve the function with --config FILE"},
		{name: "invalid registry", args: []string{"run", def, "--config", bad}, code: 2, stderr: "Functions.double: want exactly one of Command, Url, LambdaEndpoint and AwsLambda"},
	}
	checkRuns(t, tests)
}

// runCase is one stepd invocation: its exit code, its whole standard
// output (when given) and text its standard error must contain.
type runCase struct {
	name   string
	args   []string
	code   int
	stdout string
	stderr string
}

func checkRuns(t *testing.T, tests []runCase) {
	t.Helper()
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tt.name, code, tt.code, stderr)
		}
		if tt.stdout != "" && stdout != tt.stdout {
			t.Errorf("%s: stdout %q, want %q", tt.name, stdout, tt.stdout)
		}
		if !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%s: stderr %q does not contain %q", tt.name, stderr, tt.stderr)
		}
	}
}
