package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stepd/stepd/store"
)

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
