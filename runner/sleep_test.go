package runner_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/value"
)

// waits is a state machine that waits Seconds, then passes its input on
// with a field added.
func waits(seconds int) string {
	return fmt.Sprintf(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":%d,"Next":"P"},"P":{"Type":"Pass","Result":"done","ResultPath":"$.p","End":true}}}`, seconds)
}

// dormantSoon waits until the runner holds n executions dormant and none
// running, for up to a minute.
func dormantSoon(t *testing.T, r *runner.Runner, n int) {
	t.Helper()
	countsSoon(t, r, 0, n)
}

// countsSoon waits until the runner holds running executions running and
// dormant dormant, for up to a minute.
func countsSoon(t *testing.T, r *runner.Runner, running, dormant int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		nr, nd := r.Counts()
		if nr == running && nd == dormant {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d running and %d dormant executions, want %d and %d", nr, nd, running, dormant)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond) // polling a condition, not ordering by time
	}
}

// TestSleepWhileParked starts an execution that waits 2 s: its driver
// falls asleep (the execution is dormant, with no driver), and wakes when
// the Wait is due to end it with the output and history of one that never
// slept.
func TestSleepWhileParked(t *testing.T) {
	r, st := newRunner(t, nil, nil)
	ctx := context.Background()
	e := execution("sleeper")
	e.Definition = waits(2)
	if err := r.Start(ctx, e, value.ObjectOf("n", value.Int(1)), ""); err != nil {
		t.Fatal(err)
	}
	dormantSoon(t, r, 1)
	done, err := r.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" || done.Output != `{"n":1,"p":"done"}` {
		t.Fatalf("the execution ended %+v, %v", done, err)
	}
	if done.Stopped.Sub(e.Started) < 2*time.Second {
		t.Errorf("it ended %v after its start, before its Wait was over", done.Stopped.Sub(e.Started))
	}
	var types []string
	steps, err := st.Steps(ctx, e.ARN)
	if err != nil {
		t.Fatal(err)
	}
	id := int64(0)
	for _, s := range steps {
		for _, ev := range s.Events {
			id++
			if ev.ID != id {
				t.Errorf("event %d has id %d", id, ev.ID)
			}
			types = append(types, ev.Type)
		}
	}
	want := "[ExecutionStarted WaitStateEntered WaitStateExited PassStateEntered PassStateExited ExecutionSucceeded]"
	if got := fmt.Sprint(types); got != want {
		t.Errorf("history %s, want %s", got, want)
	}
}

// TestStopWhileAsleep stops an execution whose driver is asleep: the stop
// wakes it and it ends ABORTED at once, not when its Wait is over.
func TestStopWhileAsleep(t *testing.T) {
	r, st := newRunner(t, nil, nil)
	ctx := context.Background()
	e := execution("stopped")
	e.Definition = waits(3600)
	if err := r.Start(ctx, e, value.NewObject(0), ""); err != nil {
		t.Fatal(err)
	}
	dormantSoon(t, r, 1)
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := r.Stop(stopCtx, e.ARN, "E", "stopped while asleep"); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetExecution(ctx, e.ARN)
	if err != nil || got.Status != "ABORTED" || got.Cause != "stopped while asleep" {
		t.Fatalf("after the stop: %+v, %v", got, err)
	}
	countsSoon(t, r, 0, 0) // its driver leaves once its end is committed
}

// TestParkedMemory parks 2,000 executions in an hour's Wait and bounds
// what each costs the heap while it waits: at most 4 KiB (issue 27), with
// its driver asleep. (The store is a SQLite file, whose page cache is
// bounded, not per execution; parked but awake, each cost about 9 KB.)
func TestParkedMemory(t *testing.T) {
	const n = 2000
	r, _ := newRunner(t, nil, nil)
	ctx := context.Background()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		e := execution(fmt.Sprint("parked-", i))
		e.Definition = waits(3600)
		e.Input = `{"i":` + fmt.Sprint(i) + `}`
		if err := r.Start(ctx, e, value.ObjectOf("i", value.Int(int64(i))), ""); err != nil {
			t.Fatal(err)
		}
	}
	dormantSoon(t, r, n)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	each := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d parked executions: %d bytes of heap each", n, each)
	if each > 4096 {
		t.Errorf("a parked execution costs %d bytes of heap, want at most 4096", each)
	}
}
