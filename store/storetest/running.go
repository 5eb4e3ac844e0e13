package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stepd/stepd/store"
)

// running checks store.RunningScanner: every RUNNING execution, in RunningExecutions'
// order, each with the steps Steps returns (what replay reads of them), or
// only the last when it has a Wake; finished executions and other
// executions' steps are left out, and fn's error stops the scan.
func running(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	// Steps of running and finished executions interleave in commit order.
	var arns []string
	for i := range 6 {
		e := exec("m", fmt.Sprintf("r%d", i), i)
		var first *store.Step
		if i != 4 {
			first = step(e.ARN, 0, 1, 1, "RUNNING")
		}
		if err := s.CreateExecution(ctx, e, first); err != nil {
			t.Fatal(err)
		}
		arns = append(arns, e.ARN)
	}
	for seq := int64(1); seq <= 3; seq++ {
		for i, arn := range arns {
			if i == 4 || (i == 1 && seq > 2) {
				continue
			}
			status := "RUNNING"
			if seq == 3 && (i == 2 || i == 5) {
				status = "SUCCEEDED"
			}
			events := 2
			if i == 3 && seq == 2 {
				events = 0 // a step without events (a heartbeat, say)
			}
			if err := s.AppendStep(ctx, step(arn, seq, 2*seq, events, status)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := s.RunningExecutions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 {
		t.Fatalf("running: %v, want r0, r1, r3 and r4", names(want))
	}
	var got []*store.Execution
	waking := 0
	err = s.ScanRunning(ctx, func(e *store.Execution, steps []*store.Step) error {
		got = append(got, e)
		wantSteps, err := s.Steps(ctx, e.ARN)
		if err != nil {
			return err
		}
		if n := len(wantSteps); n > 0 && !wantSteps[n-1].Wake.IsZero() {
			wantSteps = wantSteps[n-1:] // it need not be rebuilt yet
			waking++
		}
		if len(steps) != len(wantSteps) {
			t.Errorf("%s: %d steps, want %d", e.Name, len(steps), len(wantSteps))
			return nil
		}
		for i := range steps {
			checkReplayStep(t, fmt.Sprintf("%s step %d", e.Name, i), steps[i], wantSteps[i])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("scanned %v, want %v", names(got), names(want))
	}
	if waking == 0 || waking == len(got) {
		t.Errorf("%d of %d executions scanned wait for a timer: the suite should have both kinds", waking, len(got))
	}
	for i := range got {
		checkExec(t, fmt.Sprintf("execution %d", i), got[i], want[i])
	}
	stop := errors.New("enough")
	calls := 0
	if err := s.ScanRunning(ctx, func(*store.Execution, []*store.Step) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a scan whose fn fails: %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// checkReplayStep reports the fields of got that differ from want among
// those store.RunningScanner promises: Seq, At, Input, Wake and the
// events' IDs.
func checkReplayStep(t *testing.T, what string, got, want *store.Step) {
	t.Helper()
	if got.ExecutionARN != want.ExecutionARN || got.Seq != want.Seq || !got.At.Equal(want.At) || !bytes.Equal(got.Input, want.Input) || !got.Wake.Equal(want.Wake) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
	if len(got.Events) != len(want.Events) {
		t.Errorf("%s: %d events, want %d", what, len(got.Events), len(want.Events))
		return
	}
	for i := range got.Events {
		if got.Events[i].ID != want.Events[i].ID {
			t.Errorf("%s: event %d has id %d, want %d", what, i, got.Events[i].ID, want.Events[i].ID)
		}
	}
}
