package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// drainDef waits, runs a command task that takes a second, then an
// activity task, so that a drain finds executions in every kind of wait.
const drainDef = `{"StartAt":"Wait","States":{
 "Wait":{"Type":"Wait","SecondsPath":"$.wait","Next":"Slow"},
 "Slow":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:slow","ResultPath":"$.slow","Next":"Work"},
 "Work":{"Type":"Task","Resource":"ACTIVITY","TimeoutSeconds":300,"ResultPath":"$.work","End":true}}}`

// TestDrain stops a loaded node with SIGTERM while its executions wait in
// timers, run command tasks and wait for activity workers (who long-poll
// both nodes, 60 s each), and checks that the other node finishes them all:
// the lease is ten minutes, so they can only move because the stopping
// node hands them over. The stopping node must exit cleanly, without
// waiting for the long polls it holds.
func TestDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("drain test skipped in -short mode")
	}
	dsn := pgtest.DSN(t)
	bin := stepdBinary(t)
	dir := t.TempDir()
	reg, _ := json.Marshal(map[string]any{
		"Functions": map[string]any{"slow": map[string]any{"Command": []string{"sh", "-c", `cat >/dev/null; sleep 1; echo '{"slow":true}'`}}},
	})
	registry := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(registry, reg, 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := []string{freeAddr(t), freeAddr(t)}
	procs := make([]*exec.Cmd, 2)
	clients := make([]*sfn.Client, 2)
	for i := range procs {
		procs[i] = startServe(t, bin, addrs[i], filepath.Join(dir, fmt.Sprint("data", i)), "--store", dsn, "--config", registry, "--lease", "10m", "--log-level", "warn")
		clients[i] = restartingClient(addrs[i])
	}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_, _ = p.Process.Wait()
		}
	}()
	ctx := context.Background()
	a, b := clients[0], clients[1]
	act, err := b.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("drain-work")})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := b.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("drain"), RoleArn: aws.String("arn:aws:iam::123456789012:role/x"),
		Definition: aws.String(strings.Replace(drainDef, "ACTIVITY", aws.ToString(act.ActivityArn), 1))})
	if err != nil {
		t.Fatal(err)
	}

	// Workers long-poll both nodes; those on the stopping node get an
	// empty answer when it stops, and poll the other one from then on.
	stop := make(chan struct{})
	pollCtx, endPolls := context.WithCancel(ctx)
	var workers sync.WaitGroup
	defer workers.Wait()
	defer endPolls()
	defer close(stop)
	var mu sync.Mutex
	aDown := false
	for w := range 6 {
		workers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				c := clients[w%2]
				if aDown {
					c = b
				}
				mu.Unlock()
				wctx, cancel := context.WithTimeout(pollCtx, 70*time.Second)
				task, err := c.GetActivityTask(wctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String(fmt.Sprint("w", w))})
				cancel()
				if err != nil || task.TaskToken == nil {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				var in struct{ ID int }
				_ = json.Unmarshal([]byte(aws.ToString(task.Input)), &in)
				if _, err := b.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(fmt.Sprintf(`{"by":%d}`, in.ID))}); err != nil && !taskClosed(err) {
					t.Errorf("the answer to e%d: %v", in.ID, err)
				}
			}
		})
	}

	n := sized(20, 60)
	arns := make([]string, n)
	for i := range n {
		out, err := a.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(fmt.Sprint("e", i)),
			Input: aws.String(fmt.Sprintf(`{"ID":%d,"wait":%d}`, i, i%3))})
		if err != nil {
			t.Fatal(err)
		}
		arns[i] = aws.ToString(out.ExecutionArn)
	}
	// Stop the node once some executions have finished while others still
	// wait (in their timers, their command or for a worker).
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		done, err := a.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn, StatusFilter: types.ExecutionStatusSucceeded})
		if err != nil {
			t.Fatal(err)
		}
		if len(done.Executions) > 0 {
			if len(done.Executions) == n {
				t.Fatal("every execution finished before the node could be stopped")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no execution finished within 2 minutes")
		}
	}
	stopped := time.Now()
	if err := procs[0].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- procs[0].Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the node stopped with SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the node did not stop within 60 s of SIGTERM")
	}
	mu.Lock()
	aDown = true
	mu.Unlock()
	t.Logf("the node stopped %v after SIGTERM", time.Since(stopped).Round(time.Millisecond))

	deadline := time.Now().Add(2 * time.Minute) // well within the 10-minute lease
	for i, arn := range arns {
		for {
			d, err := b.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != types.ExecutionStatusRunning {
				want := fmt.Sprintf(`{"ID":%d,"wait":%d,"slow":{"slow":true},"work":{"by":%d}}`, i, i%3, i)
				if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
					t.Errorf("e%d: %s %s %s, want output %s", i, d.Status, aws.ToString(d.Output), aws.ToString(d.Cause), want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("e%d still running on the remaining node, %v after the drain", i, time.Since(stopped))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("all %d executions finished on the remaining node %v after SIGTERM", n, time.Since(stopped).Round(time.Millisecond))
	for _, arn := range arns {
		checkHistory(t, b, arn)
	}
}

// TestServeLeaseFlag: --lease is refused without --store, and below two
// claim intervals, with a message naming it.
func TestServeLeaseFlag(t *testing.T) {
	for _, bad := range [][]string{{"--lease", "10s"}, {"--store", "postgres://nobody@127.0.0.1:1/x", "--lease", "1s"}} {
		var stderr strings.Builder
		if code := Main(context.Background(), append([]string{"serve", "--data", "", "--addr", "127.0.0.1:0"}, bad...), strings.NewReader(""), io.Discard, &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), "--lease") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, stderr.String())
		}
	}
}
