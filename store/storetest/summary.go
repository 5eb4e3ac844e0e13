package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// summary checks that every field of executions and steps round-trips and
// that AppendStep updates the execution's summary.
func summary(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()

	m := sm("full")
	if err := s.CreateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Tags["k"] = "changed by the caller"
	got, err := s.GetStateMachine(ctx, m.ARN)
	if err != nil {
		t.Fatal(err)
	}
	if got.ARN != m.ARN || got.Name != "full" || got.Type != "STANDARD" || got.RoleARN != m.RoleARN || !got.Updated.Equal(t0) || got.RevisionID != "r1" || len(got.Tags) != 1 || got.Tags["k"] != "v" {
		t.Errorf("state machine: %+v", got)
	}
	got.Tags["k"] = "changed by a reader"
	if again, _ := s.GetStateMachine(ctx, m.ARN); again.Tags["k"] != "v" {
		t.Errorf("a reader's change to tags reached the store: %v", again.Tags)
	}
	got.Tags, got.Updated, got.RoleARN = nil, t0.Add(time.Hour), "arn:aws:iam::1:role/other"
	if err := s.UpdateStateMachine(ctx, got); err != nil {
		t.Fatal(err)
	}
	if u, err := s.GetStateMachine(ctx, m.ARN); err != nil || len(u.Tags) != 0 || !u.Updated.Equal(t0.Add(time.Hour)) || u.RoleARN != "arn:aws:iam::1:role/other" {
		t.Errorf("after update: %+v %v", u, err)
	}

	e := exec("full", "f", 4)
	e.Type, e.RoleARN, e.TestCase, e.Definition = "EXPRESS", "arn:aws:iam::1:role/x", "HappyPath", `{"StartAt":"Z","States":{}}`
	e.Input = `{"a":[1,2,{"b":"\u00e9"}]}`
	first := step(e.ARN, 0, 1, 2, "RUNNING")
	if err := s.CreateExecution(ctx, e, first); err != nil {
		t.Fatal(err)
	}
	if g, err := s.GetExecution(ctx, e.ARN); err != nil {
		t.Fatal(err)
	} else {
		checkExec(t, "created", g, e)
	}
	if err := s.AppendStep(ctx, step("arn:aws:states:us-east-1:1:execution:full:none", 1, 3, 1, "RUNNING")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("step of a missing execution: %v, want ErrNotFound", err)
	}
	second := step(e.ARN, 1, 3, 1, "RUNNING")
	if err := s.AppendStep(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, step(e.ARN, 1, 4, 1, "RUNNING")); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second step 1: %v, want an error other than ErrNotFound", err)
	}
	if err := s.AppendStep(ctx, step(e.ARN, 0, 4, 1, "RUNNING")); err == nil {
		t.Error("a second step 0 was accepted")
	}
	if running, err := s.RunningExecutions(ctx); err != nil || len(running) != 1 {
		t.Fatalf("running: %v %v", names(running), err)
	} else {
		checkExec(t, "running", running[0], e)
	}
	third := step(e.ARN, 2, 4, 3, "FAILED")
	third.Output, third.Error, third.Cause = "", "States.TaskFailed", "boom \"quoted\"\n"
	third.Input = []byte{0, 1, 2, 0xff, 0xfe}
	if err := s.AppendStep(ctx, third); err != nil {
		t.Fatal(err)
	}
	want := *e
	want.Status, want.Error, want.Cause, want.Stopped = "FAILED", third.Error, third.Cause, third.Stopped
	if g, err := s.GetExecution(ctx, e.ARN); err != nil {
		t.Fatal(err)
	} else {
		checkExec(t, "after the failing step", g, &want)
	}
	if running, err := s.RunningExecutions(ctx); err != nil || len(running) != 0 {
		t.Errorf("running after the end: %v %v", names(running), err)
	}
	if list, _, err := s.ListExecutions(ctx, m.ARN, "FAILED", store.Page{}); err != nil || len(list) != 1 {
		t.Errorf("list FAILED: %v %v", names(list), err)
	} else {
		checkListed(t, "listed", list[0], &want)
	}
	steps, err := s.Steps(ctx, e.ARN)
	if err != nil || len(steps) != 3 {
		t.Fatalf("steps: %d, %v", len(steps), err)
	}
	if len(steps[0].Input) != 0 {
		t.Errorf("step 0 input %q, want empty", steps[0].Input)
	}
	for i, w := range []*store.Step{first, second, third} {
		checkStep(t, fmt.Sprintf("step %d", i), steps[i], w)
	}
	evs, err := s.Events(ctx, e.ARN, 0, 0, false)
	if err != nil || len(evs) != 6 {
		t.Fatalf("events: %d %v", len(evs), err)
	}
	wantEvs := slices.Concat(first.Events, second.Events, third.Events)
	for i := range evs {
		if evs[i].ID != wantEvs[i].ID || evs[i].Type != wantEvs[i].Type || !bytes.Equal(evs[i].JSON, wantEvs[i].JSON) {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], wantEvs[i])
		}
	}
	if _, err := s.Steps(ctx, "arn:aws:states:us-east-1:1:execution:full:none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("steps of a missing execution: %v, want ErrNotFound", err)
	}
	if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); !errors.Is(err, store.ErrExists) {
		t.Errorf("create again: %v, want ErrExists", err)
	}
	if steps, _ := s.Steps(ctx, e.ARN); len(steps) != 3 {
		t.Errorf("a refused create changed the steps: %d", len(steps))
	}
}
