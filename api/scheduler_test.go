package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/scheduler"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/sqlite"
)

// schedulerServer is a real server on 127.0.0.1 with both APIs, a SQLite
// store in a file, and the scheduler firing on the wall clock.
func schedulerServer(t *testing.T) (*service.Service, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	h := api.New(svc, nil)
	sch := scheduler.New(scheduler.Config{Store: st, Service: svc, Region: "us-east-1", Account: "123456789012", Poll: 20 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); sch.Run(ctx) }()
	srv := httptest.NewServer(api.WithScheduler(h, api.NewSchedulerAPI(h, sch)))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		svc.Close()
		st.Close()
	})
	return svc, srv.URL
}

// TestSchedulerAWSCLI drives the Scheduler API with the real AWS CLI:
// schedules are created, read, listed, updated and deleted; they start
// executions; bad requests get AWS's codes, naming the field.
func TestSchedulerAWSCLI(t *testing.T) {
	// A CLI whose model has ActionAfterCompletion (Debian's 2.9 has not).
	cli := client(t, debianAWS, "aws", func(p string) error {
		out, err := exec.Command(p, "scheduler", "create-schedule", "help").Output()
		if err == nil && !strings.Contains(string(out), "action-after-completion") {
			err = errors.New(p + ": its scheduler model has no ActionAfterCompletion")
		}
		return err
	}, "the AWS CLI with the scheduler's ActionAfterCompletion")
	svc, url := schedulerServer(t)
	ctx := context.Background()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "sm", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER="}
	aws := func(args ...string) (map[string]any, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, cli, append([]string{"--endpoint-url", url, "--output", "json", "scheduler"}, args...)...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var v map[string]any
		if err == nil && len(out) > 0 {
			if jerr := json.Unmarshal(out, &v); jerr != nil {
				t.Fatalf("aws scheduler %s: %v in %s", strings.Join(args, " "), jerr, out)
			}
		}
		return v, stderr.String(), err
	}
	target := `{"Arn":"` + sm.ARN + `","RoleArn":"arn:aws:iam::123456789012:role/r","Input":"{\"at\":\"<aws.scheduler.scheduled-time>\"}"}`
	out, stderr, err := aws("create-schedule", "--name", "every", "--schedule-expression", "rate(1 hour)", "--flexible-time-window", "Mode=OFF",
		"--schedule-expression-timezone", "Europe/Paris", "--description", "hourly", "--target", target)
	if err != nil || out["ScheduleArn"] != "arn:aws:scheduler:us-east-1:123456789012:schedule/default/every" {
		t.Fatalf("create-schedule: %v %v %s", out, err, stderr)
	}
	// A rate() schedule without StartDate fires at once.
	var execs []*service.Execution
	for range 200 {
		if execs, _, err = svc.ListExecutions(ctx, sm.ARN, "", service.Page{}); err != nil {
			t.Fatal(err)
		}
		if len(execs) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(execs) != 1 || !strings.HasPrefix(execs[0].Name, "every_") {
		t.Fatalf("executions started by the schedule: %v", execs)
	}
	if e, err := svc.DescribeExecution(ctx, execs[0].ARN); err != nil || !strings.HasPrefix(e.Input, `{"at":"20`) {
		t.Fatalf("the execution's input: %v %v", e, err)
	}
	got, stderr, err := aws("get-schedule", "--name", "every")
	if err != nil || got["ScheduleExpression"] != "rate(1 hour)" || got["ScheduleExpressionTimezone"] != "Europe/Paris" || got["State"] != "ENABLED" ||
		got["GroupName"] != "default" || got["Description"] != "hourly" || got["CreationDate"] == nil || got["ActionAfterCompletion"] != "NONE" {
		t.Fatalf("get-schedule: %v %v %s", got, err, stderr)
	}
	if _, stderr, err = aws("update-schedule", "--name", "every", "--schedule-expression", "cron(0 9 ? * MON-FRI *)", "--flexible-time-window",
		"Mode=FLEXIBLE,MaximumWindowInMinutes=15", "--state", "DISABLED", "--target", target); err != nil {
		t.Fatalf("update-schedule: %v %s", err, stderr)
	}
	if got, _, _ = aws("get-schedule", "--name", "every"); got["State"] != "DISABLED" || got["ScheduleExpression"] != "cron(0 9 ? * MON-FRI *)" || got["Description"] != nil {
		t.Fatalf("get-schedule after update-schedule: %v", got)
	}
	if _, stderr, err = aws("create-schedule", "--name", "other", "--schedule-expression", "at(2099-01-01T00:00:00)", "--flexible-time-window", "Mode=OFF", "--target", target); err != nil {
		t.Fatalf("create-schedule at(): %v %s", err, stderr)
	}
	list, stderr, err := aws("list-schedules", "--state", "DISABLED")
	if s, _ := list["Schedules"].([]any); err != nil || len(s) != 1 || s[0].(map[string]any)["Name"] != "every" {
		t.Fatalf("list-schedules --state DISABLED: %v %v %s", list, err, stderr)
	}
	list, _, _ = aws("list-schedules", "--name-prefix", "o")
	if s, _ := list["Schedules"].([]any); len(s) != 1 || s[0].(map[string]any)["Target"].(map[string]any)["Arn"] != sm.ARN {
		t.Fatalf("list-schedules --name-prefix o: %v", list)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create-schedule", "--name", "every", "--schedule-expression", "rate(1 hour)", "--flexible-time-window", "Mode=OFF", "--target", target}, "(ConflictException)"},
		{[]string{"get-schedule", "--name", "none"}, "(ResourceNotFoundException)"},
		{[]string{"get-schedule", "--name", "every", "--group-name", "mine"}, "Schedule group mine does not exist"},
		{[]string{"create-schedule", "--name", "x", "--schedule-expression", "cron(0 12 * * * *)", "--flexible-time-window", "Mode=OFF", "--target", target}, "(ValidationException)"},
		{[]string{"create-schedule", "--name", "x", "--schedule-expression", "rate(1 hour)", "--flexible-time-window", "Mode=OFF", "--schedule-expression-timezone", "Mars/Olympus", "--target", target}, "Invalid time zone"},
		{[]string{"create-schedule", "--name", "x", "--schedule-expression", "rate(1 hour)", "--flexible-time-window", "Mode=OFF",
			"--target", `{"Arn":"` + sm.ARN + `","RoleArn":"arn:aws:iam::123456789012:role/r","DeadLetterConfig":{"Arn":"arn:aws:sqs:us-east-1:123456789012:dlq"}}`}, "Target.DeadLetterConfig"},
		{[]string{"create-schedule", "--name", "x", "--schedule-expression", "rate(1 hour)", "--flexible-time-window", "Mode=OFF",
			"--target", `{"Arn":"arn:aws:sqs:us-east-1:123456789012:q","RoleArn":"arn:aws:iam::123456789012:role/r"}`}, "Target.Arn"},
		{[]string{"create-schedule-group", "--name", "g"}, "CreateScheduleGroup"},
	} {
		_, stderr, err := aws(c.args...)
		if err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("aws scheduler %s: %v %q, want %q", c.args[0], err, stderr, c.want)
		}
	}
	if _, stderr, err = aws("delete-schedule", "--name", "every"); err != nil {
		t.Fatalf("delete-schedule: %v %s", err, stderr)
	}
	if _, stderr, err = aws("delete-schedule", "--name", "every"); err == nil || !strings.Contains(stderr, "(ResourceNotFoundException)") {
		t.Fatalf("delete-schedule again: %v %s", err, stderr)
	}
	// A one-time schedule that deletes itself after it fired.
	if _, stderr, err = aws("create-schedule", "--name", "once", "--schedule-expression", "at(2020-01-01T00:00:00)", "--flexible-time-window", "Mode=OFF",
		"--action-after-completion", "DELETE", "--target", target); err != nil {
		t.Fatalf("create-schedule once: %v %s", err, stderr)
	}
	for range 200 {
		if _, stderr, _ = aws("get-schedule", "--name", "once"); strings.Contains(stderr, "(ResourceNotFoundException)") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	execs, _, _ = svc.ListExecutions(ctx, sm.ARN, "", service.Page{})
	if !strings.Contains(stderr, "(ResourceNotFoundException)") || len(execs) != 2 {
		t.Fatalf("a one-time schedule with ActionAfterCompletion DELETE: %s, %d executions", stderr, len(execs))
	}
}

// TestSchedulerBoto3 runs testdata/boto3_scheduler.py (seed 004's
// sla-monitor: one-time schedules created and cancelled) with boto3.
func TestSchedulerBoto3(t *testing.T) {
	// A boto3 whose model has ActionAfterCompletion (Debian's 1.29 has not).
	py := client(t, debianPython, "python3", func(p string) error {
		return exec.Command(p, "-c", "import boto3; m = boto3.client('scheduler', region_name='us-east-1').meta.service_model; "+
			"assert 'ActionAfterCompletion' in m.operation_model('CreateSchedule').input_shape.members").Run()
	}, "boto3 with the scheduler's ActionAfterCompletion")
	svc, url := schedulerServer(t)
	sm, _, err := svc.CreateStateMachine(context.Background(), service.StateMachineInput{Name: "sm", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, filepath.Join("testdata", "boto3_scheduler.py"), url, sm.ARN).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("boto3_scheduler.py: %v", err)
	}
}

// TestSchedulerSigV4 checks that with access keys the Scheduler API takes
// requests signed for the service "scheduler" only.
func TestSchedulerSigV4(t *testing.T) {
	st := memory.New()
	svc := service.New(service.Config{Store: st})
	defer svc.Close()
	h := api.New(svc, nil)
	h.Auth = &api.Auth{Keys: map[string]string{"AKIDSTEPD": "s3cret"}}
	sch := scheduler.New(scheduler.Config{Store: st, Service: svc})
	srv := httptest.NewServer(api.WithScheduler(h, api.NewSchedulerAPI(h, sch)))
	defer srv.Close()
	call := func(service, secret string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/schedules?NamePrefix=a", nil)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(nil)
		payload := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", payload)
		creds := aws.Credentials{AccessKeyID: "AKIDSTEPD", SecretAccessKey: secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, payload, service, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("X-Amzn-Errortype")
	}
	if code, typ := call("scheduler", "s3cret"); code != 200 {
		t.Fatalf("signed for scheduler: %d %s", code, typ)
	}
	if code, typ := call("states", "s3cret"); code != 403 || typ != "IncompleteSignatureException" {
		t.Fatalf("signed for states: %d %s", code, typ)
	}
	if code, typ := call("scheduler", "wrong"); code != 403 || typ != "InvalidSignatureException" {
		t.Fatalf("signed with a wrong secret: %d %s", code, typ)
	}
}

// TestSchedulerBadBytes: a Scheduler request whose body is not UTF-8 is
// refused as the Step Functions API refuses one.
func TestSchedulerBadBytes(t *testing.T) {
	_, url := schedulerServer(t)
	body := []byte(`{"ScheduleExpression":"rate(1 minute)","FlexibleTimeWindow":{"Mode":"OFF"},"Target":{"Arn":"a","RoleArn":"r","Input":"` + "\xff" + `"}}`)
	req, err := http.NewRequest(http.MethodPost, url+"/schedules/bad", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-Errortype") != "SerializationException" || !strings.Contains(string(msg), "offset 118") {
		t.Errorf("a body that is not UTF-8: %d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), msg)
	}
}
