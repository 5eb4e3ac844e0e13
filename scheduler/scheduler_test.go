package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/scheduler"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/registry"
)

// clock is a clock the test sets; its timers never fire (the tests call
// FireDue).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}
func (c *clock) Set(t time.Time)                      { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) After(time.Duration) <-chan time.Time { return nil }

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

const role = "arn:aws:iam::123456789012:role/r"

// crashAfterFiring is a store that fails every PutSchedule, as if the
// process died after it fired a schedule and before it recorded that.
type crashAfterFiring struct{ store.Schedules }

func (crashAfterFiring) PutSchedule(context.Context, *store.Schedule) error {
	return errors.New("crashed")
}

func next(t *testing.T, st store.Schedules, name string) time.Time {
	t.Helper()
	sc, err := st.GetSchedule(context.Background(), "default", name)
	if err != nil {
		t.Fatal(err)
	}
	return sc.Next
}

// TestExactlyOnceAcrossRestarts fires a schedule, crashes before the firing
// is recorded, restarts on the same SQLite file and fires again once the
// claim has ended: one execution, and the schedule moves on to its next
// due time.
func TestExactlyOnceAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	clk := &clock{t: t0}
	open := func() (*sqlite.Store, *service.Service) {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		return st, service.New(service.Config{Store: st})
	}
	st, svc := open()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "sm", RoleARN: role, Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	sch := scheduler.New(scheduler.Config{Store: crashAfterFiring{st}, Service: svc, Clock: clk})
	input := `{"due":"<aws.scheduler.scheduled-time>"}`
	if _, err := sch.Create(ctx, scheduler.Schedule{Name: "hourly", ScheduleExpression: "rate(1 hour)", FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
		Target: &scheduler.Target{Arn: sm.ARN, RoleArn: role, Input: &input}}); err != nil {
		t.Fatal(err)
	}
	if n := sch.FireDue(ctx); n != 1 {
		t.Fatalf("FireDue claimed %d, want 1", n)
	}
	count := func(svc *service.Service) int {
		execs, _, err := svc.ListExecutions(ctx, sm.ARN, "", store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		return len(execs)
	}
	if n := count(svc); n != 1 {
		t.Fatalf("%d executions after the first firing, want 1", n)
	}
	svc.Close()
	st.Close()

	st, svc = open() // the restart
	defer st.Close()
	defer svc.Close()
	sch = scheduler.New(scheduler.Config{Store: st, Service: svc, Clock: clk})
	if n := sch.FireDue(ctx); n != 0 {
		t.Fatalf("FireDue claimed %d while the dead process's claim lasts", n)
	}
	clk.Set(t0.Add(time.Minute)) // the claim has ended
	if n := sch.FireDue(ctx); n != 1 {
		t.Fatalf("FireDue after the claim: %d, want 1", n)
	}
	if n := count(svc); n != 1 {
		t.Fatalf("%d executions after the firing ran again, want 1", n)
	}
	if got := next(t, st, "hourly"); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("next due time %v, want %v", got, t0.Add(time.Hour))
	}
	clk.Set(t0.Add(time.Hour))
	sch.FireDue(ctx)
	sch.FireDue(ctx)
	if n := count(svc); n != 2 {
		t.Fatalf("%d executions after the second due time, want 2", n)
	}
}

// TestFlexibleWindow checks that a flexible window delays the firing by
// less than its maximum, and that a disabled schedule is not due.
func TestFlexibleWindow(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := scheduler.New(scheduler.Config{Store: st, Clock: &clock{t: t0}})
	w := 10
	target := &scheduler.Target{Arn: "arn:aws:lambda:us-east-1:123456789012:function:f", RoleArn: role}
	delays := map[time.Duration]bool{}
	for i := range 20 {
		name := fmt.Sprint("flex-", i)
		if _, err := sch.Create(ctx, scheduler.Schedule{Name: name, ScheduleExpression: "cron(0 12 * * ? *)", ScheduleExpressionTimezone: "Europe/Paris",
			FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "FLEXIBLE", MaximumWindowInMinutes: &w}, Target: target}); err != nil {
			t.Fatal(err)
		}
		due := time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC) // noon in Paris
		d := next(t, st, name).Sub(due)
		if d < 0 || d >= 10*time.Minute {
			t.Fatalf("delay %v outside the window", d)
		}
		delays[d] = true
	}
	if len(delays) < 10 {
		t.Fatalf("%d different delays of 20: not drawn at random", len(delays))
	}
	if _, err := sch.Create(ctx, scheduler.Schedule{Name: "off", ScheduleExpression: "rate(1 minute)", State: "DISABLED",
		FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"}, Target: target}); err != nil {
		t.Fatal(err)
	}
	if got := next(t, st, "off"); !got.IsZero() {
		t.Fatalf("a disabled schedule is due at %v", got)
	}
}

// TestNodesFireOnce runs two nodes on one PostgreSQL database, firing the
// same 30 schedules at once at two due times: each firing invokes its
// Lambda function once.
func TestNodesFireOnce(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var mu sync.Mutex
	invoked := map[string]int{}
	fn := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		b, _ := json.Marshal(req.Input)
		var in struct{ ID string }
		if err := json.Unmarshal(b, &in); err != nil {
			return task.Result{Error: "Bad", Cause: err.Error()}
		}
		mu.Lock()
		invoked[in.ID]++
		mu.Unlock()
		return task.Result{Output: map[string]any{}}
	})
	clk := &clock{t: t0}
	var nodes []*scheduler.Scheduler
	for range 2 {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		nodes = append(nodes, scheduler.New(scheduler.Config{Store: st, Invoker: fn, Clock: clk}))
	}
	input := `{"ID":"<aws.scheduler.execution-id>"}`
	for i := range 30 {
		if _, err := nodes[i%2].Create(ctx, scheduler.Schedule{Name: fmt.Sprint("s", i), ScheduleExpression: "rate(1 minute)",
			FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
			Target:             &scheduler.Target{Arn: "arn:aws:lambda:us-east-1:123456789012:function:f", RoleArn: role, Input: &input}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Time{t0, t0.Add(time.Minute)} {
		clk.Set(at)
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(func() {
				for range 5 {
					n.FireDue(ctx)
				}
			})
		}
		wg.Wait()
	}
	if len(invoked) != 60 {
		t.Fatalf("%d firings, want 60 (30 schedules, 2 due times)", len(invoked))
	}
	for id, n := range invoked {
		if n != 1 {
			t.Fatalf("firing %s invoked %d times", id, n)
		}
	}
}

// TestLambdaTarget fires one-time schedules onto Lambda functions of a
// resource registry (local commands): the input carries the context
// attributes; a failing function is retried as RetryPolicy allows, then
// given up.
func TestLambdaTarget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	reg, err := registry.New(registry.Config{Functions: map[string]registry.Handler{
		"ok":    {Command: []string{"sh", "-c", `cat >> "$0"; echo >> "$0"; echo '{}'`, log + ".ok"}},
		"fails": {Command: []string{"sh", "-c", `cat >> "$0"; echo >> "$0"; exit 3`, log + ".fails"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := &clock{t: t0}
	sch := scheduler.New(scheduler.Config{Store: st, Invoker: reg, Clock: clk})
	one := 1
	for _, fn := range []string{"ok", "fails"} {
		input := `{"fn":"` + fn + `","attempt":<aws.scheduler.attempt-number>,"due":"<aws.scheduler.scheduled-time>"}`
		if _, err := sch.Create(ctx, scheduler.Schedule{Name: fn, ScheduleExpression: "at(2026-11-25T10:00:00)", FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
			Target: &scheduler.Target{Arn: "arn:aws:lambda:us-east-1:123456789012:function:" + fn, RoleArn: role, Input: &input,
				RetryPolicy: &scheduler.RetryPolicy{MaximumRetryAttempts: &one}}}); err != nil {
			t.Fatal(err)
		}
	}
	sch.FireDue(ctx)
	if got := next(t, st, "fails"); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("the failed invocation's retry is due at %v, want a second later", got)
	}
	if got := next(t, st, "ok"); !got.IsZero() {
		t.Fatalf("a one-time schedule that fired is due again at %v", got)
	}
	clk.Set(t0.Add(time.Second))
	sch.FireDue(ctx)
	if got := next(t, st, "fails"); !got.IsZero() {
		t.Fatalf("after its last retry, due again at %v", got)
	}
	clk.Set(t0.Add(time.Hour))
	sch.FireDue(ctx)
	var b []byte
	for _, f := range []string{".ok", ".fails"} {
		c, err := os.ReadFile(log + f)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, c...)
	}
	var calls []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c struct {
			Fn      string
			Attempt int
			Due     string
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		calls = append(calls, fmt.Sprint(c.Fn, c.Attempt, " ", c.Due))
	}
	slices.Sort(calls)
	if want := "[fails1 2026-11-25T10:00:00Z fails2 2026-11-25T10:00:00Z ok1 2026-11-25T10:00:00Z]"; fmt.Sprint(calls) != want {
		t.Fatalf("calls %v, want %s", calls, want)
	}
}
