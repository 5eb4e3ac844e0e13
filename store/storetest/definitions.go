package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stepd/stepd/store"
)

// definitions checks that every execution reads back the definition it was
// created with, however the backend keeps it: several executions of one
// definition, others of another, one with none, a large one and one with
// escapes and characters outside ASCII; through GetExecution,
// RunningExecutions and ScanRunning, after a refused duplicate and after
// the state machine's definition changed.
func definitions(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	large := `{"Comment":"` + strings.Repeat("ok ", 70000) + `","StartAt":"P"}`
	defs := []string{`{"StartAt":"P"}`, `{"StartAt":"Q"}`, `{"StartAt":"P"}`, "", large, `{"StartAt":"Ü","Comment":"\u0000 é \" \\"}`, large, `{"StartAt":"Q"}`}
	var want []*store.Execution
	for i, d := range defs {
		e := exec("defs", fmt.Sprintf("d%d", i), i)
		e.Definition = d
		var first *store.Step
		if i%2 == 0 {
			first = step(e.ARN, 0, 1, 1, "RUNNING")
		}
		if err := s.CreateExecution(ctx, e, first); err != nil {
			t.Fatalf("create %s: %v", e.Name, err)
		}
		want = append(want, e)
	}
	dup := exec("defs", "d0", 0)
	dup.Definition = `{"StartAt":"other"}`
	if err := s.CreateExecution(ctx, dup, nil); err == nil {
		t.Fatal("a duplicate execution was created")
	}
	byARN := map[string]*store.Execution{}
	for _, e := range want {
		byARN[e.ARN] = e
		got, err := s.GetExecution(ctx, e.ARN)
		if err != nil {
			t.Fatal(err)
		}
		if got.Definition != e.Definition {
			t.Errorf("GetExecution %s: definition of %d bytes %.40q, want %d bytes %.40q", e.Name, len(got.Definition), got.Definition, len(e.Definition), e.Definition)
		}
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(running) != len(want) {
		t.Fatalf("RunningExecutions: %d, want %d", len(running), len(want))
	}
	for _, got := range running {
		if w := byARN[got.ARN]; w == nil || got.Definition != w.Definition {
			t.Errorf("RunningExecutions %s: definition %.40q", got.Name, got.Definition)
		}
	}
	if rs, ok := s.(store.RunningScanner); ok {
		n := 0
		if err := rs.ScanRunning(ctx, func(got *store.Execution, _ []*store.Step) error {
			n++
			if w := byARN[got.ARN]; w == nil || got.Definition != w.Definition {
				t.Errorf("ScanRunning %s: definition %.40q", got.Name, got.Definition)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != len(want) {
			t.Errorf("ScanRunning: %d executions, want %d", n, len(want))
		}
	}
	// The state machine's new definition is not its executions'.
	m := sm("defs")
	if err := s.CreateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Definition, m.RevisionID = `{"StartAt":"R"}`, "r2"
	if err := s.UpdateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetExecution(ctx, want[0].ARN); err != nil || got.Definition != want[0].Definition {
		t.Errorf("after the update: %v %.40q", err, got.Definition)
	}
}
