package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// schedules checks store.Schedules.
func schedules(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	mk := func(group, name string, next time.Time) *store.Schedule {
		return &store.Schedule{Group: group, Name: name, State: "ENABLED", Doc: []byte(`{"n":"` + name + `"}`), Next: next}
	}
	a := mk("default", "a", t0)
	if err := s.CreateSchedule(ctx, a); err != nil || a.Version != 1 {
		t.Fatalf("CreateSchedule: %v, version %d", err, a.Version)
	}
	if err := s.CreateSchedule(ctx, mk("default", "a", t0)); !errors.Is(err, store.ErrExists) {
		t.Fatalf("CreateSchedule again: %v, want ErrExists", err)
	}
	if err := s.CreateSchedule(ctx, mk("other", "a", time.Time{})); err != nil {
		t.Fatalf("CreateSchedule in another group: %v", err)
	}
	got, err := s.GetSchedule(ctx, "default", "a")
	if err != nil || string(got.Doc) != `{"n":"a"}` || !got.Next.Equal(t0) || got.Version != 1 || got.State != "ENABLED" {
		t.Fatalf("GetSchedule: %+v, %v", got, err)
	}
	if _, err := s.GetSchedule(ctx, "default", "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetSchedule of a missing one: %v", err)
	}
	got.Doc, got.State = []byte(`{"v":2}`), "DISABLED"
	if err := s.PutSchedule(ctx, got); err != nil || got.Version != 2 {
		t.Fatalf("PutSchedule: %v, version %d", err, got.Version)
	}
	stale := *got
	stale.Version = 1
	if err := s.PutSchedule(ctx, &stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("PutSchedule of a stale version: %v, want ErrConflict", err)
	}
	if err := s.PutSchedule(ctx, mk("default", "missing", t0)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("PutSchedule of a missing one: %v, want ErrNotFound", err)
	}
	if got, _ := s.GetSchedule(ctx, "default", "a"); string(got.Doc) != `{"v":2}` || got.State != "DISABLED" {
		t.Fatalf("after PutSchedule: %+v", got)
	}
	if err := s.DeleteSchedule(ctx, "default", "a", 1); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("DeleteSchedule of a stale version: %v, want ErrConflict", err)
	}
	if err := s.DeleteSchedule(ctx, "default", "a", 2); err != nil {
		t.Fatalf("DeleteSchedule: %v", err)
	}
	if err := s.DeleteSchedule(ctx, "default", "a", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("DeleteSchedule again: %v, want ErrNotFound", err)
	}

	// Listing: by name, filtered, in pages.
	for i := range 7 {
		sc := mk("default", fmt.Sprintf("p-%d", i), time.Time{})
		if i%2 == 1 {
			sc.State = "DISABLED"
		}
		if err := s.CreateSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	tok := ""
	for {
		list, next, err := s.ListSchedules(ctx, "default", "p-", "", store.Page{Token: tok, Limit: 3})
		if err != nil {
			t.Fatalf("ListSchedules: %v", err)
		}
		for _, sc := range list {
			names = append(names, sc.Name)
		}
		if next == "" {
			break
		}
		tok = next
	}
	if fmt.Sprint(names) != "[p-0 p-1 p-2 p-3 p-4 p-5 p-6]" {
		t.Fatalf("ListSchedules pages: %v", names)
	}
	list, _, err := s.ListSchedules(ctx, "", "", "DISABLED", store.Page{})
	if err != nil || len(list) != 3 {
		t.Fatalf("ListSchedules DISABLED: %d, %v", len(list), err)
	}
	list, _, err = s.ListSchedules(ctx, "", "a", "", store.Page{})
	if err != nil || len(list) != 1 || list[0].Group != "other" {
		t.Fatalf("ListSchedules of all groups: %v, %v", list, err)
	}
	if _, _, err := s.ListSchedules(ctx, "default", "q-", "", store.Page{Token: tok}); !errors.Is(err, store.ErrBadToken) {
		t.Fatalf("ListSchedules with another list's token: %v, want ErrBadToken", err)
	}

	// Claims: due ones only, once until the claim ends or the schedule is
	// written.
	for i := range 20 {
		if err := s.CreateSchedule(ctx, mk("due", fmt.Sprintf("d-%02d", i), t0.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(9 * time.Second) // d-00 … d-09 are due
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				got, err := s.ClaimSchedules(ctx, now, now.Add(time.Minute), 2)
				if err != nil {
					t.Errorf("ClaimSchedules: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, sc := range got {
					seen[sc.Name]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 10 {
		t.Fatalf("claimed %d schedules, want the 10 due: %v", len(seen), seen)
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", name, n)
		}
	}
	d0, _ := s.GetSchedule(ctx, "due", "d-00")
	d0.Next = time.Time{}
	if err := s.PutSchedule(ctx, d0); err != nil {
		t.Fatal(err)
	}
	d1, _ := s.GetSchedule(ctx, "due", "d-01")
	if err := s.PutSchedule(ctx, d1); err != nil { // still due: the claim ends with the write
		t.Fatal(err)
	}
	got2, err := s.ClaimSchedules(ctx, now.Add(time.Second), now.Add(time.Minute), 100)
	if err != nil || fmt.Sprint(names0(got2)) != "[d-01 d-10]" {
		t.Fatalf("ClaimSchedules after a write: %v, %v", names0(got2), err)
	}
	// After the claims end, the schedules not written are claimed again.
	got3, err := s.ClaimSchedules(ctx, now.Add(2*time.Minute), now.Add(3*time.Minute), 100)
	if err != nil || len(got3) != 19 {
		t.Fatalf("ClaimSchedules after the claims ended: %d %v, %v", len(got3), names0(got3), err)
	}
}

func names0(list []*store.Schedule) []string {
	var out []string
	for _, sc := range list {
		out = append(out, sc.Name)
	}
	slices.Sort(out)
	return out
}
