package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// A cluster is a soak's stepd serve nodes over one PostgreSQL database,
// with the failover mix's state machines (failoverDef), the activity
// workers that poll random nodes and the callback worker that answers on
// a random node. It watches its nodes: one that exits without the test
// killing it fails the test (a node must weather a lost lease or an
// outage, not exit).
type cluster struct {
	t       *testing.T
	bin     string
	dir     string
	flags   []string // every node's, after --addr and --data
	addrs   []string
	clients []*sfn.Client
	// quick are clients that do not retry, to see a node's first answer.
	quick []*sfn.Client

	mu    sync.Mutex // guards nodes and ended
	nodes []*clusterNode
	ended bool

	actARN, smARN, childARN, probeARN string
	arns                              []string // the executions started, by index

	stop     chan struct{} // closed when the workers must stop
	answered chan struct{} // closed when the callback worker has stopped
	workers  sync.WaitGroup

	losses atomic.Int64 // leases lost, as the nodes' logs say
	probes atomic.Int64
}

// A clusterNode is one process of a node.
type clusterNode struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	killed atomic.Bool   // by the test
}

// newCluster starts n nodes over the database at dsn, with extra flags,
// and creates the failover mix's state machines and workers.
func newCluster(t *testing.T, dsn string, n int, extra ...string) *cluster {
	c := &cluster{t: t, bin: stepdBinary(t), dir: t.TempDir(), stop: make(chan struct{}), answered: make(chan struct{})}
	marks, asks := filepath.Join(c.dir, "marks"), filepath.Join(c.dir, "asks")
	for _, d := range []string{marks, asks} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := json.Marshal(map[string]any{
		"Functions": map[string]any{"flaky": map[string]any{"Command": []string{"sh", "-c", flakyScript}, "Env": map[string]string{"MARKS": marks}}},
		"Resources": map[string]any{"arn:aws:states:::sqs:*": map[string]any{"Command": []string{"sh", "-c", askScript}, "Env": map[string]string{"ASKS": asks}}},
	})
	registry := filepath.Join(c.dir, "registry.json")
	if err := os.WriteFile(registry, reg, 0o644); err != nil {
		t.Fatal(err)
	}
	c.flags = append([]string{"--store", dsn, "--config", registry}, extra...)
	c.addrs = make([]string, n)
	c.clients = make([]*sfn.Client, n)
	c.quick = make([]*sfn.Client, n)
	c.nodes = make([]*clusterNode, n)
	for i := range n {
		c.addrs[i] = freeAddr(t)
		c.clients[i] = restartingClient(c.addrs[i])
		c.quick[i] = sfn.New(c.clients[i].Options(), func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
		c.nodes[i] = c.startNode(i)
	}
	t.Cleanup(c.close)
	ctx := context.Background()
	create := func(name, def string) string {
		var arn string
		if err := c.onAny(0, func(cl *sfn.Client) error {
			sm, err := cl.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
				RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
			if err == nil {
				arn = aws.ToString(sm.StateMachineArn)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return arn
	}
	if err := c.onAny(0, func(cl *sfn.Client) error {
		act, err := cl.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("failover-work")})
		if err == nil {
			c.actARN = aws.ToString(act.ActivityArn)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c.childARN = create("failover-child", failoverChildDef)
	c.smARN = create("failover", strings.Replace(strings.Replace(failoverDef, "ACTIVITY", c.actARN, 1), "CHILD", c.childARN, 1))
	c.probeARN = create("probe", `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	go c.answerCallbacks(asks)
	for w := range 4 {
		c.workers.Go(func() { c.work(w) })
	}
	return c
}

// startNode starts node i's process and watches it.
func (c *cluster) startNode(i int) *clusterNode {
	watch := func(line string) {
		if strings.Contains(line, "lost its lease to the store") {
			c.losses.Add(1)
		}
	}
	cmd := startServeWatched(c.t, watch, c.bin, c.addrs[i], filepath.Join(c.dir, fmt.Sprint("data", i)), c.flags...)
	n := &clusterNode{cmd: cmd, exited: make(chan struct{})}
	// startServe's cleanup kills the process: registered after it, this
	// runs first.
	c.t.Cleanup(func() { n.killed.Store(true) })
	go func() {
		state, err := cmd.Process.Wait()
		close(n.exited)
		c.mu.Lock()
		defer c.mu.Unlock()
		if !n.killed.Load() && !c.ended {
			c.t.Errorf("node %d (pid %d) exited on its own: %v %v", i, cmd.Process.Pid, state, err)
		}
	}()
	return n
}

// kill kills node i with SIGKILL and starts it again.
func (c *cluster) kill(i int) {
	c.mu.Lock()
	n := c.nodes[i]
	c.mu.Unlock()
	n.killed.Store(true)
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
	restarted := c.startNode(i)
	c.mu.Lock()
	c.nodes[i] = restarted
	c.mu.Unlock()
}

// close stops the workers and the nodes.
func (c *cluster) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.answered
	c.workers.Wait()
	c.mu.Lock()
	c.ended = true
	nodes := c.nodes
	c.mu.Unlock()
	for _, n := range nodes {
		n.killed.Store(true)
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

// retryable reports whether a call that failed with err may succeed on
// another node or later: the node is down (no API error) or says so.
func retryable(err error) bool {
	switch apiErrorCode(err) {
	case "", "ServiceUnavailable", "ThrottlingException":
		return true
	}
	return false
}

// onAny calls fn on node first, or on the next ones while it fails in a
// way that may pass (a node down, a database down), for up to 3 minutes.
func (c *cluster) onAny(first int, fn func(cl *sfn.Client) error) error {
	deadline := time.Now().Add(3 * time.Minute)
	var err error
	for attempt := 0; ; attempt++ {
		if err = fn(c.clients[(first+attempt)%len(c.clients)]); err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-c.stop:
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// answerCallbacks is the callback worker: it answers each message once,
// on a random node. A task dispatched again after a failover leaves a
// second message, whose answer finds the task closed.
func (c *cluster) answerCallbacks(asks string) {
	defer close(c.answered)
	ctx := context.Background()
	for {
		select {
		case <-c.stop:
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
				c.t.Errorf("message %s: %v", f, err)
				_ = os.Remove(f)
				continue
			}
			if json.Unmarshal(b, &msg) != nil || msg.MessageBody.Token == "" {
				// A node killed while it wrote the task's input to the
				// script leaves it a cut-off input; the task runs again
				// on the node that claims the execution.
				c.t.Logf("message %s cut off by a kill: %q", f, b)
				_ = os.Remove(f)
				continue
			}
			answer := fmt.Sprintf(`{"by":"callback","id":%d}`, msg.MessageBody.ID)
			err = c.onAny(rand.IntN(len(c.clients)), func(cl *sfn.Client) error {
				_, err := cl.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(msg.MessageBody.Token), Output: aws.String(answer)})
				return err
			})
			if err != nil && !taskClosed(err) {
				// Any node must take the answer, the owner or not.
				c.t.Errorf("answer to e%d: %v", msg.MessageBody.ID, err)
			}
			_ = os.Remove(f)
		}
	}
}

// work is an activity worker polling random nodes; a task handed out
// again after a failover may be answered twice, and the second answer
// finds it closed. As a real worker's, its polls outlast the server's
// (60 s): one that gave up first could drop a task the node had just
// handed it, which then times out, on AWS as here. They end early only
// when the test stops, or when the node they poll is killed.
func (c *cluster) work(w int) {
	ctx := context.Background()
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		task, err := c.clients[rand.IntN(len(c.clients))].GetActivityTask(pctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(c.actARN), WorkerName: aws.String(fmt.Sprint("w", w))})
		if err != nil || task.TaskToken == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var in struct{ ID int }
		_ = json.Unmarshal([]byte(aws.ToString(task.Input)), &in)
		out := fmt.Sprintf(`{"by":"worker","id":%d}`, in.ID)
		err = c.onAny(rand.IntN(len(c.clients)), func(cl *sfn.Client) error {
			_, err := cl.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(out)})
			return err
		})
		if err != nil && !taskClosed(err) {
			c.t.Errorf("worker's answer to e%d: %v", in.ID, err)
		}
	}
}

// start starts execution i of the mix, twice by name on two nodes, which
// must answer the same execution.
func (c *cluster) start(i int) {
	ctx := context.Background()
	in := fmt.Sprintf(`{"id":%d,"wait":%d,"items":[%d,%d]}`, i, i%4, i, i+1)
	var got [2]string
	for k := range got {
		if err := c.onAny(i+k, func(cl *sfn.Client) error {
			ex, err := cl.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(c.smARN), Name: aws.String(fmt.Sprintf("e%d", i)), Input: aws.String(in)})
			if err == nil {
				got[k] = aws.ToString(ex.ExecutionArn)
			}
			return err
		}); err != nil {
			c.t.Fatalf("start e%d (call %d): %v", i, k+1, err)
		}
	}
	if got[0] != got[1] {
		c.t.Fatalf("starting e%d twice by name on two nodes: %s and %s", i, got[0], got[1])
	}
	c.arns = append(c.arns, got[0])
}

// probe runs a one-state execution on every node until each has
// succeeded: the cluster works again.
func (c *cluster) probe() {
	ctx := context.Background()
	for i := range c.clients {
		name := fmt.Sprintf("probe-%d", c.probes.Add(1))
		var arn string
		if err := c.onAny(i, func(cl *sfn.Client) error {
			ex, err := cl.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(c.probeARN), Name: aws.String(name)})
			if err == nil {
				arn = aws.ToString(ex.ExecutionArn)
			}
			return err
		}); err != nil {
			c.t.Fatalf("probe on node %d: %v", i, err)
		}
		c.waitDone(i, arn, 3*time.Minute)
	}
}

// waitDone waits until execution arn has ended and returns it.
func (c *cluster) waitDone(first int, arn string, within time.Duration) *sfn.DescribeExecutionOutput {
	ctx := context.Background()
	deadline := time.Now().Add(within) // bounds a failure only
	for {
		var d *sfn.DescribeExecutionOutput
		err := c.onAny(first, func(cl *sfn.Client) (err error) {
			d, err = cl.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			return err
		})
		if err == nil && d.Status != types.ExecutionStatusRunning {
			return d
		}
		if time.Now().After(deadline) {
			var last []string
			if h, herr := c.clients[first%len(c.clients)].GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 6}); herr == nil {
				for _, ev := range h.Events {
					last = append(last, fmt.Sprintf("%d %s", ev.Id, ev.Type))
				}
			}
			c.t.Fatalf("execution %s did not finish (%v); its last events, newest first: %v", arn, err, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check waits for every execution started to end, and checks that each
// succeeded with its exact output and a history without a lost or
// duplicated event.
func (c *cluster) check(within time.Duration) {
	deadline := time.Now().Add(within)
	for i, arn := range c.arns {
		d := c.waitDone(i, arn, time.Until(deadline))
		want := fmt.Sprintf(`{"id":%d,"work":{"by":"worker","id":%d},"flaky":{"ok":true},"answer":{"by":"callback","id":%d},"child":{"child":%d},"fan":[{"v":%d},{"v":%d}]}`, i, i, i, i, 2*i, 2*(i+1))
		if d.Status != types.ExecutionStatusSucceeded || aws.ToString(d.Output) != want {
			c.t.Errorf("execution %d: %s %s %s %s, want output %s", i, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), want)
		}
	}
	for i, arn := range c.arns {
		checkHistory(c.t, c.clients[i%len(c.clients)], arn)
	}
}

// busy starts n processes that keep a core each busy until the test ends.
func busy(t *testing.T, n int) {
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		})
	}
}
