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

// clientWith returns the first program of candidates (a path, or a name
// looked up on PATH) for which check succeeds. Without any of them the
// test skips, and fails when CI=true; when those found are too old (Debian
// bookworm's awscli 2.9.19 and botocore 1.29.27 predate versions and
// aliases, botocore 1.29.150) it skips even in CI, where the JavaScript
// SDK's test (npm) drives the same operations.
func clientWith(t *testing.T, what string, check func(prog string) error, candidates ...string) string {
	t.Helper()
	var errs []string
	found := false
	for _, c := range candidates {
		prog, err := exec.LookPath(c)
		if err == nil {
			found = true
			if err = check(prog); err == nil {
				return prog
			}
		}
		errs = append(errs, c+": "+err.Error())
	}
	if found {
		t.Skipf("this test needs %s; those found are too old (%s)", what, strings.Join(errs, "; "))
	}
	needDebianClients(t, func() error { return &exec.Error{Name: what, Err: os.ErrNotExist} }, what+" ("+strings.Join(errs, "; ")+")")
	return ""
}

// TestBoto3Versions runs testdata/boto3_versions.py with a boto3 that
// knows versions and aliases (botocore 1.29.150 or later: Debian's, else
// the one of python3 on PATH) against a real server on 127.0.0.1.
func TestBoto3Versions(t *testing.T) {
	python := clientWith(t, "a boto3 with state machine aliases", func(p string) error {
		return exec.Command(p, "-c", "import boto3; assert hasattr(boto3.client('stepfunctions', region_name='us-east-1'), 'create_state_machine_alias')").Run()
	}, debianPython, "python3")
	_, url := newServer(t, memory.New(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "boto3_versions.py"), url).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("boto3_versions.py: %v", err)
	}
}

// TestAWSCLIVersions drives versions and aliases with the AWS CLI (one
// that has the alias commands: Debian's, else the one on PATH).
func TestAWSCLIVersions(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER="}
	cli := clientWith(t, "an AWS CLI with state machine aliases", func(p string) error {
		cmd := exec.Command(p, "stepfunctions", "list-state-machine-aliases", "help")
		cmd.Env = env
		return cmd.Run()
	}, debianAWS, "aws")
	_, url := newServer(t, memory.New(), nil)
	aws := func(args ...string) (map[string]any, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, cli, append([]string{"--endpoint-url", url, "--output", "json", "stepfunctions"}, args...)...)
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
	must := func(args ...string) map[string]any {
		t.Helper()
		v, stderr, err := aws(args...)
		if err != nil {
			t.Fatalf("aws stepfunctions %s: %v %s", args[0], err, stderr)
		}
		return v
	}
	sm := must("create-state-machine", "--name", "cliv", "--role-arn", role, "--publish", "--version-description", "first",
		"--tracing-configuration", "enabled=true", "--definition", passDef("one"))
	arn, _ := sm["stateMachineArn"].(string)
	v1, _ := sm["stateMachineVersionArn"].(string)
	if v1 != arn+":1" {
		t.Fatalf("create-state-machine --publish: %v", sm)
	}
	v2, _ := must("update-state-machine", "--state-machine-arn", arn, "--definition", passDef("two"), "--publish")["stateMachineVersionArn"].(string)
	if p := must("publish-state-machine-version", "--state-machine-arn", arn); p["stateMachineVersionArn"] != v2 {
		t.Errorf("publish-state-machine-version of the current revision: %v, want %s", p, v2)
	}
	if l, _ := must("list-state-machine-versions", "--state-machine-arn", arn)["stateMachineVersions"].([]any); len(l) != 2 {
		t.Errorf("list-state-machine-versions: %v", l)
	}
	routing := `[{"stateMachineVersionArn":"` + v1 + `","weight":100}]`
	alias, _ := must("create-state-machine-alias", "--name", "live", "--routing-configuration", routing)["stateMachineAliasArn"].(string)
	if d := must("describe-state-machine-alias", "--state-machine-alias-arn", alias); d["name"] != "live" {
		t.Errorf("describe-state-machine-alias: %v", d)
	}
	must("update-state-machine-alias", "--state-machine-alias-arn", alias, "--description", "moved",
		"--routing-configuration", `[{"stateMachineVersionArn":"`+v2+`","weight":100}]`)
	if l, _ := must("list-state-machine-aliases", "--state-machine-arn", arn)["stateMachineAliases"].([]any); len(l) != 1 {
		t.Errorf("list-state-machine-aliases: %v", l)
	}
	ex, _ := must("start-execution", "--state-machine-arn", alias, "--name", "x")["executionArn"].(string)
	var d map[string]any
	for range 200 {
		if d = must("describe-execution", "--execution-arn", ex); d["status"] != "RUNNING" {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if d["output"] != `"two"` || d["stateMachineAliasArn"] != alias || d["stateMachineVersionArn"] != v2 {
		t.Errorf("describe-execution of an alias's execution: %v", d)
	}
	if _, stderr, err := aws("delete-state-machine-version", "--state-machine-version-arn", v2); err == nil || !strings.Contains(stderr, "(ConflictException)") {
		t.Errorf("delete-state-machine-version of a routed version: %v %s", err, stderr)
	}
	must("delete-state-machine-alias", "--state-machine-alias-arn", alias)
	must("delete-state-machine-version", "--state-machine-version-arn", v2)
	if d := must("describe-state-machine", "--state-machine-arn", arn); d["tracingConfiguration"].(map[string]any)["enabled"] != true {
		t.Errorf("describe-state-machine: tracing %v", d["tracingConfiguration"])
	}
}
