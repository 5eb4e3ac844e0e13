package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// TestInterlockExample runs examples/interlock (seed 004) on a server at
// --time-scale 0.001: its sla-monitor creates one-time schedules through
// stepd's Scheduler API and cancels them when the job ends in time (first
// run), or they fire the sla-monitor's alerts and delete themselves (second
// run, a deadline already past).
func TestInterlockExample(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import boto3; boto3.client('scheduler', region_name='us-east-1')").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this test needs python3 with boto3: %v", err)
		}
		t.Skipf("this test needs python3 with boto3: %v", err)
	}
	dir := t.TempDir()
	ex, _ := filepath.Abs("../../examples/interlock")
	const orch, sla = "arn:aws:lambda:us-east-1:123456789012:function:interlock-orchestrator", "arn:aws:lambda:us-east-1:123456789012:function:interlock-sla-monitor"
	reg := map[string]any{"Functions": map[string]any{
		orch: map[string]any{"Command": []string{py, filepath.Join(ex, "orchestrator.py")}},
		sla:  map[string]any{"Command": []string{py, filepath.Join(ex, "sla_monitor.py")}},
	}}
	b, _ := json.Marshal(reg)
	cfg := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	url, _, _ := serveInProcess(t, "--data", filepath.Join(dir, "data"), "--time-scale", "0.001", "--config", cfg)
	// The handlers inherit stepd's environment when they run.
	t.Setenv("SCHEDULER_ENDPOINT", strings.TrimSuffix(url, "/"))
	t.Setenv("SLA_MONITOR_ARN", sla)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	alerts := filepath.Join(dir, "alerts")
	t.Setenv("INTERLOCK_ALERTS", alerts)

	def, err := os.ReadFile(filepath.Join(ex, "statemachine.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Terraform's templatefile, as the seed deploys it.
	text := strings.NewReplacer("${orchestrator_arn}", orch, "${sla_monitor_arn}", sla).Replace(string(def))
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("interlock"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"), Definition: aws.String(text)})
	if err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile(filepath.Join(ex, "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(name, input string) map[string]any {
		t.Helper()
		t.Setenv("INTERLOCK_STATE", filepath.Join(dir, name+".state"))
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(name), Input: aws.String(input)})
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: out.ExecutionArn})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != types.ExecutionStatusRunning {
				if d.Status != types.ExecutionStatusSucceeded {
					t.Fatalf("%s: %s %s %s", name, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
				}
				var o map[string]any
				if err := json.Unmarshal([]byte(*d.Output), &o); err != nil {
					t.Fatal(err)
				}
				return o
			}
		}
		t.Fatalf("%s did not end", name)
		return nil
	}
	o := run("in-time", string(input))
	if r, _ := o["slaResult"].(map[string]any); r["event"] != "SLA_MET" || len(r["cancelled"].([]any)) != 2 {
		t.Fatalf("in time: slaResult %v", o["slaResult"])
	}
	if _, err := os.Stat(alerts); err == nil {
		t.Fatalf("alerts fired for a job that ended in time")
	}
	// The deadline has passed: the entries fire at once, while the job runs.
	late := strings.Replace(strings.Replace(string(input), "2099-01-01T06:00:00Z", "2020-01-01T06:00:00Z", 1), `"jobCheckIntervalSeconds": 120`, `"jobCheckIntervalSeconds": 3600`, 1)
	o = run("late", late)
	if r, _ := o["slaResult"].(map[string]any); r["event"] != "SLA_MISSED" || len(r["cancelled"].([]any)) != 0 {
		t.Fatalf("late: slaResult %v", o["slaResult"])
	}
	b, err = os.ReadFile(alerts)
	if err != nil || !strings.Contains(string(b), "SLA_WARNING") || !strings.Contains(string(b), "SLA_BREACH") {
		t.Fatalf("alerts: %s %v", b, err)
	}
}
