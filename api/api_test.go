package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/internal/sdkhttp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
)

const role = "arn:aws:iam::123456789012:role/stepd-test"

// newClient starts stepd on 127.0.0.1 and returns an AWS SDK client for
// it. Every call, StartSyncExecution included, goes to that address: the
// SDK's "sync-" host prefix is disabled by the BaseEndpoint option.
// newServer serves the API of a new service on st over HTTP on 127.0.0.1
// and returns the service and the server's URL.
func newServer(t *testing.T, st service.Store, inv task.Invoker) (*service.Service, string) {
	t.Helper()
	svc := service.New(service.Config{Store: st, Invoker: inv, MockResults: awsmodel.CheckResult})
	srv := httptest.NewServer(api.New(svc, nil))
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
	})
	return svc, srv.URL
}

func newClient(t *testing.T, st service.Store, inv task.Invoker) (*sfn.Client, *service.Service) {
	t.Helper()
	svc, url := newServer(t, st, inv)
	client := sfn.New(sfn.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   sdkhttp.Wrap(&http.Client{Timeout: 30 * time.Second}),
	}, func(o *sfn.Options) {
		o.EndpointOptions.DisableHTTPS = true
		o.APIOptions = append(o.APIOptions, DisableHostPrefix)
	})
	return client, svc
}

// DisableHostPrefix keeps StartSyncExecution and TestState on stepd's
// address: the SDK would otherwise send them to "sync-<host>". This is the
// option docs/cli.md documents for Go programs.
func DisableHostPrefix(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("stepdDisableHostPrefix",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
		}), middleware.Before)
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func waitDone(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != types.ExecutionStatusRunning {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("execution %s did not finish", arn)
	return nil
}

const waitDef = `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":0,"Next":"P"},"P":{"Type":"Pass","Parameters":{"sum.$":"States.MathAdd($.a, 1)"},"End":true}}}`

func TestStateMachinesAndExecutions(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()

	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("adder"), Definition: aws.String(waitDef), RoleArn: aws.String(role),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}})
	if err != nil {
		t.Fatal(err)
	}
	smARN := aws.ToString(created.StateMachineArn)
	if smARN != "arn:aws:states:us-east-1:123456789012:stateMachine:adder" || created.CreationDate == nil {
		t.Fatalf("CreateStateMachine: %+v", created)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: created.StateMachineArn})
	if err != nil || aws.ToString(d.Definition) != waitDef || d.Type != types.StateMachineTypeStandard || d.Status != types.StateMachineStatusActive {
		t.Fatalf("DescribeStateMachine: %+v %v", d, err)
	}
	list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil || len(list.StateMachines) != 1 || aws.ToString(list.StateMachines[0].Name) != "adder" {
		t.Fatalf("ListStateMachines: %+v %v", list, err)
	}
	tags, err := c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: created.StateMachineArn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Value) != "core" {
		t.Fatalf("ListTagsForResource: %+v %v", tags, err)
	}
	if _, err := c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: created.StateMachineArn, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: created.StateMachineArn, Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}); err != nil {
		t.Fatal(err)
	}

	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Name: aws.String("run1"), Input: aws.String(`{"a":41}`)})
	if err != nil {
		t.Fatal(err)
	}
	done := waitDone(t, c, aws.ToString(started.ExecutionArn))
	if done.Status != types.ExecutionStatusSucceeded || aws.ToString(done.Output) != `{"sum":42}` || done.StopDate == nil {
		t.Fatalf("DescribeExecution: %+v", done)
	}
	// Starting the same name again with the same input after it ended is
	// an error; with other input too.
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Name: aws.String("run1"), Input: aws.String(`{"a":1}`)}); apiCode(err) != "ExecutionAlreadyExists" {
		t.Errorf("duplicate name: %v", err)
	}
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn})
	if err != nil {
		t.Fatal(err)
	}
	var typesSeen []string
	for _, e := range hist.Events {
		typesSeen = append(typesSeen, string(e.Type))
	}
	if got := strings.Join(typesSeen, ","); got != "ExecutionStarted,WaitStateEntered,WaitStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
		t.Errorf("history: %s", got)
	}
	if aws.ToString(hist.Events[4].StateExitedEventDetails.Output) != `{"sum":42}` || hist.Events[2].PreviousEventId != 2 {
		t.Errorf("history details: %+v", hist.Events[4])
	}
	// Paging backwards, without execution data.
	rev, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn, ReverseOrder: true, MaxResults: 2, IncludeExecutionData: aws.Bool(false)})
	if err != nil || len(rev.Events) != 2 || rev.Events[0].Type != types.HistoryEventTypeExecutionSucceeded || rev.NextToken == nil {
		t.Fatalf("reverse history: %+v %v", rev, err)
	}
	if rev.Events[0].ExecutionSucceededEventDetails.Output != nil {
		t.Errorf("includeExecutionData=false still returned output")
	}
	rev2, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn, ReverseOrder: true, MaxResults: 2, NextToken: rev.NextToken})
	if err != nil || len(rev2.Events) != 2 || rev2.Events[0].Id != 4 {
		t.Fatalf("second page: %+v %v", rev2, err)
	}
	execs, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: created.StateMachineArn, StatusFilter: types.ExecutionStatusSucceeded})
	if err != nil || len(execs.Executions) != 1 {
		t.Fatalf("ListExecutions: %+v %v", execs, err)
	}
	forExec, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: started.ExecutionArn})
	if err != nil || aws.ToString(forExec.Definition) != waitDef {
		t.Fatalf("DescribeStateMachineForExecution: %+v %v", forExec, err)
	}
	versions, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: created.StateMachineArn})
	if err != nil || len(versions.StateMachineVersions) != 0 {
		t.Fatalf("ListStateMachineVersions: %+v %v", versions, err)
	}
	upd, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: created.StateMachineArn, Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	if err != nil || upd.UpdateDate == nil {
		t.Fatalf("UpdateStateMachine: %+v %v", upd, err)
	}
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: created.StateMachineArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: created.StateMachineArn}); apiCode(err) != "StateMachineDoesNotExist" {
		t.Errorf("after delete: %v", err)
	}
}

func TestStopExecution(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("sleeper"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: ex.ExecutionArn, Error: aws.String("Manual"), Cause: aws.String("test")}); err != nil {
		t.Fatal(err)
	}
	d := waitDone(t, c, aws.ToString(ex.ExecutionArn))
	if d.Status != types.ExecutionStatusAborted || aws.ToString(d.Error) != "Manual" {
		t.Fatalf("stopped: %+v", d)
	}
}

func TestStartSyncExecution(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("quick"), RoleArn: aws.String(role), Type: types.StateMachineTypeExpress,
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"hello.$":"$.who"},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"who":"world"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded || aws.ToString(out.Output) != `{"hello":"world"}` || !strings.Contains(aws.ToString(out.ExecutionArn), ":express:quick:") {
		t.Fatalf("StartSyncExecution: %+v", out)
	}
}

// TestStartSyncExecutionFailed: a failed synchronous execution's answer
// has error and cause, no output, and outputDetails included, as AWS
// records it (test_express_sync's BASE_RAISE_FAILURE).
func TestStartSyncExecutionFailed(t *testing.T) {
	t.Parallel()
	_, url := newServer(t, memory.New(), nil)
	call := func(op, body string) map[string]any {
		status, code, text := wire(t, url, op, body)
		var out map[string]any
		if err := json.Unmarshal([]byte(text), &out); err != nil || status != 200 {
			t.Fatalf("%s: %d %s %s", op, status, code, text)
		}
		return out
	}
	call("CreateStateMachine", `{"name":"raise","type":"EXPRESS","roleArn":"`+role+`",
		"definition":"{\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":\"Fail\",\"Error\":\"SomeFailure\",\"Cause\":\"This state machines raises a 'SomeFailure' failure.\"}}}"}`)
	out := call("StartSyncExecution", `{"stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:raise"}`)
	if got, want := strings.Join(slices.Sorted(maps.Keys(out)), ","), "billingDetails,cause,error,executionArn,input,inputDetails,name,outputDetails,startDate,stateMachineArn,status,stopDate"; got != want {
		t.Errorf("StartSyncExecution FAILED answers %s, want %s", got, want)
	}
	if d, _ := out["outputDetails"].(map[string]any); d["included"] != true || out["status"] != "FAILED" || out["error"] != "SomeFailure" {
		t.Errorf("StartSyncExecution FAILED: %v", out)
	}
}

// TestExpressContextRedriveCount: as AWS records test_query_runtime_memory
// (test_express_sync's and test_express_async's snapshots, the same day),
// the Context object of an Express execution started by
// StartSyncExecution has no $$.Execution.RedriveCount, and that of one
// started by StartExecution has RedriveCount 0.
func TestExpressContextRedriveCount(t *testing.T) {
	t.Parallel()
	c, svc := newClient(t, memory.New(), nil)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("ctx"), RoleArn: aws.String(role), Type: types.StateMachineTypeExpress,
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"execution.$":"$$.Execution"},"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	keys := func(output string) []string {
		var out struct{ Execution map[string]any }
		if err := json.Unmarshal([]byte(output), &out); err != nil {
			t.Fatalf("%v: %s", err, output)
		}
		return slices.Sorted(maps.Keys(out.Execution))
	}
	syncOut, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"m":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(keys(aws.ToString(syncOut.Output)), ","), "Id,Input,Name,RoleArn,StartTime"; got != want {
		t.Errorf("StartSyncExecution: $$.Execution has %s, want %s", got, want)
	}
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"m":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	done, err := svc.Wait(ctx, aws.ToString(start.ExecutionArn))
	if err != nil {
		t.Fatal(err)
	}
	output := done.Output
	if got, want := strings.Join(keys(output), ","), "Id,Input,Name,RedriveCount,RoleArn,StartTime"; got != want {
		t.Errorf("StartExecution: $$.Execution has %s, want %s", got, want)
	}
	if !strings.Contains(output, `"RedriveCount":0`) {
		t.Errorf("StartExecution: $$.Execution.RedriveCount is not 0: %s", output)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("e"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"x":"` + strings.Repeat("a", 256*1024) + `"}`
	_, _ = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("dup"), Input: aws.String(`{"a":1}`)})
	missing := "arn:aws:states:us-east-1:123456789012:stateMachine:missing"
	tests := []struct {
		name string
		call func() error
		code string
	}{
		{"invalid definition", func() error {
			_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), RoleArn: aws.String(role), Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`)})
			return err
		}, "InvalidDefinition"},
		{"invalid name", func() error {
			_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad name!"), RoleArn: aws.String(role), Definition: aws.String(waitDef)})
			return err
		}, "InvalidName"},
		{"unknown state machine", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(missing)})
			return err
		}, "StateMachineDoesNotExist"},
		{"malformed ARN", func() error {
			_, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String("not-an-arn")})
			return err
		}, "InvalidArn"},
		{"unknown execution", func() error {
			_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:e:nope")})
			return err
		}, "ExecutionDoesNotExist"},
		{"invalid JSON input", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"a":`)})
			return err
		}, "InvalidExecutionInput"},
		{"input over 256 KiB", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(big)})
			return err
		}, "InvalidExecutionInput"},
		{"duplicate name, other input", func() error {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("dup"), Input: aws.String(`{"a":2}`)})
			return err
		}, "ExecutionAlreadyExists"},
		{"bad pagination token", func() error {
			_, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: aws.String("garbage")})
			return err
		}, "InvalidToken"},
		{"bad history token", func() error {
			_, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:e:dup"), NextToken: aws.String("x")})
			return err
		}, "InvalidToken"},
		{"sync on standard", func() error {
			_, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: sm.StateMachineArn})
			return err
		}, "StateMachineTypeNotSupported"},
	}
	for _, tt := range tests {
		if got := apiCode(tt.call()); got != tt.code {
			t.Errorf("%s: error code %q, want %q", tt.name, got, tt.code)
		}
	}
	// The same name and input while running returns the same execution.
	again, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("dup"), Input: aws.String(`{"a":1}`)})
	if err != nil || !strings.HasSuffix(aws.ToString(again.ExecutionArn), ":dup") {
		t.Errorf("idempotent start: %v", err)
	}
}

func TestValidateStateMachineDefinition(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	out, err := c.ValidateStateMachineDefinition(context.Background(), &sfn.ValidateStateMachineDefinitionInput{
		Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result != types.ValidateStateMachineDefinitionResultCodeFail || len(out.Diagnostics) == 0 ||
		aws.ToString(out.Diagnostics[0].Code) != "MISSING_TRANSITION_TARGET" || aws.ToString(out.Diagnostics[0].Location) != "/States/A/Next" {
		t.Fatalf("%+v", out)
	}
}

// TestResumeAfterRestart stops a service while an execution waits, starts
// a new one on the same store, and checks that the execution finishes with
// a contiguous history.
func TestResumeAfterRestart(t *testing.T) {
	t.Parallel()
	st := memory.New()
	ctx := context.Background()
	svc1 := service.New(service.Config{Store: st})
	if _, _, err := svc1.CreateStateMachine(ctx, service.StateMachineInput{Name: "slow", RoleARN: role,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"Next":"P"},"P":{"Type":"Pass","End":true}}}`}); err != nil {
		t.Fatal(err)
	}
	e, err := svc1.StartExecution(ctx, service.StartInput{StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:slow", Input: `{"k":1}`})
	if err != nil {
		t.Fatal(err)
	}
	svc1.Close() // the process "stops" while the execution waits

	svc2 := service.New(service.Config{Store: st})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v", n, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := svc2.DescribeExecution(ctx, e.ARN)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == "SUCCEEDED" {
			if d.Output != `{"k":1}` {
				t.Fatalf("output %s", d.Output)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not resumed: %+v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	evs, err := st.Events(ctx, e.ARN, 0, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.ID != int64(i+1) {
			t.Fatalf("event ids not contiguous: %d at %d", ev.ID, i)
		}
	}
	if len(evs) != 6 {
		t.Errorf("%d events, want 6", len(evs))
	}
}

// TestDescribeMapRunRecorded: a Distributed Map over two items with no
// ResultWriter, as AWS records test_list_map_runs_and_describe_map_run
// (test_sfn_api_map_run): the Map Run's counts have both children
// succeeded and their results written.
func TestDescribeMapRunRecorded(t *testing.T) {
	t.Parallel()
	c, svc := newClient(t, memory.New(), nil)
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("runs"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"MapState","States":{"MapState":{"Type":"Map","MaxConcurrency":1,
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"PassItem","States":{"PassItem":{"Type":"Pass","End":true}}},
			"End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn,
		Input: aws.String(`[{"Col1":"Value1","Col2":"Value2","Col3":"Value3"},{"Col1":"Value4","Col2":"Value5","Col3":"Value6"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := svc.Wait(ctx, aws.ToString(start.ExecutionArn)); err != nil || e.Status != "SUCCEEDED" {
		t.Fatalf("execution: %+v %v", e, err)
	}
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	if err != nil || len(runs.MapRuns) != 1 {
		t.Fatalf("ListMapRuns: %+v %v", runs, err)
	}
	r, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: runs.MapRuns[0].MapRunArn})
	if err != nil {
		t.Fatal(err)
	}
	want := types.MapRunExecutionCounts{Succeeded: 2, Total: 2, ResultsWritten: 2}
	if got := *r.ExecutionCounts; got.Succeeded != want.Succeeded || got.Total != 2 || got.ResultsWritten != 2 || got.Failed+got.Aborted+got.TimedOut+got.Pending+got.Running != 0 {
		t.Errorf("executionCounts %+v, want %+v", got, want)
	}
	if got := *r.ItemCounts; got.Succeeded != 2 || got.Total != 2 || got.ResultsWritten != 2 || got.Failed+got.Aborted+got.TimedOut+got.Pending+got.Running != 0 {
		t.Errorf("itemCounts %+v, want 2 succeeded, total and written", got)
	}
	if r.Status != types.MapRunStatusSucceeded || r.MaxConcurrency != 1 || r.ToleratedFailureCount != 0 || r.ToleratedFailurePercentage != 0 {
		t.Errorf("DescribeMapRun: %s maxConcurrency %d tolerated %d %v", r.Status, r.MaxConcurrency, r.ToleratedFailureCount, r.ToleratedFailurePercentage)
	}
}
