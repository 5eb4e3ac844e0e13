package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func TestActivities(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("worker-queue")})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(act.ActivityArn)
	if arn != "arn:aws:states:us-east-1:123456789012:activity:worker-queue" {
		t.Fatalf("activity ARN %s", arn)
	}
	if d, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: act.ActivityArn}); err != nil || aws.ToString(d.Name) != "worker-queue" {
		t.Fatalf("DescribeActivity: %+v %v", d, err)
	}
	if l, err := c.ListActivities(ctx, &sfn.ListActivitiesInput{}); err != nil || len(l.Activities) != 1 {
		t.Fatalf("ListActivities: %+v %v", l, err)
	}
	def := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + arn + `","HeartbeatSeconds":30,"TimeoutSeconds":60,"End":true}}}`
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("act"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"job":7}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w1")})
	if err != nil || aws.ToString(got.Input) != `{"job":7}` || aws.ToString(got.TaskToken) == "" {
		t.Fatalf("GetActivityTask: %+v %v", got, err)
	}
	if _, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: got.TaskToken}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: got.TaskToken, Output: aws.String(`{"done":true}`)}); err != nil {
		t.Fatal(err)
	}
	d := waitDone(t, c, aws.ToString(ex.ExecutionArn))
	if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != `{"done":true}` {
		t.Fatalf("execution: %+v", d)
	}
	// The token was used: using it again is refused as on AWS, whose
	// TaskTimedOut also means "the task has closed".
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: got.TaskToken, Output: aws.String(`{}`)}); apiCode(err) != "TaskTimedOut" {
		t.Errorf("token used twice: %v", err)
	}
	hist, _ := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: ex.ExecutionArn})
	var names []string
	for _, e := range hist.Events {
		names = append(names, string(e.Type))
	}
	if got := strings.Join(names, ","); got != "ExecutionStarted,TaskStateEntered,ActivityScheduled,ActivityStarted,ActivitySucceeded,TaskStateExited,ExecutionSucceeded" {
		t.Errorf("history %s", got)
	}
	if w := hist.Events[3].ActivityStartedEventDetails; w == nil || aws.ToString(w.WorkerName) != "w1" {
		t.Errorf("ActivityStarted details %+v", hist.Events[3])
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("not-a-token"), Output: aws.String(`{}`)}); apiCode(err) != "InvalidToken" {
		t.Errorf("malformed token: %v", err)
	}
	if _, err := c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: act.ActivityArn}); apiCode(err) != "ActivityDoesNotExist" {
		t.Errorf("deleted activity: %v", err)
	}
}

func TestCallbacks(t *testing.T) {
	t.Parallel()
	tokens := make(chan string, 4)
	// The integration (here a stand-in for SQS) receives the token in its
	// parameters and answers at once; the task waits for the callback.
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		o := req.Input.(*value.Object)
		tk, _ := o.Get("token")
		tokens <- tk.(string)
		return task.Result{Output: value.ObjectOf("MessageId", "m-1")}
	})
	c, _ := newClient(t, memory.New(), inv)
	ctx := context.Background()
	def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters":{"QueueUrl":"q","token.$":"$$.Task.Token"},"HeartbeatSeconds":1,"End":true,
		"Catch":[{"ErrorEquals":["Rejected"],"Next":"No"}]},"No":{"Type":"Pass","Result":"rejected","End":true}}}`
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("cb"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	start := func() string {
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(ex.ExecutionArn)
	}
	// Success.
	ex1 := start()
	tk := <-tokens
	waitEvent(t, c, ex1, "TaskSubmitted") // the callback comes after the submission
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tk), Output: aws.String(`"approved"`)}); err != nil {
		t.Fatal(err)
	}
	if d := waitDone(t, c, ex1); aws.ToString(d.Output) != `"approved"` {
		t.Fatalf("success: %+v", d)
	}
	hist, _ := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(ex1)})
	var names []string
	for _, e := range hist.Events {
		names = append(names, string(e.Type))
	}
	if got := strings.Join(names, ","); got != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSubmitted,TaskSucceeded,TaskStateExited,ExecutionSucceeded" {
		t.Errorf("history %s", got)
	}
	// Failure, caught.
	ex2 := start()
	tk = <-tokens
	if _, err := c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(tk), Error: aws.String("Rejected"), Cause: aws.String("no")}); err != nil {
		t.Fatal(err)
	}
	if d := waitDone(t, c, ex2); aws.ToString(d.Output) != `"rejected"` {
		t.Fatalf("failure: %+v", d)
	}
	// Heartbeat timeout; the token then answers TaskTimedOut, also once
	// the execution has ended (AWS: the token's task has closed).
	ex3 := start()
	late := <-tokens
	if d := waitDone(t, c, ex3); d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "States.Timeout" {
		t.Fatalf("heartbeat timeout: %+v", d)
	}
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(late), Output: aws.String(`{}`)}); apiCode(err) != "TaskTimedOut" {
		t.Errorf("token of a timed-out task after the execution ended: %v", err)
	}
}

func TestExpiredToken(t *testing.T) {
	t.Parallel()
	tokens := make(chan string, 1)
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		tokens <- req.TaskToken
		return task.Result{Output: value.NewObject(0)}
	})
	c, _ := newClient(t, memory.New(), inv)
	ctx := context.Background()
	def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::sns:publish.waitForTaskToken","TimeoutSeconds":1,
		"Parameters":{"t.$":"$$.Task.Token"},"Catch":[{"ErrorEquals":["States.Timeout"],"Next":"Linger"}],"End":true},
		"Linger":{"Type":"Wait","Seconds":30,"End":true}}}`
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("expire"), RoleArn: aws.String(role), Definition: aws.String(def)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	tk := <-tokens
	// The task times out; the execution waits in Linger.
	waitEvent(t, c, aws.ToString(ex.ExecutionArn), "WaitStateEntered")
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tk), Output: aws.String(`{}`)}); apiCode(err) != "TaskTimedOut" {
		t.Errorf("expired token: %v", err)
	}
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: ex.ExecutionArn}); err != nil {
		t.Fatal(err)
	}
}

// waitEvent polls the execution's history until it has an event of type
// typ.
func waitEvent(t *testing.T, c *sfn.Client, arn, typ string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h.Events {
			if string(e.Type) == typ {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event in the history of %s", typ, arn)
		}
	}
}
