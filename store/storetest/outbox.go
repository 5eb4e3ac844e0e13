package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// outbox checks the notices of status changes: queued once per execution
// and status, taken when due and then held, retried later, removed.
func outbox(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	a, b := exec("ob", "a", 0).ARN, exec("ob", "b", 1).ARN
	for _, n := range []struct{ arn, status string }{{a, "RUNNING"}, {a, "RUNNING"}, {b, "RUNNING"}, {a, "SUCCEEDED"}} {
		if err := s.AddNotice(ctx, n.arn, n.status, t0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TakeNotices(ctx, t0, time.Minute, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("TakeNotices = %d notices, %v; want 3", len(got), err)
	}
	want := []string{a + " RUNNING", b + " RUNNING", a + " SUCCEEDED"}
	for i, n := range got {
		if s := n.ExecutionARN + " " + n.Status; s != want[i] || !n.At.Equal(t0) || n.Attempts != 0 {
			t.Errorf("notice %d = %s at %v, %d attempts; want %s at %v", i, s, n.At, n.Attempts, want[i], t0)
		}
	}
	// Held: not taken again until the hold ends.
	if again, err := s.TakeNotices(ctx, t0.Add(30*time.Second), time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("TakeNotices while held = %d, %v; want 0", len(again), err)
	}
	if err := s.DoneNotice(ctx, got[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryNotice(ctx, got[1].ID, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	next, err := s.TakeNotices(ctx, t0.Add(10*time.Second), time.Minute, 10)
	if err != nil || len(next) != 1 || next[0].ID != got[1].ID || next[0].Attempts != 1 {
		t.Fatalf("TakeNotices after a retry = %+v, %v; want notice %d with 1 attempt", next, err, got[1].ID)
	}
	// After the hold, what is left comes back: the retried one and the one
	// whose taker never reported.
	later, err := s.TakeNotices(ctx, t0.Add(2*time.Minute), time.Minute, 1)
	if err != nil || len(later) != 1 {
		t.Fatalf("TakeNotices (limit 1) after the hold = %d, %v; want 1", len(later), err)
	}
	if err := s.DoneNotice(ctx, got[0].ID); err != nil {
		t.Errorf("DoneNotice of a notice gone: %v", err)
	}
	// The status queued again once its notice is gone is a new notice.
	if err := s.AddNotice(ctx, a, "RUNNING", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	last, err := s.TakeNotices(ctx, t0.Add(time.Hour), time.Minute, 10)
	if err != nil || len(last) != 3 || last[2].ExecutionARN != a || last[2].Status != "RUNNING" || last[2].ID == got[0].ID {
		t.Fatalf("TakeNotices at the end = %+v, %v; want the two left and a new one", last, err)
	}
}
