package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
)

// post sends one raw API request with the given Host header and returns the
// status, error code and message.
func post(t *testing.T, url, host, op, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e.Type, e.Message
}

// TestHostCheck: without access keys, only requests addressed to a loopback
// host or an IP address are answered, so that a web page cannot reach the API by DNS
// rebinding.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	h := api.New(svc, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, host := range []string{"", "localhost" + port, "LOCALHOST", "127.0.0.1" + port, "127.1.2.3" + port, "[::1]" + port,
		"sync-localhost" + port, "sync-127.0.0.1" + port, "app.localhost" + port, "10.0.0.1" + port, "[fd00::1]" + port, "[fe80::1%eth0]" + port} {
		if code, typ, msg := post(t, srv.URL, host, "ListStateMachines", "{}"); code != 200 {
			t.Errorf("Host %q: %d %s %s, want 200", host, code, typ, msg)
		}
	}
	for _, host := range []string{"evil.example" + port, "127.0.0.1.evil.example", "10.0.0.1.nip.example" + port, "sync-evil.example", "localhost.evil.example"} {
		code, typ, msg := post(t, srv.URL, host, "ListStateMachines", "{}")
		if code != 403 || typ != "AccessDeniedException" || !strings.Contains(msg, "--allow-host") {
			t.Errorf("Host %q: %d %s %q, want 403 AccessDeniedException", host, code, typ, msg)
		}
	}
	h2 := api.New(svc, nil)
	h2.AllowHosts = []string{"stepd.internal"}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	if code, typ, _ := post(t, srv2.URL, "stepd.internal:8083", "ListStateMachines", "{}"); code != 200 {
		t.Errorf("allowed host: %d %s", code, typ)
	}
	if code, _, _ := post(t, srv2.URL, "other.internal", "ListStateMachines", "{}"); code != 403 {
		t.Errorf("host not allowed: %d", code)
	}
}

// TestSigV4Region: with access keys, credentials scoped to another region
// than the server's are refused.
func TestSigV4Region(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	h := api.New(svc, nil)
	h.Auth = &api.Auth{Keys: map[string]string{"AKIDSTEPD": "s3cret"}, Region: "us-east-1"}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := func(region string) *sfn.Client {
		return sfn.New(sfn.Options{Region: region, BaseEndpoint: aws.String(srv.URL),
			Credentials: credentials.NewStaticCredentialsProvider("AKIDSTEPD", "s3cret", "")})
	}
	ctx := context.Background()
	if _, err := client("us-east-1").ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatalf("the server's region: %v", err)
	}
	_, err := client("eu-west-1").ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if apiCode(err) != "InvalidSignatureException" || !strings.Contains(err.Error(), "eu-west-1") {
		t.Errorf("another region: %v", err)
	}
	// A signed request may come from any host.
	if code, typ, _ := post(t, srv.URL, "evil.example", "ListStateMachines", "{}"); code != 403 || typ != "MissingAuthenticationTokenException" {
		t.Errorf("unsigned request with keys: %d %s", code, typ)
	}
}

// TestTrailingBytes: a body with anything after its JSON value is refused.
func TestTrailingBytes(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	for _, body := range []string{`{} {}`, `{"maxResults":1}x`, "{}\n[]", `{}}`} {
		code, typ, msg := post(t, srv.URL, "", "ListStateMachines", body)
		if code != 400 || typ != "SerializationException" {
			t.Errorf("body %q: %d %s %s, want SerializationException", body, code, typ, msg)
		}
	}
	for _, body := range []string{"{}\n", " {} \r\n\t", ""} {
		if code, typ, msg := post(t, srv.URL, "", "ListStateMachines", body); code != 200 {
			t.Errorf("body %q: %d %s %s", body, code, typ, msg)
		}
	}
}

// TestNoEchoOfHugeValues: an error never sends a megabyte-long ARN or token
// back.
func TestNoEchoOfHugeValues(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	huge := "arn:aws:states:us-east-1:123456789012:execution:m:" + strings.Repeat("x", 1<<20)
	for _, c := range []struct{ op, body string }{
		{"DescribeExecution", `{"executionArn":"` + huge + `"}`},
		{"StopExecution", `{"executionArn":"` + huge + `"}`},
		{"DescribeStateMachine", `{"stateMachineArn":"` + strings.Replace(huge, "execution", "stateMachine", 1) + `"}`},
		{"SendTaskSuccess", `{"taskToken":"` + strings.Repeat("A", 1<<20) + `","output":"{}"}`},
		{"StartExecution", `{"stateMachineArn":"` + huge + `","input":"{}"}`},
	} {
		code, typ, msg := post(t, srv.URL, "", c.op, c.body)
		if code < 400 || typ == "" {
			t.Errorf("%s: %d %s, want an error", c.op, code, typ)
		}
		if len(msg) > 4200 {
			t.Errorf("%s: the %s message is %d bytes long", c.op, typ, len(msg))
		}
	}
}

// TestNames: AWS's naming rules for state machines, executions and
// activities: dots, @, + and non-ASCII letters are accepted; white space,
// brackets, wildcards, control characters and "#%\^|~`$&,;:/ are refused
// with AWS's InvalidName message.
func TestNames(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	def := `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	role := "arn:aws:iam::123456789012:role/r"
	body := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	for _, name := range []string{"order.2024-01-01", "user@example+1", "été", "my.machine"} {
		code, typ, msg := post(t, srv.URL, "", "CreateStateMachine", body(map[string]any{"name": name, "definition": def, "roleArn": role}))
		if code != 200 {
			t.Fatalf("CreateStateMachine %q: %d %s %s", name, code, typ, msg)
		}
		smArn := "arn:aws:states:us-east-1:123456789012:stateMachine:" + name
		if code, typ, msg := post(t, srv.URL, "", "StartExecution", body(map[string]any{"stateMachineArn": smArn, "name": name + "-run"})); code != 200 {
			t.Errorf("StartExecution %q: %d %s %s", name, code, typ, msg)
		}
		if code, typ, msg := post(t, srv.URL, "", "CreateActivity", body(map[string]any{"name": name})); code != 200 {
			t.Errorf("CreateActivity %q: %d %s %s", name, code, typ, msg)
		}
	}
	smArn := "arn:aws:states:us-east-1:123456789012:stateMachine:my.machine"
	for _, name := range []string{"a b", "a/b", "x:y", "50%", "tab\t", "brace{", "star*", "q?", "back`tick", "nul\u0000"} {
		want := "Invalid Name: '" + name + "'"
		for _, c := range []struct{ op, body string }{
			{"CreateStateMachine", body(map[string]any{"name": name, "definition": def, "roleArn": role})},
			{"StartExecution", body(map[string]any{"stateMachineArn": smArn, "name": name})},
			{"CreateActivity", body(map[string]any{"name": name})},
		} {
			code, typ, msg := post(t, srv.URL, "", c.op, c.body)
			if code != 400 || typ != "InvalidName" || msg != want {
				t.Errorf("%s %q: %d %s %q, want InvalidName %q", c.op, name, code, typ, msg, want)
			}
		}
	}
	code, typ, msg := post(t, srv.URL, "", "StartExecution", body(map[string]any{"stateMachineArn": smArn, "name": strings.Repeat("n", 81)}))
	if code != 400 || typ != "ValidationException" || !strings.Contains(msg, "'name'") {
		t.Errorf("an 81-character name: %d %s %q", code, typ, msg)
	}
	code, typ, msg = post(t, srv.URL, "", "CreateStateMachine", body(map[string]any{"name": "big", "roleArn": role,
		"definition": `{"Comment":"` + strings.Repeat("x", 1<<20) + `","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`}))
	if code != 400 || typ != "ValidationException" || !strings.Contains(msg, "1048576") {
		t.Errorf("a definition over 1 MiB: %d %s %q", code, typ, msg)
	}
}

// TestForgedTokens: task tokens are signed with the store's secret: a token
// built by hand from the execution ARN, or one signed by another server, is
// refused with InvalidToken and completes nothing; the real one works.
func TestForgedTokens(t *testing.T) {
	t.Parallel()
	svc := service.New(service.Config{})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	body := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	call := func(op string, m map[string]any) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body(m)))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", op, resp.StatusCode, out)
		}
		return out
	}
	act := call("CreateActivity", map[string]any{"name": "w"})["activityArn"].(string)
	def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"` + act + `","End":true}}}`
	sm := call("CreateStateMachine", map[string]any{"name": "m", "definition": def, "roleArn": "arn:aws:iam::123456789012:role/r"})["stateMachineArn"].(string)
	ex := call("StartExecution", map[string]any{"stateMachineArn": sm, "name": "e"})["executionArn"].(string)
	task := call("GetActivityTask", map[string]any{"activityArn": act})
	token, _ := task["taskToken"].(string)
	if token == "" {
		t.Fatalf("no task: %v", task)
	}
	// The token another server would give the same execution.
	foreign := interp.SignToken([]byte("another server's secret, 32 b.."), ex, 1)
	for _, forged := range []string{base64.RawURLEncoding.EncodeToString([]byte(ex + "#1")), foreign, token + "x"} {
		code, typ, msg := post(t, srv.URL, "", "SendTaskSuccess", body(map[string]any{"taskToken": forged, "output": `{"forged":true}`}))
		if code != 400 || typ != "InvalidToken" {
			t.Errorf("forged token %.60q…: %d %s %s, want InvalidToken", forged, code, typ, msg)
		}
	}
	call("SendTaskSuccess", map[string]any{"taskToken": token, "output": `{"real":true}`})
	for deadline := time.Now().Add(10 * time.Second); ; {
		d := call("DescribeExecution", map[string]any{"executionArn": ex})
		if d["status"] == "SUCCEEDED" {
			if d["output"] != `{"real":true}` {
				t.Fatalf("output %v", d["output"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the execution did not finish: %v", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
