package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// badTokens are pagination tokens no store issues.
var badTokens = []string{"garbage", "-1", "999999", "!!"}

// checkExec reports the fields of got that differ from want.
func checkExec(t *testing.T, what string, got, want *store.Execution) {
	t.Helper()
	g, w := *got, *want
	if !g.Started.Equal(w.Started) || !g.Stopped.Equal(w.Stopped) {
		t.Errorf("%s: started/stopped %v/%v, want %v/%v", what, g.Started, g.Stopped, w.Started, w.Stopped)
	}
	g.Started, g.Stopped, w.Started, w.Stopped = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if g != w {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// checkStep reports the fields of got that differ from want.
func checkStep(t *testing.T, what string, got, want *store.Step) {
	t.Helper()
	if got.ExecutionARN != want.ExecutionARN || got.Seq != want.Seq || !got.At.Equal(want.At) || !bytes.Equal(got.Input, want.Input) ||
		got.Status != want.Status || got.Output != want.Output || got.Error != want.Error || got.Cause != want.Cause || !got.Stopped.Equal(want.Stopped) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
	if len(got.Events) != len(want.Events) {
		t.Errorf("%s: %d events, want %d", what, len(got.Events), len(want.Events))
		return
	}
	for i := range got.Events {
		g, w := got.Events[i], want.Events[i]
		if g.ID != w.ID || g.Type != w.Type || !bytes.Equal(g.JSON, w.JSON) {
			t.Errorf("%s: event %d is %d %s %s, want %d %s %s", what, i, g.ID, g.Type, g.JSON, w.ID, w.Type, w.JSON)
		}
	}
}

// walk lists every page of size limit and returns the items' keys; it
// fails the test when a page is larger than limit or an empty page
// carries a token.
func walk[T any](t *testing.T, limit int, key func(T) string, list func(store.Page) ([]T, string, error)) []string {
	t.Helper()
	var keys []string
	p := store.Page{Limit: limit}
	for range 1000 {
		items, next, err := list(p)
		if err != nil {
			t.Fatalf("page %q (limit %d): %v", p.Token, limit, err)
		}
		if len(items) > limit {
			t.Fatalf("page %q: %d items, limit %d", p.Token, len(items), limit)
		}
		for _, it := range items {
			keys = append(keys, key(it))
		}
		if next == "" {
			return keys
		}
		if len(items) == 0 {
			t.Fatalf("page %q: no items but a next token", p.Token)
		}
		p.Token = next
	}
	t.Fatal("pagination does not end")
	return nil
}

func pagination(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	if list, next, err := s.ListStateMachines(ctx, store.Page{}); err != nil || len(list) != 0 || next != "" {
		t.Errorf("empty store: %v %q %v", list, next, err)
	}
	if list, next, err := s.ListExecutions(ctx, sm("none").ARN, "", store.Page{}); err != nil || len(list) != 0 || next != "" {
		t.Errorf("executions of an unknown machine: %v %q %v", names(list), next, err)
	}
	want := []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6"}
	for _, i := range []int{3, 6, 0, 5, 1, 4, 2} {
		if err := s.CreateStateMachine(ctx, sm(want[i])); err != nil {
			t.Fatal(err)
		}
	}
	for limit := 1; limit <= 8; limit++ {
		got := walk(t, limit, func(m *store.StateMachine) string { return m.Name }, func(p store.Page) ([]*store.StateMachine, string, error) {
			return s.ListStateMachines(ctx, p)
		})
		if !slices.Equal(got, want) {
			t.Errorf("state machines, limit %d: %v, want %v", limit, got, want)
		}
	}

	// Executions: newest first, status filter, every page size.
	var all, done []string
	for i := range 7 {
		e := exec("p", fmt.Sprintf("e%d", i), i)
		if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 1 {
			if err := s.AppendStep(ctx, step(e.ARN, 1, 2, 1, "SUCCEEDED")); err != nil {
				t.Fatal(err)
			}
			done = append([]string{e.Name}, done...)
		}
		all = append([]string{e.Name}, all...)
		o := exec("q", fmt.Sprintf("o%d", i), i)
		if err := s.CreateExecution(ctx, o, step(o.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	for limit := 1; limit <= 8; limit++ {
		for _, tc := range []struct {
			status string
			want   []string
		}{{"", all}, {"SUCCEEDED", done}, {"RUNNING", slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(done, n) })}, {"FAILED", nil}} {
			got := walk(t, limit, func(e *store.Execution) string { return e.Name }, func(p store.Page) ([]*store.Execution, string, error) {
				return s.ListExecutions(ctx, sm("p").ARN, tc.status, p)
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("executions %q, limit %d: %v, want %v", tc.status, limit, got, tc.want)
			}
		}
	}

	// The default page size is 100.
	var acts []string
	for i := range 105 {
		a := &store.Activity{ARN: fmt.Sprintf("arn:aws:states:us-east-1:1:activity:a%03d", i), Name: fmt.Sprintf("a%03d", i), Created: t0}
		if err := s.CreateActivity(ctx, a); err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a.Name)
	}
	first, next, err := s.ListActivities(ctx, store.Page{})
	if err != nil || len(first) != 100 || next == "" {
		t.Fatalf("default page: %d activities, next %q, %v", len(first), next, err)
	}
	rest, next, err := s.ListActivities(ctx, store.Page{Token: next})
	if err != nil || len(rest) != 5 || next != "" || rest[4].Name != "a104" {
		t.Fatalf("second default page: %d activities, next %q, %v", len(rest), next, err)
	}
	got := walk(t, 7, func(a *store.Activity) string { return a.Name }, func(p store.Page) ([]*store.Activity, string, error) {
		return s.ListActivities(ctx, p)
	})
	if !slices.Equal(got, acts) {
		t.Errorf("activities by 7: %v", got)
	}

	for _, tok := range badTokens {
		if _, _, err := s.ListStateMachines(ctx, store.Page{Token: tok}); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("ListStateMachines(token %q): %v, want ErrBadToken", tok, err)
		}
		if _, _, err := s.ListExecutions(ctx, sm("p").ARN, "", store.Page{Token: tok}); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("ListExecutions(token %q): %v, want ErrBadToken", tok, err)
		}
		if _, _, err := s.ListActivities(ctx, store.Page{Token: tok}); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("ListActivities(token %q): %v, want ErrBadToken", tok, err)
		}
	}
}

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
		checkExec(t, "listed", list[0], &want)
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

// concurrentMixed sends, from many goroutines at once, requests that fail
// (steps out of order, duplicate creations) among requests that succeed:
// a failing request must fail alone.
func concurrentMixed(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	const execs, stepsEach, dups = 16, 8, 8
	var wg sync.WaitGroup
	errs := make(chan error, execs+2*dups)
	for i := range execs {
		wg.Go(func() {
			e := exec("mix", fmt.Sprintf("x%d", i), i)
			if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
				errs <- err
				return
			}
			for k := int64(1); k <= stepsEach; k++ {
				if err := s.AppendStep(ctx, step(e.ARN, k+1, k+1, 1, "RUNNING")); err == nil {
					errs <- fmt.Errorf("%s: step %d accepted before step %d", e.Name, k+1, k)
					return
				}
				if err := s.AppendStep(ctx, step(e.ARN, k, k+1, 1, "RUNNING")); err != nil {
					errs <- fmt.Errorf("%s: step %d: %w", e.Name, k, err)
					return
				}
			}
		})
	}
	var created, createdSM sync.Map
	for i := range dups {
		wg.Go(func() {
			e := exec("mix", "dup", 100+i)
			err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING"))
			if err == nil {
				created.Store(i, true)
			} else if !errors.Is(err, store.ErrExists) {
				errs <- fmt.Errorf("duplicate execution: %w", err)
			}
		})
		wg.Go(func() {
			err := s.CreateStateMachine(ctx, sm("mix"))
			if err == nil {
				createdSM.Store(i, true)
			} else if !errors.Is(err, store.ErrExists) {
				errs <- fmt.Errorf("duplicate state machine: %w", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := func(m *sync.Map) int {
		n := 0
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := count(&created); n != 1 {
		t.Errorf("%d concurrent creations of one execution succeeded, want 1", n)
	}
	if n := count(&createdSM); n != 1 {
		t.Errorf("%d concurrent creations of one state machine succeeded, want 1", n)
	}
	for i := range execs {
		steps, err := s.Steps(ctx, exec("mix", fmt.Sprintf("x%d", i), i).ARN)
		if err != nil || len(steps) != stepsEach+1 {
			t.Fatalf("execution %d: %d steps, %v", i, len(steps), err)
		}
		for k, st := range steps {
			if st.Seq != int64(k) || len(st.Events) != 1 || st.Events[0].ID != int64(k)+1 {
				t.Errorf("execution %d step %d: %+v", i, k, st)
			}
		}
	}
	if list, _, err := s.ListExecutions(ctx, sm("mix").ARN, "", store.Page{Limit: 1000}); err != nil || len(list) != execs+1 {
		t.Errorf("listed %d executions, want %d: %v", len(list), execs+1, err)
	}
}
