// Package storetest is the shared suite that every store.Store backend
// must pass: run Run from the backend's tests (the whole store.Store:
// with versions, Map Runs, retention, the outbox, schedules, eager starts
// and the scan of running executions), RunDurable for backends
// that keep data across a close and reopen, and RunShared for a
// store.Shared (fencing, claims, messages, activity tasks). FsyncRate
// measures the disk for benchmarks.
//
// It imports only store, and must not import a backend (the backends'
// tests import it) nor anything above.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func sm(name string) *store.StateMachine {
	return &store.StateMachine{ARN: "arn:aws:states:us-east-1:1:stateMachine:" + name, Name: name, Type: "STANDARD",
		Definition: `{"StartAt":"P"}`, RoleARN: "arn:aws:iam::1:role/r", Created: t0, Updated: t0, RevisionID: "r1", Tags: map[string]string{"k": "v"}}
}

func exec(smName, name string, i int) *store.Execution {
	return &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:" + smName + ":" + name, Name: name,
		StateMachineARN: sm(smName).ARN, StateMachineName: smName, Definition: `{"StartAt":"P"}`, Type: "STANDARD",
		Input: `{"i":` + fmt.Sprint(i) + `}`, Status: "RUNNING", Started: t0.Add(time.Duration(i) * time.Second)}
}

func step(arn string, seq int64, firstID int64, n int, status string) *store.Step {
	st := &store.Step{ExecutionARN: arn, Seq: seq, At: t0.Add(time.Duration(seq) * time.Millisecond), Status: status}
	if seq > 0 {
		st.Input = []byte(fmt.Sprintf(`{"kind":2,"id":%d}`, seq))
	}
	for i := 0; i < n; i++ {
		id := firstID + int64(i)
		st.Events = append(st.Events, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(fmt.Sprintf(`{"id":%d}`, id))})
	}
	if status != "RUNNING" {
		st.Output, st.Stopped = `{"done":true}`, st.At
	} else if seq%2 == 1 {
		st.Wake = st.At.Add(time.Hour + 123*time.Nanosecond) // waits for a timer
	}
	return st
}

// Run runs the suite; open returns a new, empty store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("StateMachines", func(t *testing.T) { stateMachines(t, open(t)) })
	t.Run("Executions", func(t *testing.T) { executions(t, open(t)) })
	t.Run("Events", func(t *testing.T) { events(t, open(t)) })
	t.Run("Activities", func(t *testing.T) { activities(t, open(t)) })
	t.Run("ConcurrentSteps", func(t *testing.T) { concurrentSteps(t, open(t)) })
	t.Run("Pagination", func(t *testing.T) { pagination(t, open(t)) })
	t.Run("Summary", func(t *testing.T) { summary(t, open(t)) })
	t.Run("ConcurrentMixed", func(t *testing.T) { concurrentMixed(t, open(t)) })
	t.Run("CallerBuffers", func(t *testing.T) { callerBuffers(t, open(t)) })
	t.Run("Running", func(t *testing.T) { running(t, open(t)) })
	t.Run("Secret", func(t *testing.T) { secret(t, open(t), open(t)) })
	t.Run("Versions", func(t *testing.T) { versions(t, open(t)) })
	t.Run("ConcurrentPublish", func(t *testing.T) { concurrentPublish(t, open(t)) })
	t.Run("Logging", func(t *testing.T) { logging(t, open(t)) })
	t.Run("Retention", func(t *testing.T) { retention(t, open(t)) })
	t.Run("Outbox", func(t *testing.T) { outbox(t, open(t)) })
	t.Run("MapRuns", func(t *testing.T) { mapRuns(t, open(t), nil) })
	t.Run("Redriven", func(t *testing.T) { redriven(t, open(t)) })
	t.Run("Schedules", func(t *testing.T) { schedules(t, open(t)) })
	t.Run("Eager", func(t *testing.T) { eager(t, open(t)) })
	t.Run("Text", func(t *testing.T) { text(t, open(t)) })
	t.Run("Definitions", func(t *testing.T) { definitions(t, open(t)) })
}

// secret checks that a store's secret is SecretSize bytes, the same on
// every call (also from concurrent first calls), not all zero, and that two
// stores have different ones.
func secret(t *testing.T, s, other store.Store) {
	ctx := context.Background()
	defer s.Close()
	defer other.Close()
	got := make([][]byte, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = s.Secret(ctx) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("Secret: %v", errs[i])
		}
		if len(got[i]) != store.SecretSize || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("Secret call %d: %x, call 0: %x", i, got[i], got[0])
		}
	}
	if bytes.Equal(got[0], make([]byte, store.SecretSize)) {
		t.Fatal("the secret is all zero")
	}
	got[0][0] ^= 0xff // a caller changing its copy changes nothing
	if again, err := s.Secret(ctx); err != nil || !bytes.Equal(again, got[1]) {
		t.Fatalf("Secret after a caller changed its copy: %x %v, want %x", again, err, got[1])
	}
	if o, err := other.Secret(ctx); err != nil || bytes.Equal(o, got[1]) {
		t.Fatalf("two stores share a secret: %x %v", o, err)
	}
}

// callerBuffers checks that a store keeps no reference to a step's bytes:
// the service reuses its buffers once a call returns.
func callerBuffers(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	e := exec("m", "b", 0)
	first, next := step(e.ARN, 0, 1, 2, "RUNNING"), step(e.ARN, 1, 3, 2, "RUNNING")
	if err := s.CreateExecution(ctx, e, first); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, next); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*store.Step{first, next} {
		clear(st.Input)
		for _, ev := range st.Events {
			clear(ev.JSON)
		}
	}
	evs, err := s.Events(ctx, e.ARN, 0, 10, false)
	if err != nil || len(evs) != 4 {
		t.Fatalf("Events = %d events, %v", len(evs), err)
	}
	for _, ev := range evs {
		if want := fmt.Sprintf(`{"id":%d}`, ev.ID); string(ev.JSON) != want {
			t.Errorf("event %d = %q after the caller reused its buffer, want %s", ev.ID, ev.JSON, want)
		}
	}
	steps, err := s.Steps(ctx, e.ARN)
	if err != nil || len(steps) != 2 || string(steps[1].Input) != `{"kind":2,"id":1}` {
		t.Errorf("Steps after the caller reused its buffers: %v %v", steps, err)
	}
}

func stateMachines(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	for _, name := range []string{"c", "a", "b"} {
		if err := s.CreateStateMachine(ctx, sm(name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateStateMachine(ctx, sm("a")); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate: %v, want ErrExists", err)
	}
	got, err := s.GetStateMachine(ctx, sm("b").ARN)
	if err != nil || got.Name != "b" || got.Tags["k"] != "v" || !got.Created.Equal(t0) || got.Definition != `{"StartAt":"P"}` {
		t.Fatalf("Get: %+v %v", got, err)
	}
	// What Get returns is the caller's: changing it changes nothing stored.
	got.Tags["k"], got.Definition = "changed", "{}"
	if g, err := s.GetStateMachine(ctx, got.ARN); err != nil || g.Tags["k"] != "v" || g.Definition != `{"StartAt":"P"}` {
		t.Fatalf("Get after changing what an earlier Get returned: %+v %v", g, err)
	}
	got.Definition, got.RevisionID, got.Tags = `{"StartAt":"Q"}`, "r2", map[string]string{"x": "y"}
	if err := s.UpdateStateMachine(ctx, got); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.GetStateMachine(ctx, got.ARN); g.Definition != `{"StartAt":"Q"}` || g.RevisionID != "r2" || g.Tags["x"] != "y" {
		t.Errorf("after update: %+v", g)
	}
	if err := s.UpdateStateMachine(ctx, sm("zz")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update missing: %v", err)
	}
	page1, next, err := s.ListStateMachines(ctx, store.Page{Limit: 2})
	if err != nil || len(page1) != 2 || page1[0].Name != "a" || page1[1].Name != "b" || next == "" {
		t.Fatalf("page 1: %v %q %v", page1, next, err)
	}
	page2, next2, err := s.ListStateMachines(ctx, store.Page{Token: next, Limit: 2})
	if err != nil || len(page2) != 1 || page2[0].Name != "c" || next2 != "" {
		t.Fatalf("page 2: %v %q %v", page2, next2, err)
	}
	if _, _, err := s.ListStateMachines(ctx, store.Page{Token: "garbage"}); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("bad token: %v", err)
	}
	if _, err := s.GetStateMachine(ctx, sm("a").ARN); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteStateMachine(ctx, sm("a").ARN); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetStateMachine(ctx, sm("a").ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if err := s.DeleteStateMachine(ctx, sm("a").ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete missing: %v", err)
	}
}

func executions(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	for i := 0; i < 5; i++ {
		e := exec("m", fmt.Sprintf("e%d", i), i)
		if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 2, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	other := exec("n", "x", 9)
	if err := s.CreateExecution(ctx, other, step(other.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateExecution(ctx, exec("m", "e1", 1), nil); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate: %v", err)
	}
	e3 := exec("m", "e3", 3).ARN
	if err := s.AppendStep(ctx, step(e3, 2, 3, 1, "RUNNING")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a step out of order: %v, want ErrConflict", err)
	}
	if err := s.AppendStep(ctx, step(e3, 1, 3, 2, "SUCCEEDED")); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetExecution(ctx, e3)
	if err != nil || got.Status != "SUCCEEDED" || got.Output != `{"done":true}` || got.Stopped.IsZero() || got.Input != `{"i":3}` || !got.Started.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("after step: %+v %v", got, err)
	}
	if _, err := s.GetExecution(ctx, "arn:aws:states:us-east-1:1:execution:m:none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	list, next, err := s.ListExecutions(ctx, sm("m").ARN, "", store.Page{Limit: 3})
	if err != nil || len(list) != 3 || list[0].Name != "e4" || list[2].Name != "e2" || next == "" {
		t.Fatalf("list newest first: %v %q %v", names(list), next, err)
	}
	rest, next2, err := s.ListExecutions(ctx, sm("m").ARN, "", store.Page{Token: next, Limit: 3})
	if err != nil || len(rest) != 2 || rest[1].Name != "e0" || next2 != "" {
		t.Fatalf("second page: %v %q %v", names(rest), next2, err)
	}
	done, _, err := s.ListExecutions(ctx, sm("m").ARN, "SUCCEEDED", store.Page{})
	if err != nil || len(done) != 1 || done[0].Name != "e3" {
		t.Fatalf("status filter: %v %v", names(done), err)
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil || len(running) != 5 {
		t.Fatalf("running: %v %v", names(running), err)
	}
	steps, err := s.Steps(ctx, e3)
	if err != nil || len(steps) != 2 || steps[1].Seq != 1 || string(steps[1].Input) != `{"kind":2,"id":1}` || len(steps[1].Events) != 2 || steps[1].Events[1].ID != 4 || !steps[1].At.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("steps: %+v %v", steps, err)
	}
}

func names(list []*store.Execution) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Name)
	}
	return out
}

func events(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	e := exec("m", "h", 0)
	if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 3, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	// Steps with no events (a result ignored, a timer without effect)
	// sit between steps with events, and the last step has none.
	for seq, n := range []int{0, 4, 0, 1, 0} {
		first := int64(4)
		if seq >= 2 {
			first = 8
		}
		if err := s.AppendStep(ctx, step(e.ARN, int64(seq+1), first, n, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	const total = 8
	ids := func(evs []store.Event) string {
		return fmt.Sprint(func() []int64 {
			var o []int64
			for _, e := range evs {
				o = append(o, e.ID)
			}
			return o
		}())
	}
	// want lists the ids a page holds: after the event with id after (or
	// before it, reverse; 0 means from the end), at most limit of them.
	want := func(after int64, limit int, reverse bool) string {
		var o []int64
		for i := int64(1); i <= total; i++ {
			id := i
			if reverse {
				id = total + 1 - i
			}
			if len(o) < limit && (!reverse && id > after || reverse && (after == 0 || id < after)) {
				o = append(o, id)
			}
		}
		return fmt.Sprint(o)
	}
	for after := int64(0); after <= total+1; after++ {
		for limit := 1; limit <= total+1; limit++ {
			for _, reverse := range []bool{false, true} {
				evs, err := s.Events(ctx, e.ARN, after, limit, reverse)
				if w := want(after, limit, reverse); err != nil || ids(evs) != w {
					t.Errorf("Events(after %d, limit %d, reverse %v) = %s %v, want %s", after, limit, reverse, ids(evs), err, w)
				}
			}
		}
	}
	if evs, err := s.Events(ctx, e.ARN, 0, 0, false); err != nil || len(evs) != total {
		t.Errorf("Events with limit 0 (the default page) = %d events %v, want %d", len(evs), err, total)
	}
	evs, _ := s.Events(ctx, e.ARN, 0, 1, false)
	if string(evs[0].JSON) != `{"id":1}` || evs[0].Type != "PassStateEntered" {
		t.Errorf("event content: %+v", evs[0])
	}
	if _, err := s.Events(ctx, "arn:aws:states:us-east-1:1:execution:m:none", 0, 10, false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("events of a missing execution: %v", err)
	}
}

func activities(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	for _, n := range []string{"b", "a"} {
		if err := s.CreateActivity(ctx, &store.Activity{ARN: "arn:aws:states:us-east-1:1:activity:" + n, Name: n, Created: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateActivity(ctx, &store.Activity{ARN: "arn:aws:states:us-east-1:1:activity:a", Name: "a"}); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate: %v", err)
	}
	list, _, err := s.ListActivities(ctx, store.Page{})
	if err != nil || len(list) != 2 || list[0].Name != "a" || !list[0].Created.Equal(t0) {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := s.DeleteActivity(ctx, "arn:aws:states:us-east-1:1:activity:a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetActivity(ctx, "arn:aws:states:us-east-1:1:activity:a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// concurrentSteps appends steps to many executions from many goroutines.
func concurrentSteps(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	const execs, stepsEach = 20, 10
	var wg sync.WaitGroup
	errs := make(chan error, execs)
	for i := 0; i < execs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			e := exec("c", fmt.Sprintf("x%d", i), i)
			if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
				errs <- err
				return
			}
			for k := int64(1); k <= stepsEach; k++ {
				status := "RUNNING"
				if k == stepsEach {
					status = "SUCCEEDED"
				}
				if err := s.AppendStep(ctx, step(e.ARN, k, k+1, 1, status)); err != nil {
					errs <- err
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	running, _ := s.RunningExecutions(ctx)
	if len(running) != 0 {
		t.Errorf("%d executions still running", len(running))
	}
	for i := 0; i < execs; i++ {
		evs, err := s.Events(ctx, exec("c", fmt.Sprintf("x%d", i), i).ARN, 0, 1000, false)
		if err != nil || len(evs) != stepsEach+1 {
			t.Fatalf("execution %d: %d events, %v", i, len(evs), err)
		}
	}
}

// RunDurable checks that data survives closing and reopening the store in
// dir; open opens the store in a directory.
func RunDurable(t *testing.T, open func(t *testing.T, dir string) store.Store) {
	t.Run("Versions", func(t *testing.T) { durableVersions(t, open) })
	t.Run("MapRuns", func(t *testing.T) {
		dir := t.TempDir()
		mapRuns(t, open(t, dir), func() store.Store { return open(t, dir) })
	})
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	secret, err := s.Secret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := sm("d")
	if err := s.CreateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateActivity(ctx, &store.Activity{ARN: "arn:aws:states:us-east-1:1:activity:w", Name: "w", Created: t0}); err != nil {
		t.Fatal(err)
	}
	e := exec("d", "e", 1)
	e.RoleARN, e.TestCase = "arn:aws:iam::1:role/r", "T"
	done := exec("d", "done", 2)
	var steps, doneSteps []*store.Step
	steps = append(steps, step(e.ARN, 0, 1, 2, "RUNNING"), step(e.ARN, 1, 3, 2, "RUNNING"))
	doneSteps = append(doneSteps, step(done.ARN, 0, 1, 1, "RUNNING"), step(done.ARN, 1, 2, 2, "SUCCEEDED"))
	if err := s.CreateExecution(ctx, e, steps[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateExecution(ctx, done, doneSteps[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, steps[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, doneSteps[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, dir)
	if again, err := s.Secret(ctx); err != nil || !bytes.Equal(again, secret) {
		t.Fatalf("the secret after reopen: %x %v, want %x", again, err, secret)
	}
	got, err := s.GetStateMachine(ctx, m.ARN)
	if err != nil || got.Name != m.Name || got.Definition != m.Definition || got.RoleARN != m.RoleARN || got.RevisionID != m.RevisionID ||
		!got.Created.Equal(m.Created) || !got.Updated.Equal(m.Updated) || len(got.Tags) != 1 || got.Tags["k"] != "v" {
		t.Fatalf("state machine after reopen: %+v %v", got, err)
	}
	if a, err := s.GetActivity(ctx, "arn:aws:states:us-east-1:1:activity:w"); err != nil || a.Name != "w" || !a.Created.Equal(t0) {
		t.Fatalf("activity after reopen: %+v %v", a, err)
	}
	running, err := s.RunningExecutions(ctx)
	if err != nil || len(running) != 1 {
		t.Fatalf("running after reopen: %v %v", names(running), err)
	}
	checkExec(t, "running execution after reopen", running[0], e)
	wantDone := *done
	wantDone.Status, wantDone.Output, wantDone.Stopped = "SUCCEEDED", doneSteps[1].Output, doneSteps[1].Stopped
	if g, err := s.GetExecution(ctx, done.ARN); err != nil {
		t.Fatal(err)
	} else {
		checkExec(t, "ended execution after reopen", g, &wantDone)
	}
	if list, _, err := s.ListExecutions(ctx, m.ARN, "", store.Page{}); err != nil || fmt.Sprint(names(list)) != "[done e]" {
		t.Errorf("list after reopen: %v %v", names(list), err)
	}
	for arn, want := range map[string][]*store.Step{e.ARN: steps, done.ARN: doneSteps} {
		got, err := s.Steps(ctx, arn)
		if err != nil || len(got) != len(want) {
			t.Fatalf("steps of %s after reopen: %d %v", arn, len(got), err)
		}
		for i := range want {
			checkStep(t, fmt.Sprintf("step %d of %s after reopen", i, arn), got[i], want[i])
		}
	}
	if evs, err := s.Events(ctx, e.ARN, 2, 10, false); err != nil || len(evs) != 2 || evs[0].ID != 3 || string(evs[1].JSON) != `{"id":4}` {
		t.Errorf("events after reopen: %+v %v", evs, err)
	}
	if err := s.AppendStep(ctx, step(e.ARN, 1, 5, 1, "SUCCEEDED")); err == nil {
		t.Error("after reopen, a step with a committed number was accepted")
	}
	last := step(e.ARN, 2, 5, 1, "SUCCEEDED")
	if err := s.AppendStep(ctx, last); err != nil {
		t.Fatalf("append after reopen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, dir)
	defer s.Close()
	if running, err := s.RunningExecutions(ctx); err != nil || len(running) != 0 {
		t.Errorf("running after the second reopen: %v %v", names(running), err)
	}
	if got, err := s.Steps(ctx, e.ARN); err != nil || len(got) != 3 {
		t.Fatalf("steps after the second reopen: %d %v", len(got), err)
	} else {
		checkStep(t, "last step after the second reopen", got[2], last)
	}
}

// logging checks that a state machine's loggingConfiguration is kept by
// Create and Update.
func logging(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	m := sm("logged")
	m.Logging = `{"level":"ALL"}`
	if err := s.CreateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetStateMachine(ctx, m.ARN); err != nil || got.Logging != m.Logging {
		t.Fatalf("after create: logging %q, %v; want %q", got.Logging, err, m.Logging)
	}
	m.Logging = ""
	if err := s.UpdateStateMachine(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetStateMachine(ctx, m.ARN); err != nil || got.Logging != "" {
		t.Fatalf("after update: logging %q, %v; want none", got.Logging, err)
	}
}
