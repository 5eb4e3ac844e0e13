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

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "authorised", args: []string{"run", def, "--input", `{"id":"42"}`, "--connections", good}, code: 0, stdout: `{"status":200,"body":{"order":"42"}}` + "\n"},
		{name: "refused by the server", args: []string{"run", def, "--input", `{"id":"42"}`, "--connections", bad}, code: 1, stderr: "States.Http.StatusCode.403"},
		{name: "unknown connection", args: []string{"run", def, "--input", `{"id":"42"}`}, code: 1, stderr: "Events.ConnectionResource.ResourceNotFound"},
		{name: "unknown field in connections", args: []string{"run", def, "--connections", typo}, code: 2, stderr: "ApiKey"},
	}
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
