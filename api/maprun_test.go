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

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
)

// client finds a program: Debian's (what CI installs), else the one on
// PATH; check tells whether it serves.
func client(t *testing.T, debian, name string, check func(path string) error, what string) string {
	t.Helper()
	var errs []string
	for _, p := range []string{debian, name} {
		path, err := exec.LookPath(p)
		if err == nil {
			if err = check(path); err == nil {
				return path
			}
		}
		errs = append(errs, err.Error())
	}
	needDebianClients(t, func() error { return os.ErrNotExist }, what+" ("+strings.Join(errs, "; ")+")")
	return ""
}

// TestMapRunBoto3 drives a Distributed Map's Map Run and the redrive of
// its failed parent from boto3 (testdata/maprun_client.py) against a real
// server on 127.0.0.1.
func TestMapRunBoto3(t *testing.T) {
	// A boto3 whose model has redrive (Debian's 1.29 has not).
	python := client(t, debianPython, "python3", func(p string) error {
		return exec.Command(p, "-c", "import boto3; m = boto3.client('stepfunctions', region_name='us-east-1').meta.service_model; "+
			"assert 'redriveStatus' in m.operation_model('DescribeExecution').output_shape.members").Run()
	}, "python3 with a boto3 that knows redrive")
	_, url := newServer(t, memory.New(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "maprun_client.py"), url).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("maprun_client.py: %v", err)
	}
}

// TestMapRunAWSCLI runs a Distributed Map whose child fails beyond its
// tolerance with the AWS CLI, raises the tolerance with update-map-run
// while it runs, and redrives a failed execution: list-map-runs,
// describe-map-run, update-map-run, list-executions --map-run-arn,
// redrive-execution, --redrive-filter. The activity worker and the waits
// go through the service itself: each CLI call starts a Python process.
func TestMapRunAWSCLI(t *testing.T) {
	awsPath := client(t, debianAWS, "aws", func(p string) error { return exec.Command(p, "stepfunctions", "redrive-execution", "help").Run() }, "the AWS CLI with redrive-execution")
	svc, url := newServer(t, memory.New(), nil)
	ctx := context.Background()
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER="}
	aws := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, awsPath, append([]string{"--endpoint-url", url, "--output", "json", "stepfunctions"}, args...)...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("aws %s: %v %s", strings.Join(args, " "), err, stderr.String())
		}
		var v map[string]any
		if len(out) > 0 {
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("aws %s: %v in %s", strings.Join(args, " "), err, out)
			}
		}
		return v
	}
	task := func(act string) string {
		t.Helper()
		token, _, err := svc.GetActivityTask(ctx, act, "w", time.Minute)
		if err != nil || token == "" {
			t.Fatalf("no activity task: %v", err)
		}
		return token
	}
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ToleratedFailureCount":0,"MaxConcurrency":1,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Task","Resource":"` + act.ARN + `","End":true}}}}}}`
	sm := aws("create-state-machine", "--name", "clidmap", "--role-arn", "arn:aws:iam::123456789012:role/r", "--definition", def)["stateMachineArn"].(string)
	ex := aws("start-execution", "--state-machine-arn", sm, "--input", `["a","b"]`)["executionArn"].(string)
	first := task(act.ARN)
	var run string
	for i := 0; i < 400 && run == ""; i++ {
		if runs, _, err := svc.ListMapRuns(ctx, ex, service.Page{}); err == nil && len(runs) == 1 {
			run = runs[0].ARN
		} else {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if runs, _ := aws("list-map-runs", "--execution-arn", ex)["mapRuns"].([]any); len(runs) != 1 || runs[0].(map[string]any)["mapRunArn"] != run {
		t.Fatalf("list-map-runs: %v, want %s", runs, run)
	}
	aws("update-map-run", "--map-run-arn", run, "--tolerated-failure-count", "1")
	for i := 0; i < 400; i++ {
		if r, err := svc.DescribeMapRun(ctx, run); err == nil && r.ToleratedFailureCount == 1 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err := svc.SendTaskFailure(ctx, first, "E", ""); err != nil {
		t.Fatal(err)
	}
	if err := svc.SendTaskSuccess(ctx, task(act.ARN), `"ok"`); err != nil {
		t.Fatal(err)
	}
	if d, err := svc.Wait(ctx, ex); err != nil || d.Status != "SUCCEEDED" {
		t.Fatalf("the failure was not tolerated after update-map-run: %+v %v", d, err)
	}
	for i := 0; i < 400; i++ { // the Map Run is stored once the step has committed
		if r, err := svc.DescribeMapRun(ctx, run); err == nil && r.Status != "RUNNING" {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	m := aws("describe-map-run", "--map-run-arn", run)
	if m["status"] != "SUCCEEDED" || m["toleratedFailureCount"] != float64(1) || m["executionCounts"].(map[string]any)["failed"] != float64(1) {
		t.Errorf("describe-map-run: %v", m)
	}
	if kids, _ := aws("list-executions", "--map-run-arn", run, "--status-filter", "FAILED")["executions"].([]any); len(kids) != 1 {
		t.Errorf("list-executions --map-run-arn --status-filter FAILED: %v", kids)
	}

	// A failed execution, redriven.
	fail := aws("create-state-machine", "--name", "clifail", "--role-arn", "arn:aws:iam::123456789012:role/r",
		"--definition", `{"StartAt":"W","States":{"W":{"Type":"Task","Resource":"`+act.ARN+`","End":true}}}`)["stateMachineArn"].(string)
	fx := aws("start-execution", "--state-machine-arn", fail)["executionArn"].(string)
	if err := svc.SendTaskFailure(ctx, task(act.ARN), "E", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Wait(ctx, fx); err != nil {
		t.Fatal(err)
	}
	if d := aws("describe-execution", "--execution-arn", fx); d["status"] != "FAILED" || d["redriveStatus"] != "REDRIVABLE" {
		t.Fatalf("before redrive-execution: %v", d)
	}
	if r := aws("redrive-execution", "--execution-arn", fx); r["redriveDate"] == nil {
		t.Errorf("redrive-execution: %v", r)
	}
	if err := svc.SendTaskSuccess(ctx, task(act.ARN), `1`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Wait(ctx, fx); err != nil {
		t.Fatal(err)
	}
	if d := aws("describe-execution", "--execution-arn", fx); d["status"] != "SUCCEEDED" || d["redriveCount"] != float64(1) {
		t.Errorf("after redrive-execution: %v", d)
	}
	if l, _ := aws("list-executions", "--state-machine-arn", fail, "--redrive-filter", "REDRIVEN")["executions"].([]any); len(l) != 1 {
		t.Errorf("list-executions --redrive-filter REDRIVEN: %v", l)
	}
}
