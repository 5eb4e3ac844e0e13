package service_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/value"
)

// evaluating reports whether a goroutine is evaluating JSONata: its stack
// holds jsonata's Template.EvalWith, which the interpreter calls once the
// engine's meter has begun the evaluation (Meter.Begin, which reads a stop
// requested before it). No hook tells it, so the goroutines' stacks do.
func evaluating() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte("github.com/stepd/stepd/jsonata.(*Template).EvalWith("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// historyText renders an execution's committed events, one a line.
func historyText(t *testing.T, svc *service.Service, arn string) string {
	t.Helper()
	evs, _, err := svc.History(context.Background(), arn, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s\n", ev.JSON)
	}
	return b.String()
}

// replayed rebuilds an execution from its committed steps, as a restart
// does, and renders the rebuilt history the way the committed one is.
func replayed(t *testing.T, st store.Store, def, arn string, info interp.Info) string {
	t.Helper()
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Steps(context.Background(), arn)
	if err != nil {
		t.Fatal(err)
	}
	d := engine.New(p, engine.Config{Journal: st, Clock: engine.RealClock{}})
	if err := d.Replay(info, value.NewObject(0), steps); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range d.Execution().History() {
		fmt.Fprintf(&b, "%s\n", ev.AppendJSON(nil, true))
	}
	return b.String()
}

// openService opens a service on the SQLite file at path.
func openService(t *testing.T, path string) (*service.Service, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return service.New(service.Config{Store: st}), st
}

// A stop interrupts a long evaluation: StopExecution answers once the
// execution has ended ABORTED, with its stop date; the history after a
// restart, and the one replay rebuilds, are the committed one.
func TestStopInterruptsEvaluation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "stepd.db")
	svc, st := openService(t, path)
	// Evaluating $f(60) takes hours; no budget stops it (the service's
	// budget is unlimited), only the stop.
	def := `{"QueryLanguage":"JSONata","StartAt":"Slow","States":{
		"Slow":{"Type":"Pass","Output":"{% ($f := function($n) { $n <= 1 ? $n : $f($n - 1) + $f($n - 2) }; $f(60)) %}","Next":"After"},
		"After":{"Type":"Succeed"}}}`
	svcNoBudget := service.New(service.Config{Store: st, Budget: engine.Budget{Time: -1, Steps: -1, Alloc: -1}})
	svc.Close()
	svc = svcNoBudget
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "slow", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "s1", Input: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	// The stop comes while the evaluation runs, not before it begins
	// (which the evaluation would see at its start).
	for deadline := time.Now().Add(time.Minute); !evaluating(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the evaluation never began")
		}
	}
	stopped, err := svc.StopExecution(ctx, e.ARN, "Halt", "stopped by the test")
	if err != nil {
		t.Fatalf("StopExecution: %v", err)
	}
	if stopped.Status != "ABORTED" || stopped.Stopped.IsZero() {
		t.Fatalf("StopExecution answered status %s, stop date %v; want ABORTED with a date", stopped.Status, stopped.Stopped)
	}
	committed := historyText(t, svc, e.ARN)
	types := ""
	for _, line := range strings.Split(strings.TrimSpace(committed), "\n") {
		v, err := value.ParseString(line)
		if err != nil {
			t.Fatal(err)
		}
		typ, _ := v.(*value.Object).Get("type")
		types += typ.(string) + ","
	}
	if want := "ExecutionStarted,PassStateEntered,ExecutionAborted,"; types != want {
		t.Fatalf("history %s, want %s\n%s", types, want, committed)
	}
	if !strings.Contains(committed, `"error":"Halt"`) || !strings.Contains(committed, `"cause":"stopped by the test"`) {
		t.Errorf("ExecutionAborted without the stop's error and cause:\n%s", committed)
	}
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	svc2, st2 := openService(t, path)
	defer st2.Close()
	defer svc2.Close()
	if _, err := svc2.Runner().Resume(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := svc2.DescribeExecution(ctx, e.ARN)
	if err != nil || got.Status != "ABORTED" || !got.Stopped.Equal(stopped.Stopped) {
		t.Fatalf("after the restart: %+v %v", got, err)
	}
	if after := historyText(t, svc2, e.ARN); after != committed {
		t.Errorf("history after the restart\n%s\nbefore\n%s", after, committed)
	}
	info := interp.Info{ExecutionARN: e.ARN, Name: "s1", StateMachineARN: sm.ARN, StateMachineName: "slow", RoleARN: "arn:aws:iam::123456789012:role/r", StartTime: got.Started, Defer: true}
	if rebuilt := replayed(t, st2, def, e.ARN, info); rebuilt != committed {
		t.Errorf("replay rebuilt\n%s\nthe committed history is\n%s", rebuilt, committed)
	}
}

// Events carry the time evaluations took: a state whose Output takes a
// while exits later than it entered, and replay rebuilds the same times.
func TestEventTimesShowEvaluation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// No time budget: under -race on a loaded machine $f(24) can take
	// over the default 2 s.
	svc := service.New(service.Config{Store: st, Budget: engine.Budget{Time: -1}})
	defer st.Close()
	defer svc.Close()
	// $f(24) makes about 75,000 calls: tens of milliseconds.
	def := `{"QueryLanguage":"JSONata","StartAt":"Slow","States":{
		"Slow":{"Type":"Pass","Output":"{% ($f := function($n) { $n <= 1 ? $n : $f($n - 1) + $f($n - 2) }; $f(24)) %}","Next":"Wait"},
		"Wait":{"Type":"Wait","Seconds":0,"End":true}}}`
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "timed", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "t1", Input: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	if done.Output != "46368" {
		t.Fatalf("output %s", done.Output)
	}
	evs, _, err := svc.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]float64{}
	for _, ev := range evs {
		v, err := value.Parse(ev.JSON)
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := v.(*value.Object).Get("timestamp")
		at[ev.Type] = ts.(value.Number).Float64()
	}
	if at["PassStateExited"] <= at["PassStateEntered"] {
		t.Errorf("PassStateEntered at %v, PassStateExited at %v: the evaluation's time is not shown", at["PassStateEntered"], at["PassStateExited"])
	}
	info := interp.Info{ExecutionARN: e.ARN, Name: "t1", StateMachineARN: sm.ARN, StateMachineName: "timed", RoleARN: "arn:aws:iam::123456789012:role/r", StartTime: done.Started, Defer: true}
	if committed, rebuilt := historyText(t, svc, e.ARN), replayed(t, st, def, e.ARN, info); rebuilt != committed {
		t.Errorf("replay rebuilt\n%s\nthe committed history is\n%s", rebuilt, committed)
	}
}
