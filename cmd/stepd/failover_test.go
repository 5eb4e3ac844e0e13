package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// failoverDef mixes what moving to another node must preserve: a durable
// Wait, an activity (its workers poll random nodes), a command task that fails its first attempt and is retried, and a
// .waitForTaskToken callback (the command standing in for the queue
// leaves the message in a folder; the test answers it on a random node,
// usually not the owner), a .sync:2 child (which may move to another node
// than its parent's), and a Map whose iterations wait.
const failoverDef = `{"StartAt":"Wait","States":{
 "Wait":{"Type":"Wait","SecondsPath":"$.wait","Next":"Work"},
 "Work":{"Type":"Task","Resource":"ACTIVITY","TimeoutSeconds":300,"ResultPath":"$.work","Next":"Flaky"},
 "Flaky":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:flaky","Parameters":{"id.$":"$.id"},
   "Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1,"MaxAttempts":3}],"ResultPath":"$.flaky","Next":"Ask"},
 "Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","TimeoutSeconds":300,
   "Parameters":{"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/asks","MessageBody":{"token.$":"$$.Task.Token","id.$":"$.id"}},
   "ResultPath":"$.answer","Next":"Child"},
 "Child":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
   "Parameters":{"StateMachineArn":"CHILD","Input":{"id.$":"$.id","AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}},
   "ResultSelector":{"out.$":"$.Output"},"ResultPath":"$.child","Next":"Fan"},
 "Fan":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"ResultPath":"$.fan",
   "ItemProcessor":{"StartAt":"Pause","States":{"Pause":{"Type":"Wait","Seconds":1,"Next":"Double"},
     "Double":{"Type":"Pass","Parameters":{"v.$":"States.MathAdd($, $)"},"End":true}}},"Next":"Done"},
 "Done":{"Type":"Pass","Parameters":{"id.$":"$.id","work.$":"$.work","flaky.$":"$.flaky","answer.$":"$.answer","child.$":"$.child.out","fan.$":"$.fan"},"End":true}}}`

// flakyScript fails the first call for an id and succeeds after.
const flakyScript = `in=$(cat); f="$MARKS/m-$(printf %s "$in" | tr -dc 0-9)"
if [ -e "$f" ]; then echo '{"ok":true}'; else : > "$f"; echo '{"errorType":"Flaky","errorMessage":"first try"}'; exit 1; fi`

// failoverChildDef waits, then answers with its id.
const failoverChildDef = `{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":1,"Next":"Say"},
 "Say":{"Type":"Pass","Parameters":{"child.$":"$.id"},"End":true}}}`

// askScript leaves the message in $ASKS, whole (written, then renamed).
const askScript = `f="$ASKS/$(date +%s%N)-$$"; cat > "$f.tmp" && mv "$f.tmp" "$f.json" && echo '{"MessageId":"m-1"}'`

// TestFailover runs three stepd serve nodes over one PostgreSQL schema,
// starts executions on all of them (each also started a second time, by
// name, on another node, which must answer the same execution), and kills
// a random node with SIGKILL four times (ten, after 100 starts each, with
// STEPD_LONG=1), restarting it each time. Every
// execution must end SUCCEEDED with its exact output and a history whose
// event ids are consecutive, without duplicates: the executions of a
// killed node move to the others (lease, claim, replay), and a node that
// lost them can commit nothing more.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("failover test skipped in -short mode")
	}
	dsn := pgtest.DSN(t)
	bin := stepdBinary(t)
	dir := t.TempDir()
	marks, asks := filepath.Join(dir, "marks"), filepath.Join(dir, "asks")
	for _, d := range []string{marks, asks} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := json.Marshal(map[string]any{
		"Functions": map[string]any{"flaky": map[string]any{"Command": []string{"sh", "-c", flakyScript}, "Env": map[string]string{"MARKS": marks}}},
		"Resources": map[string]any{"arn:aws:states:::sqs:*": map[string]any{"Command": []string{"sh", "-c", askScript}, "Env": map[string]string{"ASKS": asks}}},
	})
	registry := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(registry, reg, 0o644); err != nil {
		t.Fatal(err)
	}
	const nodes = 3
	addrs := make([]string, nodes)
	procs := make([]*exec.Cmd, nodes)
	clients := make([]*sfn.Client, nodes)
	var mu sync.Mutex // guards procs
	for i := range nodes {
		addrs[i] = freeAddr(t)
		procs[i] = startServe(t, bin, addrs[i], filepath.Join(dir, fmt.Sprint("data", i)), "--store", dsn, "--config", registry)
		clients[i] = restartingClient(addrs[i])
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range procs {
			_ = p.Process.Kill()
			_, _ = p.Process.Wait()
		}
	}()
	ctx := context.Background()
	// onAny calls fn on node first, or the next ones while it is down.
	onAny := func(first int, fn func(c *sfn.Client) error) error {
		var err error
		for attempt := range 200 {
			if err = fn(clients[(first+attempt)%nodes]); err == nil || apiErrorCode(err) != "" {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
		return err
	}
	var actARN, smARN string
	if err := onAny(0, func(c *sfn.Client) error {
		act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("failover-work")})
		if err == nil {
			actARN = aws.ToString(act.ActivityArn)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var childARN string
	if err := onAny(0, func(c *sfn.Client) error {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("failover-child"), Definition: aws.String(failoverChildDef),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
		if err == nil {
			childARN = aws.ToString(sm.StateMachineArn)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	def := strings.Replace(strings.Replace(failoverDef, "ACTIVITY", actARN, 1), "CHILD", childARN, 1)
	if err := onAny(0, func(c *sfn.Client) error {
		sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("failover"), Definition: aws.String(def),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
		if err == nil {
			smARN = aws.ToString(sm.StateMachineArn)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// The callback worker answers each message once, on a random node; a task
	// dispatched again after a failover leaves a second message, whose
	// answer finds the task closed.
	stopAnswers := make(chan struct{})
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for {
			select {
			case <-stopAnswers:
				return
			case <-time.After(100 * time.Millisecond):
			}
			files, _ := filepath.Glob(filepath.Join(asks, "*.json"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				var msg struct {
					MessageBody struct {
						Token string
						ID    int
					}
				}
				if err != nil {
					t.Errorf("message %s: %v", f, err)
					_ = os.Remove(f)
					continue
				}
				if json.Unmarshal(b, &msg) != nil || msg.MessageBody.Token == "" {
					// A node killed while it wrote the task's input to the
					// script leaves it a cut-off input; the task runs again
					// on the node that claims the execution (and the
					// execution could not finish otherwise).
					t.Logf("message %s cut off by a kill: %q", f, b)
					_ = os.Remove(f)
					continue
				}
				answer := fmt.Sprintf(`{"by":"callback","id":%d}`, msg.MessageBody.ID)
				err = onAny(rand.IntN(nodes), func(c *sfn.Client) error {
					_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(msg.MessageBody.Token), Output: aws.String(answer)})
					return err
				})
				if err != nil && !taskClosed(err) {
					// Any node must take the answer, the owner or not.
					t.Errorf("answer to e%d: %v", msg.MessageBody.ID, err)
				}
				_ = os.Remove(f)
			}
		}
	}()
	// Activity workers poll random nodes; a task handed out again after a
	// failover may be answered twice, and the second answer finds it
	// closed.
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Go(func() {
			for {
				select {
				case <-stopAnswers:
					return
				default:
				}
				wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				task, err := clients[rand.IntN(nodes)].GetActivityTask(wctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(actARN), WorkerName: aws.String(fmt.Sprint("w", w))})
				cancel()
				if err != nil || task.TaskToken == nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				var in struct{ ID int }
				_ = json.Unmarshal([]byte(aws.ToString(task.Input)), &in)
				out := fmt.Sprintf(`{"by":"worker","id":%d}`, in.ID)
				err = onAny(rand.IntN(nodes), func(c *sfn.Client) error {
					_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(out)})
					return err
				})
				if err != nil && !taskClosed(err) {
					t.Errorf("worker's answer to e%d: %v", in.ID, err)
				}
			}
		})
	}
	defer func() {
		select {
		case <-stopAnswers:
		default:
			close(stopAnswers)
		}
		<-answered
		workers.Wait()
	}()

	// 40 executions over 4 kills by default; the 1,000 over 10
	// with STEPD_LONG=1. STEPD_FAILOVER_PER_ROUND sets how many start before
	// each kill.
	kills := sized(4, 10)
	perRound := sized(10, 100)
	if v := os.Getenv("STEPD_FAILOVER_PER_ROUND"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("STEPD_FAILOVER_PER_ROUND=%q: want a positive number", v)
		}
		perRound = n
	}
	var arns []string
	start := func(i int) {
		in := fmt.Sprintf(`{"id":%d,"wait":%d,"items":[%d,%d]}`, i, i%4, i, i+1)
		var got [2]string
		for k := range got {
			if err := onAny(i+k, func(c *sfn.Client) error {
				ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(fmt.Sprintf("e%d", i)), Input: aws.String(in)})
				if err == nil {
					got[k] = aws.ToString(ex.ExecutionArn)
				}
				return err
			}); err != nil {
				t.Fatalf("start e%d (call %d): %v", i, k+1, err)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("starting e%d twice by name on two nodes: %s and %s", i, got[0], got[1])
		}
		arns = append(arns, got[0])
	}
	for kill := range kills {
		for j := range perRound {
			start(kill*perRound + j)
		}
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		victim := rand.IntN(nodes)
		mu.Lock()
		_ = procs[victim].Process.Signal(syscall.SIGKILL)
		_, _ = procs[victim].Process.Wait()
		procs[victim] = startServe(t, bin, addrs[victim], filepath.Join(dir, fmt.Sprint("data", victim)), "--store", dsn, "--config", registry)
		mu.Unlock()
	}

	deadline := time.Now().Add(240 * time.Second)
	for i, arn := range arns {
		for {
			var d *sfn.DescribeExecutionOutput
			err := onAny(i, func(c *sfn.Client) (err error) {
				d, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
				return err
			})
			if err == nil && d.Status != types.ExecutionStatusRunning {
				want := fmt.Sprintf(`{"id":%d,"work":{"by":"worker","id":%d},"flaky":{"ok":true},"answer":{"by":"callback","id":%d},"child":{"child":%d},"fan":[{"v":%d},{"v":%d}]}`, i, i, i, i, 2*i, 2*(i+1))
				if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
					t.Errorf("execution %d: %s %s %s %s, want output %s", i, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), want)
				}
				break
			}
			if time.Now().After(deadline) {
				var last []string
				if h, herr := clients[i%nodes].GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 6}); herr == nil {
					for _, ev := range h.Events {
						last = append(last, fmt.Sprintf("%d %s", ev.Id, ev.Type))
					}
				}
				t.Fatalf("execution %d did not finish (%v); its last events, newest first: %v", i, err, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i, arn := range arns {
		checkHistory(t, clients[i%nodes], arn)
	}
	t.Logf("%d executions on %d nodes survived %d kills", len(arns), nodes, kills)
}
