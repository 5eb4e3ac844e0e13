package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/value"
)

// TestInterlockExample runs examples/interlock (seed 004) as its README
// says: dynalite and fauxqs stand in for DynamoDB and SNS/SQS, stepd run
// creates the tables, topic and queue with setup.asl.json, and stepd serve
// (--time-scale 0.001) serves the seed's definition with its placeholders
// substituted and the Lambdas of registry.json (Python, boto3). The
// orchestrator reads the pipeline's rules and sensors from DynamoDB and
// records the job run there; the sla-monitor creates one-time schedules
// through stepd's Scheduler API and publishes its alerts to the SNS topic,
// read here from the queue subscribed to it. First run: a sensor becomes
// ready while the execution waits in WaitInterval, the job ends in time,
// the schedules are cancelled and only SLA_MET is published. Second run:
// the deadline has passed, so the schedules fire SLA_WARNING and SLA_BREACH
// while the job runs, and delete themselves.
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
	awstest.Env(t, "us-east-1")
	// boto3 takes an empty AWS_PROFILE for a profile named "".
	for _, k := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"} {
		os.Unsetenv(k) // t.Setenv restores it
	}
	const emulators = "../../task/awssdk/testdata/emulators"
	dynamo := awstest.StartEmulator(t, emulators, "dynalite").URL
	fauxqs := awstest.StartEmulator(t, emulators, "fauxqs").URL
	// stepd (setup.asl.json) and the Lambdas (boto3) both read these.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamo)
	t.Setenv("AWS_ENDPOINT_URL_SNS", fauxqs)
	t.Setenv("AWS_ENDPOINT_URL_SQS", fauxqs)
	ex, _ := filepath.Abs("../../examples/interlock")

	code, stdout, stderr := runMain(t, "", "run", filepath.Join(ex, "setup.asl.json"), "--input", "@"+filepath.Join(ex, "pipeline.json"), "--real-time")
	var setup struct{ TopicArn, QueueUrl string }
	if err := json.Unmarshal([]byte(stdout), &setup); code != 0 || err != nil || setup.TopicArn == "" || setup.QueueUrl == "" {
		t.Fatalf("setup: exit %d %v\n%s\n%s", code, err, stdout, stderr)
	}
	t.Setenv("INTERLOCK_ALERTS_TOPIC_ARN", setup.TopicArn)

	inv, err := awssdk.New(awssdk.Config{Endpoints: map[string]string{"dynamodb": dynamo, "sqs": fauxqs}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(resource, params string) map[string]any {
		t.Helper()
		in, err := value.ParseString(params)
		if err != nil {
			t.Fatal(err)
		}
		r := inv.Invoke(context.Background(), &task.Request{Resource: resource, StateName: "T", Input: in})
		if r.Failed() {
			t.Fatalf("%s: %s: %s", resource, r.Error, r.Cause)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(value.String(r.Output)), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	sensor := func(name, date, attr, v string) {
		t.Helper()
		call("arn:aws:states:::aws-sdk:dynamodb:putItem", `{"TableName": "interlock-sensors", "Item": {"pipelineId": {"S": "orders"},
			"sensor": {"S": "`+name+`"}, "date": {"S": "`+date+`"}, "`+attr+`": `+v+`}}`)
	}
	// alerts reads the queue until it holds the events wanted, deleting
	// what it reads, and returns the events read.
	alerts := func(want ...string) []string {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			r := call("arn:aws:states:::aws-sdk:sqs:receiveMessage", `{"QueueUrl": "`+setup.QueueUrl+`", "MaxNumberOfMessages": 10}`)
			msgs, _ := r["Messages"].([]any)
			for _, m := range msgs {
				m := m.(map[string]any)
				var note struct{ Message string }
				var ev struct{ Event, PipelineId string }
				if err := json.Unmarshal([]byte(m["Body"].(string)), &note); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(note.Message), &ev); err != nil || ev.PipelineId != "orders" {
					t.Fatalf("alert %s: %v", note.Message, err)
				}
				got = append(got, ev.Event)
				call("arn:aws:states:::aws-sdk:sqs:deleteMessage", `{"QueueUrl": "`+setup.QueueUrl+`", "ReceiptHandle": "`+m["ReceiptHandle"].(string)+`"}`)
			}
			if len(msgs) == 0 && (time.Now().After(deadline) || len(got) >= len(want)) {
				slices.Sort(got)
				return got
			}
			if len(msgs) == 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	alerts() // what an earlier run (-count) left

	url, _, _ := serveInProcess(t, "--data", filepath.Join(t.TempDir(), "data"), "--time-scale", "0.001",
		"--config", filepath.Join(ex, "registry.json"),
		"--definition", filepath.Join(ex, "statemachine.asl.json"), "--definition-substitutions", filepath.Join(ex, "substitutions.json"))
	// The Lambdas inherit stepd's environment when they run.
	t.Setenv("AWS_ENDPOINT_URL_SCHEDULER", strings.TrimSuffix(url, "/"))
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	smArn := "arn:aws:states:us-east-1:123456789012:stateMachine:statemachine"
	input, err := os.ReadFile(filepath.Join(ex, "input.json"))
	if err != nil {
		t.Fatal(err)
	}

	// run runs an execution; with ready, it makes the orders-count sensor
	// ready once the execution waits in WaitInterval. It returns the output
	// and the evaluations' results.
	run := func(name, input string, ready func()) (map[string]any, []map[string]any) {
		t.Helper()
		x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn), Name: aws.String(name), Input: aws.String(input)})
		if err != nil {
			t.Fatal(err)
		}
		history := func() []types.HistoryEvent {
			var events []types.HistoryEvent
			p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: x.ExecutionArn})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				events = append(events, page.Events...)
			}
			return events
		}
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not end", name)
			}
			if ready != nil && slices.ContainsFunc(history(), func(e types.HistoryEvent) bool {
				return e.Type == types.HistoryEventTypeWaitStateEntered && aws.ToString(e.StateEnteredEventDetails.Name) == "WaitInterval"
			}) {
				ready()
				ready = nil
			}
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status == types.ExecutionStatusRunning {
				continue
			}
			if d.Status != types.ExecutionStatusSucceeded {
				var failures []string
				for _, e := range history() {
					if f := e.TaskFailedEventDetails; f != nil {
						failures = append(failures, aws.ToString(f.Error)+": "+aws.ToString(f.Cause))
					}
					if f := e.LambdaFunctionFailedEventDetails; f != nil {
						failures = append(failures, aws.ToString(f.Error)+": "+aws.ToString(f.Cause))
					}
				}
				t.Fatalf("%s: %s %s %s; tasks failed: %s", name, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause), strings.Join(failures, "; "))
			}
			if ready != nil {
				t.Fatalf("%s ended without waiting in WaitInterval: %s", name, aws.ToString(d.Output))
			}
			var o map[string]any
			if err := json.Unmarshal([]byte(*d.Output), &o); err != nil {
				t.Fatal(err)
			}
			var evals []map[string]any
			for _, e := range history() {
				if e.Type == types.HistoryEventTypeTaskStateExited && aws.ToString(e.StateExitedEventDetails.Name) == "Evaluate" {
					var out struct{ EvaluateResult map[string]any }
					if err := json.Unmarshal([]byte(aws.ToString(e.StateExitedEventDetails.Output)), &out); err != nil {
						t.Fatal(err)
					}
					evals = append(evals, out.EvaluateResult)
				}
			}
			return o, evals
		}
	}
	// jobRun checks the run recorded in DynamoDB: the simulated job
	// succeeded on its second check.
	jobRun := func(o map[string]any) {
		t.Helper()
		id, _ := o["triggerResult"].(map[string]any)["runId"].(string)
		item, _ := call("arn:aws:states:::dynamodb:getItem", `{"TableName": "interlock-runs", "Key": {"runId": {"S": "`+id+`"}}}`)["Item"].(map[string]any)
		b, _ := json.Marshal(item)
		for _, want := range []string{`"status":{"S":"SUCCEEDED"}`, `"checks":{"N":"2"}`, `"pipelineId":{"S":"orders"}`, `"date":{"S":"2026-11-25"}`} {
			if id == "" || !strings.Contains(string(b), want) {
				t.Fatalf("run %q in interlock-runs: %s, want %s", id, b, want)
			}
		}
	}

	// orders-landed is ready; orders-count reported for the day before.
	sensor("orders-landed", "2026-11-25", "status", `{"S": "ready"}`)
	sensor("orders-count", "2026-11-24", "rows", `{"N": "1800"}`)
	o, evals := run("in-time", string(input), func() { sensor("orders-count", "2026-11-25", "rows", `{"N": "1500"}`) })
	if b, _ := json.Marshal(evals[0]); len(evals) < 2 || string(b) != `{"failed":["orders-count"],"status":"pending"}` {
		t.Fatalf("in time: evaluations %v", evals)
	}
	if r, _ := o["evaluateResult"].(map[string]any); r["status"] != "passed" || o["elapsed"].(float64) < 60 {
		t.Fatalf("in time: evaluateResult %v after %v s", o["evaluateResult"], o["elapsed"])
	}
	if r, _ := o["slaResult"].(map[string]any); r["event"] != "SLA_MET" || len(r["cancelled"].([]any)) != 2 {
		t.Fatalf("in time: slaResult %v", o["slaResult"])
	}
	jobRun(o)
	if got := alerts("SLA_MET"); !slices.Equal(got, []string{"SLA_MET"}) {
		t.Fatalf("in time: published %v, want only SLA_MET", got)
	}

	// The deadline has passed: the entries fire at once, while the job runs.
	// The sensors are still ready for the day.
	late := strings.Replace(strings.Replace(string(input), "2099-01-01T06:00:00Z", "2020-01-01T06:00:00Z", 1), `"jobCheckIntervalSeconds": 120`, `"jobCheckIntervalSeconds": 3600`, 1)
	o, evals = run("late", late, nil)
	if len(evals) != 1 || evals[0]["status"] != "passed" {
		t.Fatalf("late: evaluations %v", evals)
	}
	if r, _ := o["slaResult"].(map[string]any); r["event"] != "SLA_MISSED" || len(r["cancelled"].([]any)) != 0 {
		t.Fatalf("late: slaResult %v", o["slaResult"])
	}
	jobRun(o)
	if got := alerts("SLA_BREACH", "SLA_WARNING"); !slices.Equal(got, []string{"SLA_BREACH", "SLA_WARNING"}) {
		t.Fatalf("late: published %v, want SLA_BREACH and SLA_WARNING", got)
	}
}
