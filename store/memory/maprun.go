package memory

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/stepd/stepd/store"
)

// mapRuns holds the Map Runs, their child executions and the redrive
// records.
type mapRuns struct {
	mu       sync.RWMutex
	runs     map[string]*mapRun
	children map[string]*child
	redrives map[string]store.Redrive
	seq      int
}

type mapRun struct {
	r   store.MapRun
	seq int
}

type child struct {
	c      store.ChildExecution // Events: all of them
	seq    int
	events map[int64]bool
}

func (m *mapRuns) init() {
	if m.runs == nil {
		m.runs, m.children, m.redrives = map[string]*mapRun{}, map[string]*child{}, map[string]store.Redrive{}
	}
}

// PutMapRuns implements store.MapRunStore.
func (s *Store) PutMapRuns(ctx context.Context, runs []*store.MapRun, children []*store.ChildExecution) error {
	m := &s.runs
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	for _, r := range runs {
		if old, ok := m.runs[r.ARN]; ok {
			old.r = *r
			continue
		}
		m.seq++
		m.runs[r.ARN] = &mapRun{r: *r, seq: m.seq}
	}
	for _, c := range children {
		x, ok := m.children[c.ARN]
		if !ok {
			m.seq++
			x = &child{seq: m.seq, events: map[int64]bool{}}
			m.children[c.ARN] = x
		}
		evs := x.c.Events
		x.c = *c
		x.c.Events = evs
		for _, ev := range c.Events {
			if x.events[ev.ID] {
				continue
			}
			x.events[ev.ID] = true
			x.c.Events = append(x.c.Events, store.Event{ID: ev.ID, Type: ev.Type, JSON: bytes.Clone(ev.JSON)})
		}
		sort.Slice(x.c.Events, func(i, j int) bool { return x.c.Events[i].ID < x.c.Events[j].ID })
	}
	return nil
}

// GetMapRun implements store.MapRunStore.
func (s *Store) GetMapRun(ctx context.Context, arn string) (*store.MapRun, error) {
	m := &s.runs
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.runs[arn]
	if !ok {
		return nil, fmt.Errorf("map run %s: %w", arn, store.ErrNotFound)
	}
	c := r.r
	return &c, nil
}

// ListMapRuns implements store.MapRunStore.
func (s *Store) ListMapRuns(ctx context.Context, executionARN string, p store.Page) ([]*store.MapRun, string, error) {
	m := &s.runs
	m.mu.RLock()
	var all []mapRun // copies, made under the lock
	for _, r := range m.runs {
		if r.r.ExecutionARN == executionARN {
			all = append(all, *r)
		}
	}
	m.mu.RUnlock()
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	list := make([]*store.MapRun, len(all))
	for i := range all {
		list[i] = &all[i].r
	}
	return page(list, p)
}

// GetChildExecution implements store.MapRunStore.
func (s *Store) GetChildExecution(ctx context.Context, arn string) (*store.ChildExecution, error) {
	m := &s.runs
	m.mu.RLock()
	defer m.mu.RUnlock()
	x, ok := m.children[arn]
	if !ok {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	c := x.c
	c.Events = nil
	return &c, nil
}

// ListChildExecutions implements store.MapRunStore.
func (s *Store) ListChildExecutions(ctx context.Context, mapRunARN, status string, p store.Page) ([]*store.ChildExecution, string, error) {
	m := &s.runs
	m.mu.RLock()
	type keyed struct {
		c   store.ChildExecution
		seq int
	}
	var all []keyed // copies, made under the lock
	for _, x := range m.children {
		if x.c.MapRunARN == mapRunARN && (status == "" || x.c.Status == status) {
			c := x.c
			c.Events = nil
			all = append(all, keyed{c, x.seq})
		}
	}
	m.mu.RUnlock()
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	list := make([]*store.ChildExecution, len(all))
	for i := range all {
		list[i] = &all[i].c
	}
	return page(list, p)
}

// ChildEvents implements store.MapRunStore.
func (s *Store) ChildEvents(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	m := &s.runs
	m.mu.RLock()
	defer m.mu.RUnlock()
	x, ok := m.children[arn]
	if !ok {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	return store.PageEvents(x.c.Events, after, limit, reverse), nil
}

// PutRedrive implements store.MapRunStore.
func (s *Store) PutRedrive(ctx context.Context, executionARN string, r store.Redrive) error {
	m := &s.runs
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.redrives[executionARN] = r
	return nil
}

// GetRedrive implements store.MapRunStore.
func (s *Store) GetRedrive(ctx context.Context, executionARN string) (store.Redrive, error) {
	m := &s.runs
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.redrives[executionARN], nil
}

// GetRedrives implements store.MapRunStore.
func (s *Store) GetRedrives(ctx context.Context, arns []string) (map[string]store.Redrive, error) {
	m := &s.runs
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]store.Redrive{}
	for _, arn := range arns {
		if r, ok := m.redrives[arn]; ok {
			out[arn] = r
		}
	}
	return out, nil
}

// forget drops an execution's Map Runs, their child executions and its
// redrive record (its history was deleted).
func (m *mapRuns) forget(executionARN string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.redrives, executionARN)
	for arn, r := range m.runs {
		if r.r.ExecutionARN != executionARN {
			continue
		}
		delete(m.runs, arn)
		for carn, c := range m.children {
			if c.c.MapRunARN == arn {
				delete(m.children, carn)
			}
		}
	}
}
