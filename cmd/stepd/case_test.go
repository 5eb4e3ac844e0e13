package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/value"
)

const (
	replayDir  = "../../examples/replay"
	orderExec  = "arn:aws:states:us-east-1:123456789012:execution:orders:order-42"
	replayRole = "arn:aws:iam::123456789012:role/demo"
)

// runOrder serves examples/replay with stepd serve in process (its
// functions are commands of the registry), runs the order of order.json
// to its end and returns the server's URL. The run retries Reserve twice
// (Busy), maps PriceLine over two lines, catches Notify's failure, runs
// the shipping workflow as a .sync:2 child and fails in Confirm (a path
// that is not in Ship's output).
func runOrder(t *testing.T) string {
	t.Helper()
	url, c := serveReplay(t)
	ctx := context.Background()
	var orders *string
	for _, name := range []string{"shipping", "orders"} {
		def, err := os.ReadFile(filepath.Join(replayDir, name+".asl.json"))
		if err != nil {
			t.Fatal(err)
		}
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(string(def)), RoleArn: aws.String(replayRole)})
		if err != nil {
			t.Fatal(err)
		}
		orders = sm.StateMachineArn
	}
	input, err := os.ReadFile(filepath.Join(replayDir, "order.json"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: orders, Name: aws.String("order-42"), Input: aws.String(string(input))})
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinished(t, c, *x.ExecutionArn)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Runtime" || !strings.Contains(aws.ToString(d.Cause), "trackingNumber") {
		t.Fatalf("the order: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	return url
}

// serveReplay starts stepd serve with the functions of examples/replay.
func serveReplay(t *testing.T) (string, *sfn.Client) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		skipUnlessCI(t, "python3 (the example's functions) is not installed")
	}
	t.Setenv("TMPDIR", t.TempDir()) // where reserve.py counts its tries
	url := startInProcess(t, "--data", "", "--config", filepath.Join(replayDir, "registry.json"))
	return url, restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
}

// TestCaseFromDistributedMap: the Task states of a Distributed Map's
// children are in the children's histories, which --endpoint fetches
// (ListMapRuns, ListExecutions); without them the case says what it
// lacks.
func TestCaseFromDistributedMap(t *testing.T) {
	url, c := serveReplay(t)
	ctx := context.Background()
	const def = `{"StartAt": "Each", "States": {"Each": {"Type": "Map", "ItemsPath": "$.lines", "End": true,
	  "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "PriceLine",
	    "States": {"PriceLine": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:price", "End": true}}}}}}`
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("prices"), Definition: aws.String(def), RoleArn: aws.String(replayRole)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("p1"),
		Input: aws.String(`{"lines": [{"sku": "tea", "qty": 3}, {"sku": "cup", "qty": 2}, {"sku": "tea", "qty": 1}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if d := waitFinished(t, c, *x.ExecutionArn); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("%s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "p1.case.json")
	code, stdout, stderr := runMain(t, "", "case", "from-history", "--endpoint", url, "--execution-arn", *x.ExecutionArn, "-o", out)
	if code != 0 || !strings.Contains(stderr, "the case reproduces the recorded outcome on stepd") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	got := value.String(at(readCase(t, out), "mocks", "MockedResponses", "PriceLine"))
	for _, want := range []string{`{"sku":"tea","price":12}`, `{"sku":"cup","price":14}`, `{"sku":"tea","price":4}`} {
		if !strings.Contains(got, want) {
			t.Errorf("PriceLine's responses %s lack %s", got, want)
		}
	}
	if code, stdout, stderr = runMain(t, "", "test", out); code != 0 {
		t.Fatalf("stepd test: exit %d\n%s%s", code, stdout, stderr)
	}
	// The parent's history alone: the case says the children are missing.
	api, err := newSFNClient(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	page, err := api.call(ctx, "us-east-1", "GetExecutionHistory", value.ObjectOf("executionArn", *x.ExecutionArn))
	if err != nil {
		t.Fatal(err)
	}
	hist, defFile := filepath.Join(dir, "parent.json"), filepath.Join(dir, "prices.asl.json")
	if err := os.WriteFile(hist, []byte(value.String(page)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(defFile, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runMain(t, "", "case", "from-history", hist, "--definition", defFile, "--execution-arn", *x.ExecutionArn, "-o", out)
	if code != 0 || !strings.Contains(stderr, "its child executions' histories were not given") || !strings.Contains(stderr, "does NOT reproduce") {
		t.Fatalf("without the children: exit %d\n%s%s", code, stdout, stderr)
	}
	if notes := value.String(at(readCase(t, out), "notes")); !strings.Contains(notes, "child executions' histories were not given") {
		t.Errorf("the case's notes do not say the children are missing: %s", notes)
	}
	// The children's histories given as files.
	runs, err := api.list(ctx, "us-east-1", "ListMapRuns", "mapRuns", "mapRunArn", value.ObjectOf("executionArn", *x.ExecutionArn))
	if err != nil || len(runs) != 1 {
		t.Fatalf("map runs %v: %v", runs, err)
	}
	kids, err := api.list(ctx, "us-east-1", "ListExecutions", "executions", "executionArn", value.ObjectOf("mapRunArn", runs[0]))
	if err != nil || len(kids) != 3 {
		t.Fatalf("children %v: %v", kids, err)
	}
	args := []string{"case", "from-history", hist, "--definition", defFile, "--execution-arn", *x.ExecutionArn, "-o", out}
	for i, k := range kids {
		page, err := api.call(ctx, "us-east-1", "GetExecutionHistory", value.ObjectOf("executionArn", k))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("child%d.json", i))
		if err := os.WriteFile(f, []byte(value.String(page)), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--child", f)
	}
	code, stdout, stderr = runMain(t, "", args...)
	if code != 0 || !strings.Contains(stderr, "the case reproduces the recorded outcome on stepd") {
		t.Fatalf("with --child: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr = runMain(t, "", "test", out); code != 0 {
		t.Fatalf("with --child: stepd test: exit %d\n%s%s", code, stdout, stderr)
	}
}

// stepdOp calls Stepd.CaseFromHistory, stepd serve's own operation.
func stepdOp(t *testing.T, url string, in *value.Object) (int, any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(value.String(in)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "Stepd.CaseFromHistory")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.Parse(data)
	if err != nil {
		t.Fatalf("%d: %s", resp.StatusCode, data)
	}
	return resp.StatusCode, v
}

// copyDefinition copies the example's orders definition into dir.
func copyDefinition(t *testing.T, dir string) string {
	t.Helper()
	def, err := os.ReadFile(filepath.Join(replayDir, "orders.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "orders.asl.json")
	if err := os.WriteFile(p, def, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readCase(t *testing.T, path string) *value.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*value.Object)
}

func at(v any, path ...string) any {
	for _, k := range path {
		o, _ := v.(*value.Object)
		v, _ = o.Get(k)
	}
	return v
}

// TestCaseFromServe turns a real stepd serve execution (retries, a Map,
// a caught failure, a .sync:2 child) into a case, which reproduces it;
// the definition is then fixed, and the case passes with the new outcome
// against the same recorded responses.
func TestCaseFromServe(t *testing.T) {
	url := runOrder(t)
	dir := t.TempDir()
	def := copyDefinition(t, dir)
	out := filepath.Join(dir, "order-42.case.json")
	code, stdout, stderr := runMain(t, "", "case", "from-history", "--endpoint", url, "--execution-arn", orderExec, "--definition", def, "-o", out)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "the case reproduces the recorded outcome on stepd") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	c := readCase(t, out)
	if f := at(c, "definitionFile"); f != "orders.asl.json" {
		t.Errorf("definitionFile %v, want orders.asl.json (relative to the case)", f)
	}
	mocked := at(c, "mocks", "MockedResponses")
	for _, want := range []struct {
		path []string
		want string
	}{
		{[]string{"Reserve", "0-1", "Throw", "Error"}, `"Busy"`},
		{[]string{"Reserve", "2", "Return", "Payload"}, `{"reservation":"R-order-42"}`},
		{[]string{"PriceLine", "0", "Return"}, `{"sku":"tea","price":8}`},
		{[]string{"PriceLine", "1", "Return"}, `{"sku":"cup","price":7}`},
		{[]string{"Notify", "0", "Throw", "Error"}, `"MailServerDown"`},
		{[]string{"Ship", "0", "Return", "Output"}, `{"tracking":"TRK-order-42"}`},
		{[]string{"Ship", "0", "Return", "Status"}, `"SUCCEEDED"`},
	} {
		if got := value.String(at(mocked, want.path...)); got != want.want {
			t.Errorf("MockedResponses.%s = %s, want %s", strings.Join(want.path, "."), got, want.want)
		}
	}
	if st := at(c, "expected", "status"); st != "FAILED" {
		t.Errorf("expected.status %v", st)
	}
	code, stdout, stderr = runMain(t, "", "test", out)
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("stepd test of the generated case: exit %d\n%s%s", code, stdout, stderr)
	}

	// The fix: Confirm reads the field the shipping workflow returns.
	data, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, []byte(strings.Replace(string(data), "trackingNumber", "tracking", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runMain(t, "", "test", out)
	if code != exitFail || !strings.Contains(stdout, "want FAILED") {
		t.Fatalf("the fixed definition against the recorded failure: exit %d\n%s", code, stdout)
	}
	c.Set("expected", value.ObjectOf("status", "SUCCEEDED", "output", value.ObjectOf(
		"order", "order-42", "reservation", "R-order-42", "tracking", "TRK-order-42", "total", value.Int(15))))
	if err := os.WriteFile(out, []byte(value.Indent(c)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runMain(t, "", "test", out)
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("the fixed case: exit %d\n%s%s", code, stdout, stderr)
	}

	// The console's operation: the history and definition it read, in;
	// the case, out.
	api, err := newSFNClient(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	page, err := api.call(context.Background(), "us-east-1", "GetExecutionHistory", value.ObjectOf("executionArn", orderExec))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(replayDir, "orders.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	status, answer := stepdOp(t, url, value.ObjectOf("history", page, "definition", string(orig), "executionArn", orderExec))
	if status != 200 || at(answer, "reproduced") != true || at(answer, "case", "expected", "status") != "FAILED" || at(answer, "case", "name") != "order-42" {
		t.Errorf("Stepd.CaseFromHistory: %d %s", status, value.String(answer))
	}
	status, answer = stepdOp(t, url, value.ObjectOf("history", value.ObjectOf("events", []any{}), "definition", string(orig)))
	if status != 400 || at(answer, "__type") != "ValidationException" || !strings.Contains(value.String(at(answer, "message")), "has no events") {
		t.Errorf("Stepd.CaseFromHistory without events: %d %s", status, value.String(answer))
	}

	// Without --definition, the definition is fetched and embedded.
	out2 := filepath.Join(dir, "fetched.case.json")
	code, stdout, stderr = runMain(t, "", "case", "from-history", "--endpoint", url, "--execution-arn", orderExec, "-o", out2)
	if code != 0 || !strings.Contains(stderr, "the case reproduces") {
		t.Fatalf("fetched definition: exit %d\n%s%s", code, stdout, stderr)
	}
	if at(readCase(t, out2), "definition", "StartAt") != "Reserve" {
		t.Error("the fetched definition is not in the case")
	}
	if code, stdout, stderr = runMain(t, "", "test", out2); code != 0 {
		t.Fatalf("fetched definition: stepd test: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestCaseFromAWSCLIPages: the history as the AWS CLI prints it page by
// page (--max-items, --page-size, --starting-token), the pages appended to
// one file, in either order; and the refusal of a history without its
// data.
func TestCaseFromAWSCLIPages(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		skipUnlessCI(t, "the AWS CLI is not installed")
	}
	url := runOrder(t)
	dir := t.TempDir()
	def := copyDefinition(t, dir)
	cli := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"stepfunctions", "--endpoint-url", url, "--region", "us-east-1", "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("aws %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	// pages fetches the history 12 events at a time (5 per request) and
	// appends the pages to one file.
	pages := func(name string, extra ...string) (string, int) {
		t.Helper()
		var all []byte
		token, n := "", 0
		for {
			args := append([]string{"get-execution-history", "--execution-arn", orderExec, "--max-items", "12", "--page-size", "5"}, extra...)
			if token != "" {
				args = append(args, "--starting-token", token)
			}
			out := cli(args...)
			all = append(all, out...)
			n++
			var page struct {
				NextToken string
			}
			if err := json.Unmarshal(out, &page); err != nil {
				t.Fatal(err)
			}
			if token = page.NextToken; token == "" {
				break
			}
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, all, 0o644); err != nil {
			t.Fatal(err)
		}
		return p, n
	}
	var firstPages []byte
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"pages.json", nil}, {"reverse.json", []string{"--reverse-order"}}} {
		hist, n := pages(tc.name, tc.extra...)
		if firstPages == nil {
			firstPages, _ = os.ReadFile(hist)
		}
		if n < 3 {
			t.Fatalf("%s: %d pages: want several", tc.name, n)
		}
		out := filepath.Join(dir, tc.name+".case.json")
		code, stdout, stderr := runMain(t, "", "case", "from-history", hist, "--definition", def, "--execution-arn", orderExec, "-o", out)
		if code != 0 || !strings.Contains(stderr, "the case reproduces the recorded outcome on stepd") {
			t.Fatalf("%s (%d pages): exit %d\n%s%s", tc.name, n, code, stdout, stderr)
		}
		if code, stdout, stderr = runMain(t, "", "test", out); code != 0 {
			t.Fatalf("%s: stepd test: exit %d\n%s%s", tc.name, code, stdout, stderr)
		}
		if got := value.String(at(readCase(t, out), "mocks", "MockedResponses", "Reserve", "0-1", "Throw", "Error")); got != `"Busy"` {
			t.Errorf("%s: Reserve's retried failures: %s", tc.name, got)
		}
	}
	// A page left out is named.
	dec := json.NewDecoder(strings.NewReader(string(firstPages)))
	var gap []byte
	for i := 0; dec.More(); i++ {
		var page json.RawMessage
		if err := dec.Decode(&page); err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			gap = append(append(gap, page...), '\n')
		}
	}
	hist := filepath.Join(dir, "gap.json")
	if err := os.WriteFile(hist, gap, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runMain(t, "", "case", "from-history", hist, "--definition", def)
	if code != exitUsage || !strings.Contains(stderr, "events 13-24 are missing (a page left out?)") {
		t.Errorf("a page left out: exit %d\n%s", code, stderr)
	}
	// Without the execution's data, the case cannot be made.
	bare := filepath.Join(dir, "bare.json")
	if err := os.WriteFile(bare, cli("get-execution-history", "--execution-arn", orderExec, "--no-include-execution-data"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runMain(t, "", "case", "from-history", bare, "--definition", def)
	if code != exitUsage || !strings.Contains(stderr, "event 1 (ExecutionStarted) has no input") || !strings.Contains(stderr, "--include-execution-data") {
		t.Errorf("without data: exit %d\n%s", code, stderr)
	}
}

// TestCaseUsage: what is missing from a command line is named.
func TestCaseUsage(t *testing.T) {
	hist := filepath.Join("..", "..", "histcase", "testdata", "retry.history.json")
	def := filepath.Join("..", "..", "histcase", "testdata", "retry.asl.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"case"}, "usage: stepd case from-history"},
		{[]string{"case", "to-history"}, "usage: stepd case from-history"},
		{[]string{"case", "from-history"}, "give the history (a file, or - for standard input), or --endpoint and --execution-arn"},
		{[]string{"case", "from-history", hist}, "give the definition with --definition FILE"},
		{[]string{"case", "from-history", hist, hist, "--definition", def}, "one history at a time"},
		{[]string{"case", "from-history", hist, "--endpoint", "http://127.0.0.1:1"}, "give --execution-arn"},
		{[]string{"case", "from-history", hist, "--definition", "nope.json"}, "--definition: open nope.json"},
		{[]string{"case", "from-history", hist, "--definition", def, "--execution-arn", "arn:aws:states:us-east-1:1:stateMachine:x"}, "not the ARN of an execution"},
		{[]string{"case", "from-history", def, "--definition", def}, "must have events"},
		{[]string{"case", "from-history", "--endpoint", "ftp://x", "--execution-arn", "arn:aws:states:us-east-1:1:execution:a:b"}, "not an http:// or https:// URL"},
	} {
		code, _, stderr := runMain(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q in\n%s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
	// From standard input, to standard output.
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, string(data), "case", "from-history", "-", "--definition", def, "--embed-definition", "--name", "retried")
	if code != 0 || !strings.Contains(stderr, "the case reproduces") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	v, err := value.ParseString(stdout)
	if err != nil {
		t.Fatal(err)
	}
	if at(v, "name") != "retried" || at(v, "definition", "StartAt") != "Charge" || at(v, "expected", "status") != "SUCCEEDED" {
		t.Errorf("the case: %s", stdout)
	}
}
