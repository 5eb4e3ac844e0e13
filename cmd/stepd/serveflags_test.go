package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/stepd/stepd/execlog"
)

const role = "arn:aws:iam::123456789012:role/r"

func logGroup(name string) string {
	return "arn:aws:logs:us-east-1:123456789012:log-group:" + name + ":*"
}

// readRecords reads the execution log records of a log group from dir.
func readRecords(t *testing.T, dir, group string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, execlog.FileName(group)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var r map[string]any
		if err := json.Unmarshal(s.Bytes(), &r); err != nil {
			t.Fatalf("record %q: %v", s.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// waitRecords is readRecords once the group holds at least n records (or
// 10 s have passed): an execution's records are written after its step is
// committed, so a caller that saw its status may be early.
func waitRecords(t *testing.T, dir, group string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := readRecords(t, dir, group)
		if len(recs) >= n || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeExecutionLogs creates state machines with a loggingConfiguration
// through the AWS SDK (a Standard one logging ALL with data, an Express one
// logging ERROR without) on stepd serve --log-groups, runs executions, and
// reads the records in each log group's file; it checks AWS's validation
// of the configuration and that Describe returns it.
func TestServeExecutionLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, _ := serveLogging(t, "--data", "", "--log-groups", dir)
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	all := &types.LoggingConfiguration{Level: types.LogLevelAll, IncludeExecutionData: true,
		Destinations: []types.LogDestination{{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String(logGroup("/aws/vendedlogs/states/orders"))}}}}
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("orders"), RoleArn: aws.String(role), LoggingConfiguration: all,
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"ok":1},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: sm.StateMachineArn})
	if err != nil || d.LoggingConfiguration == nil || d.LoggingConfiguration.Level != types.LogLevelAll || !d.LoggingConfiguration.IncludeExecutionData ||
		len(d.LoggingConfiguration.Destinations) != 1 || *d.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn != logGroup("/aws/vendedlogs/states/orders") {
		t.Fatalf("DescribeStateMachine: %+v %v", d.LoggingConfiguration, err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"n":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, *ex.ExecutionArn, types.ExecutionStatusSucceeded)

	errorOnly := &types.LoggingConfiguration{Level: types.LogLevelError,
		Destinations: []types.LogDestination{{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String(logGroup("express"))}}}}
	xsm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("fast"), RoleArn: aws.String(role), Type: types.StateMachineTypeExpress,
		LoggingConfiguration: errorOnly, Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"F"},"F":{"Type":"Fail","Error":"Oops","Cause":"on purpose"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	xr, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: xsm.StateMachineArn, Input: aws.String(`{"secret":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, *xr.ExecutionArn, types.ExecutionStatusFailed)

	recs := waitRecords(t, dir, "/aws/vendedlogs/states/orders", 4)
	var typesSeen []string
	for i, r := range recs {
		typesSeen = append(typesSeen, r["type"].(string))
		for _, k := range []string{"id", "previous_event_id", "event_timestamp", "execution_arn", "redrive_count"} {
			if _, ok := r[k].(string); !ok {
				t.Errorf("record %d: %s = %#v, want a string", i, k, r[k])
			}
		}
		if _, ok := r["details"].(map[string]any); !ok {
			t.Errorf("record %d: details = %#v", i, r["details"])
		}
		if r["execution_arn"] != *ex.ExecutionArn || r["redrive_count"] != "0" {
			t.Errorf("record %d: %v", i, r)
		}
	}
	if want := []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"}; !slices.Equal(typesSeen, want) {
		t.Fatalf("Standard records: %v, want %v", typesSeen, want)
	}
	if d := recs[0]["details"].(map[string]any); d["input"] != `{"n":7}` || d["roleArn"] != role {
		t.Errorf("ExecutionStarted details: %v", d)
	}
	if d := recs[3]["details"].(map[string]any); d["output"] != `{"ok":1}` {
		t.Errorf("ExecutionSucceeded details: %v", d)
	}
	if recs[0]["id"] != "1" || recs[0]["previous_event_id"] != "0" || recs[2]["previous_event_id"] != "2" {
		t.Errorf("ids: %v %v", recs[0], recs[2])
	}

	xrecs := waitRecords(t, dir, "express", 2)
	typesSeen = nil
	for _, r := range xrecs {
		typesSeen = append(typesSeen, r["type"].(string))
		if r["execution_arn"] != *xr.ExecutionArn {
			t.Errorf("express record of %v, want %s", r["execution_arn"], *xr.ExecutionArn)
		}
		if d := r["details"].(map[string]any); d["input"] != nil || d["output"] != nil {
			t.Errorf("execution data logged without includeExecutionData: %v", r)
		}
	}
	if want := []string{"FailStateEntered", "ExecutionFailed"}; !slices.Equal(typesSeen, want) {
		t.Fatalf("Express records at ERROR: %v, want %v", typesSeen, want)
	}
	if d := xrecs[1]["details"].(map[string]any); d["error"] != "Oops" || d["cause"] != "on purpose" {
		t.Errorf("ExecutionFailed details: %v", d)
	}

	// Turning it OFF stops the records.
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn,
		LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelOff}}); err != nil {
		t.Fatal(err)
	}
	ex2, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, *ex2.ExecutionArn, types.ExecutionStatusSucceeded)
	if n := len(readRecords(t, dir, "/aws/vendedlogs/states/orders")); n != len(recs) {
		t.Errorf("%d records after logging was turned off, want %d", n, len(recs))
	}
	if d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: sm.StateMachineArn}); err != nil || d.LoggingConfiguration.Level != types.LogLevelOff {
		t.Errorf("after turning it off: %+v %v", d.LoggingConfiguration, err)
	}

	// AWS's validation.
	for _, tc := range []struct {
		cfg  *types.LoggingConfiguration
		code string
	}{
		{&types.LoggingConfiguration{Level: types.LogLevelAll}, "InvalidLoggingConfiguration"},
		{&types.LoggingConfiguration{Level: "SOME"}, "ValidationException"},
		{&types.LoggingConfiguration{Level: types.LogLevelFatal, Destinations: []types.LogDestination{{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{}}}}, "InvalidLoggingConfiguration"},
		{&types.LoggingConfiguration{Level: types.LogLevelFatal, Destinations: []types.LogDestination{{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String("arn:aws:logs:us-east-1:1:log-group:x")}}}}, "InvalidLoggingConfiguration"},
		{&types.LoggingConfiguration{Level: types.LogLevelAll, Destinations: append(all.Destinations, all.Destinations...)}, "InvalidLoggingConfiguration"},
	} {
		_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), RoleArn: aws.String(role), LoggingConfiguration: tc.cfg,
			Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
		if got := apiErrorCode(err); got != tc.code {
			t.Errorf("CreateStateMachine with %+v: %v, want %s", tc.cfg, err, tc.code)
		}
	}
}

// expressDetails sends stepd's X-Stepd-Express-Details header, so that
// DescribeExecution describes Express executions too (AWS refuses).
func expressDetails(o *sfn.Options) {
	o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("X-Stepd-Express-Details", "1"))
}

func waitStatus(t *testing.T, c *sfn.Client, arn string, want types.ExecutionStatus) *sfn.DescribeExecutionOutput {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}, expressDetails)
		if err == nil && d.Status == want {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s: %+v %v, want %s", arn, d, err, want)
		}
	}
}

// webhook is a real HTTP server on 127.0.0.1 that receives events: it
// answers 503 to the first fail requests (or, while down is set, to all)
// and 200 after, keeping every body it took.
type webhook struct {
	mu       sync.Mutex
	fail     int
	down     bool
	attempts []map[string]any
	took     []map[string]any
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(rw, "bad event", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts = append(w.attempts, ev)
	if w.down || w.fail > 0 {
		w.fail--
		http.Error(rw, "not now", http.StatusServiceUnavailable)
		return
	}
	w.took = append(w.took, ev)
}

// events returns the events taken (or, with attempts, every one received).
func (w *webhook) events(attempts bool) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if attempts {
		return slices.Clone(w.attempts)
	}
	return slices.Clone(w.took)
}

// waitEvent waits until the webhook has taken (or, with attempts, received)
// the event of an execution's status.
func (w *webhook) waitEvent(t *testing.T, arn, status string, attempts bool) map[string]any {
	t.Helper()
	// The bound only ends a failure. It is longer than notify's hold (a
	// minute): a server killed while it delivered a notice leaves the notice
	// hidden that long from the dispatcher of the server started next.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, ev := range w.events(attempts) {
			if d := ev["detail"].(map[string]any); d["executionArn"] == arn && d["status"] == status {
				return ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event of %s; events: %v", status, arn, w.events(true))
		}
	}
}

// TestServeEvents runs executions on stepd serve with a webhook that fails
// its first attempts and a command: both get every status change as
// AWS's EventBridge event, the webhook after retries.
func TestServeEvents(t *testing.T) {
	t.Parallel()
	hook := &webhook{fail: 2}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	out := t.TempDir() // the command writes each event to a file of its own
	url, _ := serveLogging(t, "--data", t.TempDir(), "--events-webhook", srv.URL, "--events-command", "cat > $(mktemp -p "+out+")")
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("ev"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.ok","BooleanEquals":true,"Next":"P"}],"Default":"F"},"P":{"Type":"Pass","Result":"done","End":true},"F":{"Type":"Fail","Error":"Bad","Cause":"not ok"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	good, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("good"), Input: aws.String(`{"ok":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("bad"), Input: aws.String(`{"ok":false}`)})
	if err != nil {
		t.Fatal(err)
	}
	ok := hook.waitEvent(t, *good.ExecutionArn, "SUCCEEDED", false)
	failed := hook.waitEvent(t, *bad.ExecutionArn, "FAILED", false)
	started := hook.waitEvent(t, *good.ExecutionArn, "RUNNING", false)
	hook.waitEvent(t, *bad.ExecutionArn, "RUNNING", false)
	d := waitStatus(t, c, *good.ExecutionArn, types.ExecutionStatusSucceeded)
	for _, ev := range []map[string]any{ok, failed, started} {
		if ev["version"] != "0" || ev["detail-type"] != "Step Functions Execution Status Change" || ev["source"] != "aws.states" ||
			ev["account"] != "123456789012" || ev["region"] != "us-east-1" || len(ev["id"].(string)) != 36 {
			t.Errorf("event envelope: %v", ev)
		}
		if _, err := time.Parse(time.RFC3339, ev["time"].(string)); err != nil {
			t.Errorf("event time: %v", err)
		}
	}
	if r := ok["resources"].([]any); len(r) != 1 || r[0] != *good.ExecutionArn {
		t.Errorf("resources: %v", r)
	}
	det := ok["detail"].(map[string]any)
	if det["stateMachineArn"] != *sm.StateMachineArn || det["name"] != "good" || det["input"] != `{"ok":true}` || det["output"] != `"done"` ||
		det["startDate"] != float64(d.StartDate.UnixMilli()) || det["stopDate"] != float64(d.StopDate.UnixMilli()) ||
		det["inputDetails"].(map[string]any)["included"] != true || det["outputDetails"].(map[string]any)["included"] != true || det["error"] != nil {
		t.Errorf("SUCCEEDED detail: %v", det)
	}
	if det := started["detail"].(map[string]any); det["stopDate"] != nil || det["output"] != nil || det["outputDetails"] != nil || det["status"] != "RUNNING" {
		t.Errorf("RUNNING detail: %v", det)
	}
	if det := failed["detail"].(map[string]any); det["error"] != "Bad" || det["cause"] != "not ok" || det["output"] != nil {
		t.Errorf("FAILED detail: %v", det)
	}
	// The failed attempts carried the same event: same id.
	if n := len(hook.events(true)); n != len(hook.events(false))+2 {
		t.Errorf("%d attempts for %d events, want 2 more", n, len(hook.events(false)))
	}
	for _, a := range hook.events(true) {
		ad := a["detail"].(map[string]any)
		for _, b := range hook.events(false) {
			if bd := b["detail"].(map[string]any); ad["executionArn"] == bd["executionArn"] && ad["status"] == bd["status"] && a["id"] != b["id"] {
				t.Errorf("a retry of %s %s has id %s, the delivery %s", ad["executionArn"], ad["status"], a["id"], b["id"])
			}
		}
	}
	// The command got each of the four once.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(out, "*"))
		seen := map[string]bool{}
		for _, f := range files {
			data, _ := os.ReadFile(f) // a command may still be writing it
			var ev map[string]any
			if json.Unmarshal(data, &ev) == nil && ev["detail-type"] == "Step Functions Execution Status Change" {
				seen[ev["id"].(string)] = true
			}
		}
		if len(files) > 4 {
			t.Fatalf("the command got %d events, want 4", len(files))
		}
		if len(seen) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command got %d events (%d whole and distinct), want 4", len(files), len(seen))
		}
	}
}

// TestEventsAfterCrash kills stepd serve (SIGKILL) after an execution's
// status changed but before its event could be delivered (the webhook is
// down), then starts it again with the webhook up: the event arrives.
func TestEventsAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds stepd")
	}
	t.Parallel()
	bin := stepdBinary(t)
	hook := &webhook{down: true}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	data, addr := t.TempDir(), freeAddr(t)
	cmd := startServe(t, bin, addr, data, "--events-webhook", srv.URL)
	c := restartingClient(addr)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("crash"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, *ex.ExecutionArn, types.ExecutionStatusSucceeded)
	hook.waitEvent(t, *ex.ExecutionArn, "SUCCEEDED", true) // tried, refused
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if n := len(hook.events(false)); n != 0 {
		t.Fatalf("%d events taken while the webhook was down", n)
	}
	hook.mu.Lock()
	hook.down = false
	hook.mu.Unlock()
	cmd = startServe(t, bin, addr, data, "--events-webhook", srv.URL)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ev := hook.waitEvent(t, *ex.ExecutionArn, "SUCCEEDED", false)
	hook.waitEvent(t, *ex.ExecutionArn, "RUNNING", false)
	if det := ev["detail"].(map[string]any); det["output"] != `{"x":1}` {
		t.Errorf("detail after the crash: %v", det)
	}
}

// TestServeRetention runs stepd serve with --retention 1s: finished
// executions, Standard and Express, are deleted with their histories once
// that long has passed; a running one stays.
func TestServeRetention(t *testing.T) {
	t.Parallel()
	url, _ := serveLogging(t, "--data", t.TempDir(), "--retention", "1s")
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	var ended []string
	for _, typ := range []types.StateMachineType{types.StateMachineTypeStandard, types.StateMachineTypeExpress} {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("ret-" + string(typ)), RoleArn: aws.String(role), Type: typ,
			Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, c, *ex.ExecutionArn, types.ExecutionStatusSucceeded)
		ended = append(ended, *ex.ExecutionArn)
	}
	wait, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("ret-wait"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	running, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: wait.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	for _, arn := range ended {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}, expressDetails)
			if apiErrorCode(err) == "ExecutionDoesNotExist" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %s still there after its retention: %v", arn, err)
			}
		}
		if _, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)}, expressDetails); apiErrorCode(err) != "ExecutionDoesNotExist" {
			t.Errorf("the history of %s after its retention: %v", arn, err)
		}
	}
	if d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: running.ExecutionArn}); err != nil || d.Status != types.ExecutionStatusRunning {
		t.Errorf("the running execution: %+v %v", d, err)
	}
}

func TestParseRetention(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "0": 0, "36h": 36 * time.Hour, "1.5d": 36 * time.Hour} {
		if got, err := parseRetention(in); err != nil || got != want {
			t.Errorf("parseRetention(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1h", "-2d", "d"} {
		if _, err := parseRetention(in); err == nil || !strings.Contains(err.Error(), "--retention") {
			t.Errorf("parseRetention(%q): %v, want an error naming --retention", in, err)
		}
	}
}
