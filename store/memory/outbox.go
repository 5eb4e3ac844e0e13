package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/stepd/stepd/store"
)

// notices is the memory store's outbox; its methods are the store's
// store.Outbox.
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
func (o *notices) AddNotice(ctx context.Context, executionARN, status string, at time.Time) error {
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
func (o *notices) TakeNotices(ctx context.Context, now time.Time, hold time.Duration, limit int) ([]*store.Notice, error) {
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
func (o *notices) DoneNotice(ctx context.Context, id int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = slices.DeleteFunc(o.list, func(x *notice) bool { return x.n.ID == id })
	return nil
}

// RetryNotice implements store.Outbox.
func (o *notices) RetryNotice(ctx context.Context, id int64, due time.Time) error {
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
