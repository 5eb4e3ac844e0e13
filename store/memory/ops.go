package memory

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stepd/stepd/store"
)

var (
	_ store.Retainer = (*Store)(nil)
	_ store.Outbox   = (*Store)(nil)
)

// DeleteEnded implements store.Retainer.
func (s *Store) DeleteEnded(ctx context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []*execution
	for _, x := range s.order {
		if !x.gone && x.e.Status != "RUNNING" && x.e.Status != "" && x.e.Stopped.Before(before) {
			old = append(old, x)
		}
	}
	sort.SliceStable(old, func(i, j int) bool { return old[i].e.Stopped.Before(old[j].e.Stopped) })
	if limit > 0 && len(old) > limit {
		old = old[:limit]
	}
	for _, x := range old {
		delete(s.execs, x.e.ARN)
		x.gone, x.steps = true, nil
		s.dropped++
		s.runs.forget(x.e.ARN)
	}
	if s.dropped > 1024 && s.dropped > len(s.order)/2 {
		s.order = slices.DeleteFunc(s.order, func(x *execution) bool { return x.gone })
		s.dropped = 0
	}
	return len(old), nil
}

// notices is the memory store's outbox.
type notices struct {
	mu   sync.Mutex
	next int64
	list []*notice // by ID
}

type notice struct {
	n   store.Notice
	due time.Time
}

// AddNotice implements store.Outbox.
func (s *Store) AddNotice(ctx context.Context, executionARN, status string, at time.Time) error {
	o := &s.notices
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.list {
		if x.n.ExecutionARN == executionARN && x.n.Status == status {
			return nil
		}
	}
	o.next++
	o.list = append(o.list, &notice{n: store.Notice{ID: o.next, ExecutionARN: executionARN, Status: status, At: at}, due: at})
	return nil
}

// TakeNotices implements store.Outbox.
func (s *Store) TakeNotices(ctx context.Context, now time.Time, hold time.Duration, limit int) ([]*store.Notice, error) {
	o := &s.notices
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*store.Notice
	for _, x := range o.list {
		if len(out) == limit {
			break
		}
		if !x.due.After(now) {
			x.due = now.Add(hold)
			n := x.n
			out = append(out, &n)
		}
	}
	return out, nil
}

// DoneNotice implements store.Outbox.
func (s *Store) DoneNotice(ctx context.Context, id int64) error {
	o := &s.notices
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = slices.DeleteFunc(o.list, func(x *notice) bool { return x.n.ID == id })
	return nil
}

// RetryNotice implements store.Outbox.
func (s *Store) RetryNotice(ctx context.Context, id int64, due time.Time) error {
	o := &s.notices
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.list {
		if x.n.ID == id {
			x.n.Attempts++
			x.due = due
		}
	}
	return nil
}
