package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
)

// TestSharedNodes runs two services over one PostgreSQL schema, as two
// stepd serve nodes: node A runs the executions it starts, and node B
// hands A's activity task to a worker, takes the worker's answer, and
// stops another of A's executions.
func TestSharedNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	var nodes [2]*service.Service
	var stores [2]*postgres.Store
	var receivers sync.WaitGroup
	for i := range nodes {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = st
		defer st.Close()
		nodes[i] = service.New(service.Config{Store: st, Shared: st})
		defer nodes[i].Close()
		receivers.Go(func() { _ = nodes[i].Runner().Receive(ctx) })
	}
	defer receivers.Wait() // before the stores close: a receiver holds a connection
	defer cancel()
	a, b := nodes[0], nodes[1]
	act, err := a.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + act.ARN + `","TimeoutSeconds":60,"End":true}}}`
	// The same task, then a wait: the execution goes on running after
	// its task has closed.
	defThen := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + act.ARN + `","TimeoutSeconds":60,"Next":"Rest"},
		"Rest":{"Type":"Wait","Seconds":600,"End":true}}}`
	sm, _, err := a.CreateStateMachine(ctx, service.StateMachineInput{Name: "m", RoleARN: "arn:aws:iam::1:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := a.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "e", Input: `{"n":1}`})
	if err != nil {
		t.Fatal(err)
	}
	token, input, err := b.GetActivityTask(ctx, act.ARN, "worker-on-b", 10*time.Second)
	if err != nil || token == "" || input != `{"n":1}` {
		t.Fatalf("GetActivityTask on the other node: %q %q %v", token, input, err)
	}
	if err := b.SendTaskHeartbeat(ctx, token); err != nil {
		t.Fatalf("heartbeat on the other node: %v", err)
	}
	if err := b.SendTaskSuccess(ctx, token, `{"done":"by b"}`); err != nil {
		t.Fatalf("SendTaskSuccess on the other node: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	done, err := a.Wait(wctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" || done.Output != `{"done":"by b"}` {
		t.Fatalf("execution after the answer: %+v %v", done, err)
	}
	events, _, err := a.History(ctx, e.ARN, "", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); !strings.Contains(got, "ActivityStarted ActivitySucceeded") {
		t.Errorf("history: %s", got)
	}

	// Callbacks on B for a task of A's that has closed while its
	// execution runs on, or that A never issued, are answered as A
	// would: TaskTimedOut, TaskDoesNotExist.
	smThen, _, err := a.CreateStateMachine(ctx, service.StateMachineInput{Name: "then", RoleARN: "arn:aws:iam::1:role/r", Definition: defThen})
	if err != nil {
		t.Fatal(err)
	}
	resting, err := a.StartExecution(ctx, service.StartInput{StateMachineARN: smThen.ARN, Name: "r", Input: `{"n":3}`})
	if err != nil {
		t.Fatal(err)
	}
	token, _, err = b.GetActivityTask(ctx, act.ARN, "worker-on-b", 10*time.Second)
	if err != nil || token == "" {
		t.Fatalf("GetActivityTask on the other node: %q %v", token, err)
	}
	if err := b.SendTaskSuccess(ctx, token, `{}`); err != nil {
		t.Fatalf("SendTaskSuccess on the other node: %v", err)
	}
	for _, call := range []struct {
		name string
		fn   func() error
	}{
		{"SendTaskSuccess", func() error { return b.SendTaskSuccess(ctx, token, `{}`) }},
		{"SendTaskFailure", func() error { return b.SendTaskFailure(ctx, token, "E", "c") }},
		{"SendTaskHeartbeat", func() error { return b.SendTaskHeartbeat(ctx, token) }},
	} {
		if err := call.fn(); !errors.Is(err, fault.ErrTaskClosed) {
			t.Errorf("%s on the other node for a closed task of a running execution: %v, want TaskTimedOut", call.name, err)
		}
	}
	key, err := stores[1].Secret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SendTaskSuccess(ctx, interp.SignToken(key, resting.ARN, 99), `{}`); !errors.Is(err, fault.ErrNoTask) {
		t.Errorf("SendTaskSuccess on the other node for a token never issued: %v, want TaskDoesNotExist", err)
	}
	if d, err := b.DescribeExecution(ctx, resting.ARN); err != nil || d.Status != "RUNNING" {
		t.Fatalf("the resting execution: %+v %v", d, err)
	}

	waiting, err := a.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "w", Input: `{"n":2}`})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := b.StopExecution(ctx, waiting.ARN, "Halt", "stopped on b")
	if err != nil || stopped.Status != "ABORTED" {
		t.Fatalf("StopExecution on the other node: %+v %v", stopped, err)
	}

	// A .sync parent on A whose child runs on B (B started it first, by
	// the name and input the parent gives) waits for the child's end.
	kid, _, err := b.CreateStateMachine(ctx, service.StateMachineInput{Name: "kid", RoleARN: "arn:aws:iam::1:role/r",
		Definition: `{"StartAt":"Nap","States":{"Nap":{"Type":"Wait","Seconds":1,"Next":"Say"},"Say":{"Type":"Pass","Result":{"said":"kid"},"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartExecution(ctx, service.StartInput{StateMachineARN: kid.ARN, Name: "kid-1", Input: `{"n":1}`}); err != nil {
		t.Fatal(err)
	}
	parent, _, err := a.CreateStateMachine(ctx, service.StateMachineInput{Name: "parent", RoleARN: "arn:aws:iam::1:role/r",
		Definition: `{"StartAt":"Child","States":{"Child":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
			"Parameters":{"StateMachineArn":"` + kid.ARN + `","Name":"kid-1","Input":{"n":1}},"OutputPath":"$.Output","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := a.StartExecution(ctx, service.StartInput{StateMachineARN: parent.ARN, Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	if done, err := a.Wait(pctx, pe.ARN); err != nil || done.Status != "SUCCEEDED" || done.Output != `{"said":"kid"}` {
		t.Fatalf("a .sync parent whose child runs on another node: %+v %v", done, err)
	}
}

// doneWatch is a context that tells when its Done channel is first asked
// for: a GetActivityTask on a memory store asks for it only in the select
// that waits for a task (which evaluates every case's channel before it
// blocks), so the poll is waiting, or about to with EndPolls's channel in
// hand.
type doneWatch struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *doneWatch) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

// TestEndPolls: EndPolls ends the GetActivityTask long polls waiting, and
// the later ones return at once, without a task.
func TestEndPolls(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{})
	defer svc.Close()
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	pollCtx := &doneWatch{Context: ctx, asked: make(chan struct{})}
	go func() {
		token, _, _ := svc.GetActivityTask(pollCtx, act.ARN, "w", time.Hour)
		done <- token
	}()
	<-pollCtx.asked // it is waiting
	svc.Runner().EndPolls()
	select {
	case token := <-done:
		if token != "" {
			t.Errorf("a poll ended by EndPolls got a task: %q", token)
		}
	case <-time.After(time.Minute):
		t.Fatal("EndPolls did not end a waiting GetActivityTask")
	}
	if token, _, err := svc.GetActivityTask(ctx, act.ARN, "w", time.Hour); err != nil || token != "" {
		t.Errorf("a poll after EndPolls: %q %v", token, err)
	}
}

// TestSharedUpdateMapRun: UpdateMapRun sent to node B for a Map Run that
// node A runs reaches A (a forwarded message) and is applied there: the
// Map Run, run one child at a time, runs three at once, which B sees in
// DescribeMapRun and in the tasks its workers take.
func TestSharedUpdateMapRun(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	var nodes [2]*service.Service
	var receivers sync.WaitGroup
	for i := range nodes {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		nodes[i] = service.New(service.Config{Store: st, Shared: st})
		defer nodes[i].Close()
		receivers.Go(func() { _ = nodes[i].Runner().Receive(ctx) })
	}
	defer receivers.Wait()
	defer cancel()
	a, b := nodes[0], nodes[1]
	act, err := a.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"Items","MaxConcurrency":1,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Task","Resource":"` + act.ARN + `","End":true}}},
		"End":true}}}`
	sm, _, err := a.CreateStateMachine(ctx, service.StateMachineInput{Name: "maprun", RoleARN: "arn:aws:iam::1:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := a.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "m1", Input: `[1,2,3,4]`})
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{takeTask(t, b, act.ARN)}
	r := waitMapRun(t, b, e.ARN, func(r *store.MapRun) bool { return r.Executions.Running == 1 })
	if r.MaxConcurrency != 1 || r.Executions.Pending != 3 {
		t.Fatalf("before the update: %+v", r)
	}
	three := 3
	if err := b.UpdateMapRun(ctx, r.ARN, service.MapRunUpdate{MaxConcurrency: &three}); err != nil {
		t.Fatal(err)
	}
	tokens = append(tokens, takeTask(t, b, act.ARN), takeTask(t, b, act.ARN))
	waitMapRun(t, b, e.ARN, func(r *store.MapRun) bool {
		return r.MaxConcurrency == 3 && r.Executions.Running == 3 && r.Executions.Pending == 1
	})
	for _, tok := range tokens {
		if err := b.SendTaskSuccess(ctx, tok, `"ok"`); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SendTaskSuccess(ctx, takeTask(t, b, act.ARN), `"last"`); err != nil {
		t.Fatal(err)
	}
	done, err := a.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" || done.Output != `["ok","ok","ok","last"]` {
		t.Fatalf("the execution: %+v %v", done, err)
	}
}
