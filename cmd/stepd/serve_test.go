package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestServeMetrics runs known executions on a real stepd serve (SQLite
// store, a Lambda function served by a local command, an activity worked
// through the API) and reads GET /metrics with Prometheus's text parser.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "registry.json", `{"Functions":{"double":{"Command":["sh","-c","read -r line; n=${line#*:}; n=${n%\\}}; printf '{\"n\":%d}' $((n*2))"]}}}`)
	url, _ := serveLogging(t, "--data", t.TempDir(), "--config", cfg)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	c := restartingClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	create := func(name, def string) string {
		t.Helper()
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/r")})
		if err != nil {
			t.Fatal(err)
		}
		return *out.StateMachineArn
	}
	start := func(sm string) string {
		t.Helper()
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"n":3}`)})
		if err != nil {
			t.Fatal(err)
		}
		return *out.ExecutionArn
	}
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("work")})
	if err != nil {
		t.Fatal(err)
	}
	pass := create("pass", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	fail := create("fail", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E"}}}`)
	wait := create("wait", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)
	fns := create("fns", `{"StartAt":"Invoke","States":{
		"Invoke":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"double","Payload":{"n.$":"$.n"}},"OutputPath":"$.Payload","Next":"Bare"},
		"Bare":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:double","Next":"Act"},
		"Act":{"Type":"Task","Resource":"`+*act.ActivityArn+`","End":true}}}`)

	var ends []string
	for range 3 {
		ends = append(ends, start(pass))
	}
	ends = append(ends, start(fail))
	waiting := start(wait)
	ends = append(ends, start(fns))
	task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	if err != nil || task.TaskToken == nil {
		t.Fatalf("GetActivityTask: %v", err)
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{"done":true}`)}); err != nil {
		t.Fatal(err)
	}
	for _, arn := range ends {
		if d := waitFinished(t, c, arn); d.Status == types.ExecutionStatusRunning {
			t.Fatalf("%s still running", arn)
		}
	}
	// The Wait alone is left, asleep: dormant, with no driver and no
	// timer in memory (a driver ends just after its last step is
	// committed: wait for the gauges to settle).
	waitMetric(t, url+"metrics", "stepd_executions_dormant", 1)
	waitMetric(t, url+"metrics", "stepd_executions_running", 0)
	waitMetric(t, url+"metrics", "stepd_timers_pending", 0)
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(waiting)}); err != nil {
		t.Fatal(err)
	}
	waitFinished(t, c, waiting)
	waitMetric(t, url+"metrics", "stepd_executions_running", 0)
	waitMetric(t, url+"metrics", "stepd_executions_dormant", 0)
	_, _ = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:nope:x")})

	fams := scrape(t, url+"metrics")
	lambdaARN := "arn:aws:lambda:us-east-1:123456789012:function:double"
	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"stepd_executions_started_total", map[string]string{"state_machine_arn": pass}, 3},
		{"stepd_executions_succeeded_total", map[string]string{"state_machine_arn": pass}, 3},
		{"stepd_executions_failed_total", map[string]string{"state_machine_arn": fail}, 1},
		{"stepd_executions_started_total", map[string]string{"state_machine_arn": wait}, 1},
		{"stepd_executions_aborted_total", map[string]string{"state_machine_arn": wait}, 1},
		{"stepd_executions_succeeded_total", map[string]string{"state_machine_arn": fns}, 1},
		{"stepd_execution_throttled_total", map[string]string{"state_machine_arn": fns}, 0},
		{"stepd_execution_time_seconds", map[string]string{"state_machine_arn": pass}, 3},
		{"stepd_service_integrations_scheduled_total", map[string]string{"service_integration_resource_arn": "arn:aws:states:::lambda:invoke"}, 1},
		{"stepd_service_integrations_succeeded_total", map[string]string{"service_integration_resource_arn": "arn:aws:states:::lambda:invoke"}, 1},
		{"stepd_service_integration_run_time_seconds", map[string]string{"service_integration_resource_arn": "arn:aws:states:::lambda:invoke"}, 1},
		{"stepd_lambda_functions_scheduled_total", map[string]string{"lambda_function_arn": lambdaARN}, 1},
		{"stepd_lambda_functions_started_total", map[string]string{"lambda_function_arn": lambdaARN}, 1},
		{"stepd_lambda_functions_succeeded_total", map[string]string{"lambda_function_arn": lambdaARN}, 1},
		{"stepd_lambda_function_time_seconds", map[string]string{"lambda_function_arn": lambdaARN}, 1},
		{"stepd_activities_scheduled_total", map[string]string{"activity_arn": *act.ActivityArn}, 1},
		{"stepd_activities_started_total", map[string]string{"activity_arn": *act.ActivityArn}, 1},
		{"stepd_activities_succeeded_total", map[string]string{"activity_arn": *act.ActivityArn}, 1},
		{"stepd_activity_run_time_seconds", map[string]string{"activity_arn": *act.ActivityArn}, 1},
		{"stepd_activity_schedule_time_seconds", map[string]string{"activity_arn": *act.ActivityArn}, 1},
		{"stepd_api_requests_total", map[string]string{"operation": "StartExecution", "code": "OK"}, 6},
		{"stepd_api_requests_total", map[string]string{"operation": "DescribeExecution", "code": "ExecutionDoesNotExist"}, 1},
		{"stepd_api_request_seconds", map[string]string{"operation": "CreateActivity"}, 1},
		{"stepd_timers_pending", nil, 0},
		{"stepd_executions_running", nil, 0},
	}
	for _, ck := range checks {
		if got, ok := metricValue(fams, ck.family, ck.labels); !ok || got != ck.want {
			t.Errorf("%s%v = %v (found %v), want %v", ck.family, ck.labels, got, ok, ck.want)
		}
	}
	// Steps: 6 starts (created with their execution) and 11 appended
	// (the Pass and Fail runs, the Wait and its stop, two task results,
	// the activity's start and result and the run of the first state);
	// each appended step's commit was timed; the store batched writes.
	for _, ck := range []struct {
		family string
		want   float64
	}{{"stepd_transitions_total", 17}, {"stepd_store_commit_seconds", 11}} {
		if got, ok := metricValue(fams, ck.family, nil); !ok || got != ck.want {
			t.Errorf("%s = %v (found %v), want %v", ck.family, got, ok, ck.want)
		}
	}
	if got, _ := metricValue(fams, "stepd_store_batch_writes", nil); got < 1 {
		t.Errorf("stepd_store_batch_writes has %v transactions, want some", got)
	}
}

// waitMetric waits until the unlabelled metric family reads want.
func waitMetric(t *testing.T, url, family string, want float64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, ok := metricValue(scrape(t, url), family, nil)
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v (found %v), want %v", family, got, ok, want)
		}
	}
}

// scrape reads the metrics at url with Prometheus's text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// metricValue returns the value of the family's metric with the labels
// (all of them, when labels is nil): a counter's or a gauge's value, a
// histogram's sample count.
func metricValue(fams map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := fams[family]
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.Metric {
		for k, v := range labels {
			ok := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// lockedBuffer is a buffer that a server writes while a test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveLogging runs stepd serve in process on a free port until the test
// ends, its standard error in the returned buffer.
func serveLogging(t *testing.T, args ...string) (url string, logs *lockedBuffer) {
	t.Helper()
	url, logs, _ = serveInProcess(t, args...)
	return url, logs
}

// serveInProcess is serveLogging that also returns a function stopping
// the server (as SIGTERM does) and waiting for it.
func serveInProcess(t *testing.T, args ...string) (url string, logs *lockedBuffer, stop func()) {
	t.Helper()
	return serveInProcessTo(t, &lockedBuffer{}, args...)
}

// serveInProcessTo is serveInProcess writing its standard output to stdout.
func serveInProcessTo(t *testing.T, stdout *lockedBuffer, args ...string) (url string, logs *lockedBuffer, stop func()) {
	t.Helper()
	// The server listens on a port of the kernel's choosing and says which:
	// a port found free beforehand may be taken by another test's server
	// (or one restarting on a fixed address) before this one listens.
	logs = &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), stdout, logs)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if url := listeningURL(stdout.String()); url != "" {
			return url + "/", logs, stop
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("stepd serve exited with %d: %s", code, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("stepd serve did not start: %s", logs)
		}
	}
}

// listeningURL is the URL of the "listening on" line of a server's
// standard output, text or JSON; "" until it is there.
func listeningURL(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if url, ok := strings.CutPrefix(line, "listening on "); ok {
			return url
		}
		var rec struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening on" {
			return rec.URL
		}
	}
	return ""
}

// TestServeLogs checks --log-format json and --log-level debug: every line
// of standard output and standard error is JSON; one line per API request,
// one per execution end (its duration in seconds, a number), and a command
// handler's standard error logged with its task.
func TestServeLogs(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "registry.json", `{"Functions":{"talk":{"Command":["sh","-c","echo 'working hard' >&2; echo '{}'"]}}}`)
	stdout := &lockedBuffer{}
	url, logs, stop := serveInProcessTo(t, stdout, "--data", "", "--config", cfg, "--log-format", "json", "--log-level", "debug",
		"--metrics-addr", "127.0.0.1:0", "--pprof-addr", "127.0.0.1:0")
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("talk"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:talk","Next":"F"},"F":{"Type":"Fail","Error":"Oops","Cause":"on purpose"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	waitFinished(t, c, *ex.ExecutionArn)
	stop() // its last lines written

	announced := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a line of standard output is not JSON: %q", line)
		}
		if u, _ := rec["url"].(string); rec["level"] == "INFO" && strings.HasPrefix(u, "http://127.0.0.1:") {
			announced[rec["msg"].(string)] = true
		}
	}
	for _, msg := range []string{"listening on", "web console at", "metrics at", "pprof on"} {
		if !announced[msg] {
			t.Errorf("no JSON line %q with its url on standard output:\n%s", msg, stdout)
		}
	}
	var requests, ends, stderrs int
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		switch rec["msg"] {
		case "api request":
			if took, ok := rec["took"].(float64); rec["level"] == "DEBUG" && rec["operation"] == "StartExecution" && rec["code"] == "OK" && ok && took >= 0 && took < 60 {
				requests++
			}
		case "execution ended":
			if d, ok := rec["duration"].(float64); rec["level"] == "INFO" && rec["execution"] == *ex.ExecutionArn && rec["status"] == "FAILED" && rec["error"] == "Oops" && rec["cause"] == "on purpose" &&
				ok && d >= 0 && d < 600 {
				ends++
			}
		case "task handler stderr":
			if rec["execution"] == *ex.ExecutionArn && rec["state"] == "T" && rec["stderr"] == "working hard" {
				stderrs++
			}
		}
	}
	if requests != 1 || ends != 1 || stderrs != 1 {
		t.Errorf("StartExecution lines %d, execution end lines %d, handler stderr lines %d; want one of each in:\n%s", requests, ends, stderrs, logs)
	}

	// At the default level (info), API requests are not logged.
	url, logs = serveLogging(t, "--data", "")
	res, err := http.Post(url, "application/x-amz-json-1.0", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if strings.Contains(logs.String(), "api request") {
		t.Errorf("an API request logged at the info level:\n%s", logs)
	}
	// With --log-format json, an error that stops the start is JSON too.
	var stderr strings.Builder
	code := Main(ctx, []string{"serve", "--data", "", "--addr", "127.0.0.1:0", "--log-format", "json", "--lease", "1s", "--store", "postgres://x@127.0.0.1/x"}, strings.NewReader(""), io.Discard, &stderr)
	var rec map[string]any
	if err := json.Unmarshal([]byte(stderr.String()), &rec); code != exitUsage || err != nil || rec["level"] != "ERROR" || rec["error"] != "--lease 1s: want at least 2s" || rec["help"] != "run 'stepd serve -h' for help" {
		t.Errorf("a start-up error with --log-format json: exit %d, %q", code, stderr.String())
	}
	for _, bad := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		var stderr strings.Builder
		if code := Main(ctx, append([]string{"serve", "--data", "", "--addr", "127.0.0.1:0"}, bad...), strings.NewReader(""), io.Discard, &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), bad[0]) {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr.String())
		}
	}
}

// TestServeHealth checks /healthz and /readyz of a real server, open even
// when the API requires signatures, and the count of executions resumed
// after a restart.
func TestServeHealth(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	url, _, stop := serveInProcess(t, "--data", data)
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("w"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn}); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := getJSON(t, url+"readyz"); code != 200 || body["status"] != "ok" || body["store"] != "ok" || body["resumed"] != 0.0 {
		t.Errorf("/readyz before the restart: %d %v", code, body)
	}
	stop()

	url, _, _ = serveInProcess(t, "--data", data, "--access-keys", "k:s")
	if code, body := getJSON(t, url+"healthz"); code != 200 || body["status"] != "ok" {
		t.Errorf("/healthz: %d %v", code, body)
	}
	if code, body := getJSON(t, url+"readyz"); code != 200 || body["status"] != "ok" || body["store"] != "ok" || body["resumed"] != 2.0 {
		t.Errorf("/readyz after the restart: %d %v, want 2 resumed", code, body)
	}
}

// getJSON gets url and decodes its JSON object.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v", url, res.StatusCode, err)
	}
	return res.StatusCode, body
}

// TestServeTimeScale runs a 1-hour Wait on a server at --time-scale
// 0.0001 (0.36 s of real time), across a restart, and checks that the
// execution completes within the test's deadline and that its history
// shows the hour, in order.
func TestServeTimeScale(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	url, _, stop := serveInProcess(t, "--data", data, "--time-scale", "0.0001")
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("hour"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"Next":"P"},"P":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	start := func() string {
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
		if err != nil {
			t.Fatal(err)
		}
		return *ex.ExecutionArn
	}
	first := start()
	checkHour(t, c, first, waitFinished(t, c, first))

	// Started, then the server stops at once and starts again at the same
	// scale: the Wait goes on in the same time.
	second := start()
	stop()
	url, _, _ = serveInProcess(t, "--data", data, "--time-scale", "0.0001")
	c = restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	checkHour(t, c, second, waitFinished(t, c, second))
	// The new server timed the resumed execution from its start.
	h := metricFamilyHistogram(t, scrape(t, url+"metrics"), "stepd_execution_time_seconds", *sm.StateMachineArn)
	if h.GetSampleCount() != 1 || h.GetSampleSum() < 3600 {
		t.Errorf("ExecutionTime after the restart: %d samples, sum %vs; want the resumed execution's hour", h.GetSampleCount(), h.GetSampleSum())
	}
}

// metricFamilyHistogram returns the histogram of a state machine in a
// family.
func metricFamilyHistogram(t *testing.T, fams map[string]*dto.MetricFamily, family, sm string) *dto.Histogram {
	t.Helper()
	if f := fams[family]; f != nil {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "state_machine_arn" && l.GetValue() == sm {
					return m.Histogram
				}
			}
		}
	}
	t.Fatalf("no %s for %s", family, sm)
	return nil
}

// checkHour checks that an execution that waited an hour succeeded, that
// its history's times never go back and that the Wait lasted an hour.
func checkHour(t *testing.T, c *sfn.Client, arn string, d *sfn.DescribeExecutionOutput) {
	t.Helper()
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("%s: %s", arn, d.Status)
	}
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	var entered, exited time.Time
	for i, ev := range h.Events {
		if i > 0 && ev.Timestamp.Before(*h.Events[i-1].Timestamp) {
			t.Errorf("event %d (%s) at %v, before event %d at %v", ev.Id, ev.Type, *ev.Timestamp, h.Events[i-1].Id, *h.Events[i-1].Timestamp)
		}
		switch ev.Type {
		case types.HistoryEventTypeWaitStateEntered:
			entered = *ev.Timestamp
		case types.HistoryEventTypeWaitStateExited:
			exited = *ev.Timestamp
		}
	}
	// At least the hour: how much more depends on the machine's load (a
	// millisecond late is ten seconds at this scale), so no upper bound.
	if wait := exited.Sub(entered); wait < time.Hour {
		t.Errorf("the Wait lasted %v in the history, want an hour", wait)
	}
	if !d.StopDate.After(d.StartDate.Add(time.Hour)) {
		t.Errorf("started %v, stopped %v: less than the hour waited", d.StartDate, d.StopDate)
	}
}

// TestTimeScaleDefault checks the time scale's sources: STEPD_TIME_SCALE,
// else WAIT_TIME_SCALE.
func TestTimeScaleDefault(t *testing.T) {
	t.Setenv("STEPD_TIME_SCALE", "")
	t.Setenv("WAIT_TIME_SCALE", "0.5")
	if got := timeScaleDefault(); got != 0.5 {
		t.Errorf("WAIT_TIME_SCALE=0.5: %v", got)
	}
	t.Setenv("STEPD_TIME_SCALE", "0.25")
	if got := timeScaleDefault(); got != 0.25 {
		t.Errorf("STEPD_TIME_SCALE=0.25 beside WAIT_TIME_SCALE: %v", got)
	}
}

// TestShortJSONErrors checks the command line's short messages for
// definitions: malformed JSON as file:line:col: message from run, validate
// and test, unknown fields with the nearest known one; while the API still
// answers AWS's messages.
func TestShortJSONErrors(t *testing.T) {
	t.Parallel()
	bad := writeFile(t, "bad.json", "{\"StartAt\":\"P\",\n \"States\":{\"P\":{\"Type\":\"Pass\",\n   \"End\":true,}}}\n")
	typo := writeFile(t, "typo.json", `{"StartAt":"P","States":{"P":{"Type":"Pass","Ende":true}}}`)
	syntax := bad + ":3:15: invalid JSON: unexpected '}', expecting a string key\n"
	if code, _, stderr := runMain(t, "", "run", bad); code != exitUsage || stderr != syntax {
		t.Errorf("run: exit %d, stderr %q, want %q", code, stderr, syntax)
	}
	if code, stdout, _ := runMain(t, "", "validate", bad); code != exitFail || stdout != syntax {
		t.Errorf("validate: exit %d, stdout %q, want %q", code, stdout, syntax)
	}
	want := typo + ":/States/P/Ende: ERROR SCHEMA_VALIDATION_FAILED: Field 'Ende' is not supported (did you mean 'End'?)"
	if code, stdout, _ := runMain(t, "", "validate", typo); code != exitFail || !strings.Contains(stdout, want) {
		t.Errorf("validate: exit %d, stdout %q, want a line %q", code, stdout, want)
	}
	if code, _, stderr := runMain(t, "", "run", typo); code != exitUsage || !strings.Contains(stderr, "(did you mean 'End'?)") {
		t.Errorf("run: exit %d, stderr %q, want the hint", code, stderr)
	}
	caseFile := filepath.Join(filepath.Dir(bad), "case.json")
	if err := os.WriteFile(caseFile, []byte(`{"name":"c","kind":"execution","definitionFile":"bad.json","expected":{"status":"SUCCEEDED"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runMain(t, "", "test", caseFile); code != exitUsage || !strings.Contains(stderr, strings.TrimSuffix(syntax, "\n")) {
		t.Errorf("test: exit %d, stderr %q, want %q", code, stderr, syntax)
	}
	broken := writeFile(t, "broken.json", "{\"name\":\"c\",\n\"kind\":}")
	if code, _, stderr := runMain(t, "", "test", broken); code != exitUsage || !strings.Contains(stderr, broken+":2:8: invalid JSON: ") {
		t.Errorf("test of a malformed case file: exit %d, stderr %q", code, stderr)
	}

	// The API answers AWS's messages, without hints.
	url, _ := serveLogging(t, "--data", "")
	for _, def := range []string{"{\"StartAt\":\"P\",\n \"States\":{\"P\":{\"Type\":\"Pass\",\n   \"End\":true,}}}\n", `{"StartAt":"P","States":{"P":{"Type":"Pass","Ende":true}}}`} {
		body, _ := json.Marshal(map[string]string{"definition": def})
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.ValidateStateMachineDefinition")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(b), "did you mean") || strings.Contains(string(b), "invalid JSON:") ||
			!(strings.Contains(string(b), "[Source: (String)") || strings.Contains(string(b), `"Field 'Ende' is not supported"`)) {
			t.Errorf("ValidateStateMachineDefinition: %d %s", res.StatusCode, b)
		}
	}
}
