package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// crashDef mixes what a restart must preserve: a durable Wait, a task
// served by an activity worker, a .waitForTaskToken callback (a nested
// execution hands the token to a worker through the activity, and the worker
// answers with SendTaskSuccess) and a Map.
const crashDef = `{"StartAt":"Wait","States":{
 "Wait":{"Type":"Wait","SecondsPath":"$.wait","Next":"Work"},
 "Work":{"Type":"Task","Resource":"ACTIVITY","TimeoutSeconds":120,"ResultPath":"$.work","Next":"Ask"},
 "Ask":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.waitForTaskToken","TimeoutSeconds":120,
   "Parameters":{"StateMachineArn":"CHILD","Input":{"token.$":"$$.Task.Token","id.$":"$.id"}},"ResultPath":"$.answer","Next":"Fan"},
 "Fan":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"ResultPath":"$.fan",
   "ItemProcessor":{"StartAt":"Double","States":{"Double":{"Type":"Pass","Parameters":{"v.$":"States.MathAdd($, $)"},"End":true}}},"Next":"Done"},
 "Done":{"Type":"Pass","Parameters":{"id.$":"$.id","work.$":"$.work","answer.$":"$.answer","fan.$":"$.fan"},"End":true}}}`

// crashChildDef relays the parent's task token to an activity worker.
const crashChildDef = `{"StartAt":"Relay","States":{"Relay":{"Type":"Task","Resource":"ACTIVITY","TimeoutSeconds":120,"End":true}}}`

// TestCrashRecovery starts stepd serve as a real process, starts 50
// Standard executions (200 with STEPD_LONG=1), kills the process with
// SIGKILL at random moments five times (restarting it each time) while
// activity workers keep working, and checks that every execution ends with
// the right output and a contiguous, duplicate-free history. It runs on
// each durable store: SQLite, and PostgreSQL (--store).
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	bin := stepdBinary(t)
	t.Run("SQLite", func(t *testing.T) { testCrashRecovery(t, bin) })
	t.Run("PostgreSQL", func(t *testing.T) { testCrashRecovery(t, bin, "--store", pgtest.DSN(t)) })
}

func testCrashRecovery(t *testing.T, bin string, storeFlags ...string) {
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	proc := startServe(t, bin, addr, data, storeFlags...)
	defer func() { _ = proc.Process.Kill(); _, _ = proc.Process.Wait() }()
	c := restartingClient(addr)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("crash-work")})
	if err != nil {
		t.Fatal(err)
	}
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("crash-child"),
		Definition: aws.String(strings.Replace(crashChildDef, "ACTIVITY", aws.ToString(act.ActivityArn), 1)),
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	def := strings.Replace(crashDef, "ACTIVITY", aws.ToString(act.ActivityArn), 1)
	def = strings.Replace(def, "CHILD", aws.ToString(child.StateMachineArn), 1)
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("crash"), Definition: aws.String(def),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	n := sized(50, 200)
	var arns []string
	for i := 0; i < n; i++ {
		in := fmt.Sprintf(`{"id":%d,"wait":%d,"items":[%d,%d]}`, i, i%3, i, i+1)
		ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(fmt.Sprintf("e%d", i)), Input: aws.String(in)})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		arns = append(arns, aws.ToString(ex.ExecutionArn))
	}

	// Workers: take activity tasks and answer them; errors while the
	// server is down are expected and retried.
	stopWorkers := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				select {
				case <-stopWorkers:
					return
				default:
				}
				wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				task, err := c.GetActivityTask(wctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String(fmt.Sprintf("w%d", w))})
				cancel()
				if err != nil || task.TaskToken == nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				var in struct {
					ID    int
					Token string
				}
				_ = json.Unmarshal([]byte(aws.ToString(task.Input)), &in)
				out := fmt.Sprintf(`{"by":"worker","id":%d}`, in.ID)
				if in.Token != "" {
					// A child relaying its parent's token: answer the parent
					// (a re-dispatched child may answer a second time).
					out = `{"relayed":true}`
					answer := fmt.Sprintf(`{"by":"callback","id":%d}`, in.ID)
					for attempt := 0; attempt < 50; attempt++ {
						_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(in.Token), Output: aws.String(answer)})
						if err == nil || taskClosed(err) {
							break
						}
						time.Sleep(100 * time.Millisecond)
					}
				}
				for attempt := 0; attempt < 50; attempt++ {
					_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(out)})
					if err == nil || taskClosed(err) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}(w)
	}

	for kill := 0; kill < 5; kill++ {
		time.Sleep(time.Duration(200+rand.IntN(800)) * time.Millisecond)
		_ = proc.Process.Signal(syscall.SIGKILL)
		_, _ = proc.Process.Wait()
		proc = startServe(t, bin, addr, data, storeFlags...)
	}

	deadline := time.Now().Add(90 * time.Second)
	for i, arn := range arns {
		for {
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			if err == nil && d.Status != types.ExecutionStatusRunning {
				want := fmt.Sprintf(`{"id":%d,"work":{"by":"worker","id":%d},"answer":{"by":"callback","id":%d},"fan":[{"v":%d},{"v":%d}]}`, i, i, i, 2*i, 2*(i+1))
				if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
					t.Errorf("execution %d: %s %s %s %s, want output %s", i, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %d did not finish: %v %v", i, d, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	close(stopWorkers)
	wg.Wait()
	for _, arn := range arns {
		checkHistory(t, c, arn)
	}
	// The children too (a re-dispatched start may have made a second one).
	children := 0
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: child.StateMachineArn})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Executions {
			checkHistory(t, c, aws.ToString(e.ExecutionArn))
			children++
		}
	}
	if children < n {
		t.Errorf("%d child executions, want at least %d", children, n)
	}
	t.Logf("%d executions and %d child executions survived 5 kills", n, children)
}

func checkHistory(t *testing.T, c *sfn.Client, arn string) {
	t.Helper()
	var token *string
	next := int64(1)
	// A task handed out again after a restart (dispatch is at least once)
	// must not record a second start: for each Scheduled event, at most one
	// ActivityStarted and one TaskSubmitted. An event belongs to the
	// Scheduled event its previousEventId chain leads to (branches of a
	// Parallel interleave their tasks' events).
	scheduled := map[int64]int64{} // event id -> its Scheduled event's id
	type start struct {
		scheduled int64
		typ       string
	}
	started := map[start]bool{}
	for {
		h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), NextToken: token, MaxResults: 1000})
		if err != nil {
			t.Fatalf("%s: %v", arn, err)
		}
		for _, e := range h.Events {
			if e.Id != next {
				t.Fatalf("%s: event id %d where %d was expected (lost or duplicated events)", arn, e.Id, next)
			}
			next++
			switch typ := string(e.Type); typ {
			case "ActivityScheduled", "TaskScheduled":
				scheduled[e.Id] = e.Id
			case "ActivityStarted", "TaskStarted", "TaskSubmitted":
				root, ok := scheduled[e.PreviousEventId]
				if !ok {
					continue
				}
				scheduled[e.Id] = root
				if typ == "TaskStarted" {
					continue
				}
				if started[start{root, typ}] {
					t.Fatalf("%s: a second %s (event %d) for the task scheduled at event %d", arn, typ, e.Id, root)
				}
				started[start{root, typ}] = true
			}
		}
		if h.NextToken == nil {
			break
		}
		token = h.NextToken
	}
}

// taskClosed reports whether a SendTask* error says that the token's task
// has closed (it was answered already), so that sending again is useless.
func taskClosed(err error) bool {
	code := apiErrorCode(err)
	return code == "TaskTimedOut" || code == "TaskDoesNotExist"
}

// apiErrorCode is the AWS error code of an SDK error, "" for none.
func apiErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
