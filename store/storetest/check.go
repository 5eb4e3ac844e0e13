package storetest

import (
	"bytes"
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

// checkListed reports the summary fields of a listed execution that differ
// from want (ListExecutions may leave the others empty).
func checkListed(t *testing.T, what string, got, want *store.Execution) {
	t.Helper()
	s := store.Execution{ARN: want.ARN, Name: want.Name, StateMachineARN: want.StateMachineARN,
		StateMachineName: want.StateMachineName, Type: want.Type, Status: want.Status, Started: want.Started, Stopped: want.Stopped}
	g := store.Execution{ARN: got.ARN, Name: got.Name, StateMachineARN: got.StateMachineARN,
		StateMachineName: got.StateMachineName, Type: got.Type, Status: got.Status, Started: got.Started, Stopped: got.Stopped}
	checkExec(t, what, &g, &s)
}

// checkStep reports the fields of got that differ from want.
func checkStep(t *testing.T, what string, got, want *store.Step) {
	t.Helper()
	if got.ExecutionARN != want.ExecutionARN || got.Seq != want.Seq || !got.At.Equal(want.At) || !bytes.Equal(got.Input, want.Input) ||
		got.Status != want.Status || got.Output != want.Output || got.Error != want.Error || got.Cause != want.Cause || !got.Stopped.Equal(want.Stopped) ||
		!got.Wake.Equal(want.Wake) {
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
