package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// restartChildDef waits for a callback. The registry's command stands in
// for the queue the message goes to; the test reads the token from the
// TaskScheduled event's parameters, as a consumer of the queue would read
// the message.
const restartChildDef = `{"StartAt":"Ask","States":{
 "Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","TimeoutSeconds":3600,
   "Parameters":{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/asks","MessageBody":{"token.$":"$$.Task.Token","n.$":"$.n"}},
   "ResultPath":"$.answer","Next":"Done"},
 "Done":{"Type":"Pass","Parameters":{"n.$":"$.n","answer.$":"$.answer"},"End":true}}}`

// restartParentDef runs two children at once, one with .sync:2 (its
// Output as JSON) and one with .sync (its Output as JSON text); each
// child's input names its parent, as AWS's nested workflows do.
const restartParentDef = `{"StartAt":"Children","States":{"Children":{"Type":"Parallel","End":true,"Branches":[
 {"StartAt":"Sync2","States":{"Sync2":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
   "Parameters":{"StateMachineArn":"CHILD","Input":{"n":2,"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}},"OutputPath":"$.Output","End":true}}},
 {"StartAt":"Sync","States":{"Sync":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync",
   "Parameters":{"StateMachineArn":"CHILD","Input":{"n":1,"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}},"OutputPath":"$.Output","End":true}}}]}}}`

// callbackChild is a child execution waiting for its callback.
type callbackChild struct {
	arn, parent, token string
	n                  int
}

// TestRestartWithOutstandingCallbacksAndSyncChildren stops stepd serve
// (gracefully with SIGTERM, or with SIGKILL) while two parents each wait on
// a .sync:2 and a .sync child and every child waits on a
// .waitForTaskToken callback, and restarts it on the same data folder.
// Then the tokens taken before the restart complete the children of one
// parent, which finishes with both children's outputs; a token used twice
// is refused with TaskTimedOut; and stopping the other parent aborts its
// children.
func TestRestartWithOutstandingCallbacksAndSyncChildren(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test skipped in -short mode")
	}
	bin := stepdBinary(t)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGTERM", syscall.SIGTERM}, {"SIGKILL", syscall.SIGKILL}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRestartWithOutstandingChildren(t, bin, tc.sig)
		})
	}
}

func testRestartWithOutstandingChildren(t *testing.T, bin string, sig syscall.Signal) {
	dir := t.TempDir()
	registry := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(registry, []byte(`{"Resources":{"arn:aws:states:::sqs:*":{"Command":["sh","-c","cat >/dev/null; echo '{\"MessageId\":\"m-1\"}'"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	proc := startServe(t, bin, addr, data, "--config", registry)
	t.Cleanup(func() { _ = proc.Process.Kill(); _, _ = proc.Process.Wait() })
	c := restartingClient(addr)
	ctx := context.Background()

	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("child"), Definition: aws.String(restartChildDef),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("parent"),
		Definition: aws.String(strings.ReplaceAll(restartParentDef, "CHILD", aws.ToString(child.StateMachineArn))),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, name := range []string{"answered", "stopped"} {
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: parent.StateMachineArn, Name: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		parents = append(parents, aws.ToString(ex.ExecutionArn))
	}
	answered, stopped := parents[0], parents[1]
	children := waitForCallbacks(t, c, aws.ToString(child.StateMachineArn), 4)

	_ = proc.Process.Signal(sig)
	if err := proc.Wait(); sig == syscall.SIGTERM && err != nil {
		t.Fatalf("stepd serve did not stop cleanly on SIGTERM: %v", err)
	}
	proc = startServe(t, bin, addr, data, "--config", registry)

	for _, arn := range append(append([]string{}, parents...), childARNs(children)...) {
		if d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil || d.Status != types.ExecutionStatusRunning {
			t.Fatalf("%s after the restart: %v %v", arn, d, err)
		}
	}

	// The tokens taken before the restart complete the children.
	for _, ch := range children {
		if ch.parent != answered {
			continue
		}
		out := fmt.Sprintf(`{"ok":%d}`, ch.n)
		if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(ch.token), Output: aws.String(out)}); err != nil {
			t.Fatalf("SendTaskSuccess for child %d: %v", ch.n, err)
		}
	}
	d := waitFinished(t, c, answered)
	want := `[{"n":2,"answer":{"ok":2}},"{\"n\":1,\"answer\":{\"ok\":1}}"]`
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
		t.Errorf("parent: %s %s %s %s, want output %s", d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), want)
	}
	for _, ch := range children {
		if ch.parent != answered {
			continue
		}
		d := waitFinished(t, c, ch.arn)
		want := fmt.Sprintf(`{"n":%d,"answer":{"ok":%d}}`, ch.n, ch.n)
		if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
			t.Errorf("child %d: %s %s, want output %s", ch.n, d.Status, aws.ToString(d.Output), want)
		}
		// A token used twice: its task has closed.
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(ch.token), Output: aws.String(`{}`)})
		if code := apiErrorCode(err); code != "TaskTimedOut" {
			t.Errorf("child %d: SendTaskSuccess with a used token: %v, want TaskTimedOut", ch.n, err)
		}
		_, err = c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(ch.token), Error: aws.String("Late")})
		if code := apiErrorCode(err); code != "TaskTimedOut" {
			t.Errorf("child %d: SendTaskFailure with a used token: %v, want TaskTimedOut", ch.n, err)
		}
	}

	// Stopping the other parent after the restart stops its .sync children.
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(stopped)}); err != nil {
		t.Fatal(err)
	}
	if d := waitFinished(t, c, stopped); d.Status != types.ExecutionStatusAborted {
		t.Errorf("stopped parent: %s", d.Status)
	}
	for _, ch := range children {
		if ch.parent != stopped {
			continue
		}
		if d := waitFinished(t, c, ch.arn); d.Status != types.ExecutionStatusAborted {
			t.Errorf("child %d of the stopped parent: %s, want ABORTED", ch.n, d.Status)
		}
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(ch.token), Output: aws.String(`{}`)})
		if code := apiErrorCode(err); code != "TaskTimedOut" {
			t.Errorf("child %d of the stopped parent: SendTaskSuccess after the abort: %v, want TaskTimedOut", ch.n, err)
		}
	}

	// The restart started no second child, and no history lost or repeated
	// an event.
	list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: child.StateMachineArn})
	if err != nil || len(list.Executions) != len(children) {
		t.Errorf("ListExecutions of the child: %d executions, %v; want %d", len(list.Executions), err, len(children))
	}
	for _, arn := range append(parents, childARNs(children)...) {
		checkHistory(t, c, arn)
	}
}

// waitForCallbacks waits until n executions of the child state machine
// have submitted their callback task, and returns them with their tokens
// (from the TaskScheduled event) and parents.
func waitForCallbacks(t *testing.T, c *sfn.Client, childSM string, n int) []callbackChild {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var found []callbackChild
		list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(childSM)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Executions {
			if ch, ok := submittedCallback(t, c, aws.ToString(e.ExecutionArn)); ok {
				found = append(found, ch)
			}
		}
		if len(found) == n {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d children submitted their callback task", len(found), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// submittedCallback reads a child's token, n and parent once its history
// has the TaskSubmitted event of its callback task.
func submittedCallback(t *testing.T, c *sfn.Client, arn string) (callbackChild, bool) {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	ch := callbackChild{arn: arn}
	submitted := false
	for _, e := range h.Events {
		switch e.Type {
		case types.HistoryEventTypeExecutionStarted:
			var in struct {
				Parent string `json:"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(e.ExecutionStartedEventDetails.Input)), &in); err != nil {
				t.Fatalf("%s: input: %v", arn, err)
			}
			ch.parent = in.Parent
		case types.HistoryEventTypeTaskScheduled:
			var p struct {
				MessageBody struct {
					Token string `json:"token"`
					N     int    `json:"n"`
				}
			}
			if err := json.Unmarshal([]byte(aws.ToString(e.TaskScheduledEventDetails.Parameters)), &p); err != nil {
				t.Fatalf("%s: TaskScheduled parameters: %v", arn, err)
			}
			ch.token, ch.n = p.MessageBody.Token, p.MessageBody.N
		case types.HistoryEventTypeTaskSubmitted:
			submitted = true
		}
	}
	return ch, submitted && ch.token != "" && ch.parent != ""
}

func childARNs(children []callbackChild) []string {
	var arns []string
	for _, ch := range children {
		arns = append(arns, ch.arn)
	}
	return arns
}

// waitFinished polls an execution until it is no longer RUNNING.
func waitFinished(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err == nil && d.Status != types.ExecutionStatusRunning {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not finish: %v %v", arn, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
