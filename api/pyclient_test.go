package api_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/store/memory"
)

// Debian's packages: python3-boto3 for /usr/bin/python3, and awscli.
const (
	debianPython = "/usr/bin/python3"
	debianAWS    = "/usr/bin/aws"
)

// needDebianClients skips the test when a client is missing, unless
// CI=true, where that is a failure (.ci/run installs them).
func needDebianClients(t *testing.T, check func() error, what string) {
	t.Helper()
	if err := check(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs %s: %v", what, err)
		}
		t.Skipf("this test needs %s: %v", what, err)
	}
}

// TestBoto3 runs testdata/boto3_client.py with Debian's python3-boto3
// against a real server on 127.0.0.1, configured as docs/cli.md says.
func TestBoto3(t *testing.T) {
	needDebianClients(t, func() error { return exec.Command(debianPython, "-c", "import boto3").Run() }, "Debian's python3-boto3 (apt-get install python3-boto3)")
	_, url := newServer(t, memory.New(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, debianPython, filepath.Join("testdata", "boto3_client.py"), url).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("boto3_client.py: %v", err)
	}
}

// TestAWSCLI drives a real server on 127.0.0.1 with Debian's AWS CLI the
// way docs/cli.md shows (--endpoint-url, any keys): create a state machine,
// run it, read its history, run an Express one with StartSyncExecution,
// and read an error's code.
func TestAWSCLI(t *testing.T) {
	needDebianClients(t, func() error { return exec.Command(debianAWS, "--version").Run() }, "Debian's awscli (apt-get install awscli)")
	_, url := newServer(t, memory.New(), nil)
	home := t.TempDir() // no user configuration or credentials files
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER="}
	aws := func(args ...string) (map[string]any, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, debianAWS, append([]string{"--endpoint-url", url, "--output", "json", "stepfunctions"}, args...)...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var v map[string]any
		if err == nil && len(out) > 0 {
			if jerr := json.Unmarshal(out, &v); jerr != nil {
				t.Fatalf("aws %s: %v in %s", strings.Join(args, " "), jerr, out)
			}
		}
		return v, stderr.String(), err
	}
	sm, stderr, err := aws("create-state-machine", "--name", "cli", "--role-arn", "arn:aws:iam::123456789012:role/r",
		"--definition", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"greeting.$":"States.Format('hello {}', $.who)"},"End":true}}}`)
	if err != nil {
		t.Fatalf("create-state-machine: %v %s", err, stderr)
	}
	arn, _ := sm["stateMachineArn"].(string)
	ex, stderr, err := aws("start-execution", "--state-machine-arn", arn, "--name", "one", "--input", `{"who":"cli"}`)
	if err != nil {
		t.Fatalf("start-execution: %v %s", err, stderr)
	}
	exArn, _ := ex["executionArn"].(string)
	var d map[string]any
	for i := 0; i < 100; i++ {
		if d, stderr, err = aws("describe-execution", "--execution-arn", exArn); err != nil {
			t.Fatalf("describe-execution: %v %s", err, stderr)
		}
		if d["status"] != "RUNNING" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d["status"] != "SUCCEEDED" || d["output"] != `{"greeting":"hello cli"}` {
		t.Errorf("describe-execution: %v", d)
	}
	// The CLI pages through the history by itself with a small page size.
	h, stderr, err := aws("get-execution-history", "--execution-arn", exArn, "--page-size", "2")
	if err != nil {
		t.Fatalf("get-execution-history: %v %s", err, stderr)
	}
	if evs, _ := h["events"].([]any); len(evs) != 4 {
		t.Errorf("get-execution-history: %d events, want 4: %v", len(evs), h)
	}
	// StartSyncExecution goes to "sync-<host>"; with stepd as the CLI's
	// HTTP proxy (as docs/cli.md shows) no hosts entry is needed.
	x, stderr, err := aws("create-state-machine", "--name", "clix", "--type", "EXPRESS", "--role-arn", "arn:aws:iam::123456789012:role/r",
		"--definition", `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"hi":1},"End":true}}}`)
	if err != nil {
		t.Fatalf("create-state-machine EXPRESS: %v %s", err, stderr)
	}
	env = append(env, "HTTP_PROXY="+url, "NO_PROXY=")
	sync, stderr, err := aws("start-sync-execution", "--state-machine-arn", x["stateMachineArn"].(string), "--input", `{}`)
	if err != nil || sync["status"] != "SUCCEEDED" || sync["output"] != `{"hi":1}` {
		t.Errorf("start-sync-execution through the proxy: %v %v %s", sync, err, stderr)
	}
	_, stderr, err = aws("describe-execution", "--execution-arn", "arn:aws:states:us-east-1:123456789012:execution:cli:none")
	if err == nil || !strings.Contains(stderr, "(ExecutionDoesNotExist)") {
		t.Errorf("describe-execution of a missing execution: %v %s", err, stderr)
	}
}
