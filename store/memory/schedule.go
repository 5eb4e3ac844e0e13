package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// schedules are the store's schedules; its methods are the store's
// store.Schedules.
type schedules struct {
	mu sync.Mutex
	m  map[[2]string]*memSchedule
}

type memSchedule struct {
	s       store.Schedule
	claimed time.Time // the claim's end
}

func copySchedule(s *store.Schedule) *store.Schedule {
	c := *s
	c.Doc = slices.Clone(s.Doc)
	return &c
}

// CreateSchedule implements store.Schedules.
func (t *schedules) CreateSchedule(ctx context.Context, sc *store.Schedule) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[2]string]*memSchedule{}
	}
	k := [2]string{sc.Group, sc.Name}
	if t.m[k] != nil {
		return fmt.Errorf("schedule %s/%s: %w", sc.Group, sc.Name, store.ErrExists)
	}
	sc.Version = 1
	t.m[k] = &memSchedule{s: *copySchedule(sc)}
	return nil
}

// GetSchedule implements store.Schedules.
func (t *schedules) GetSchedule(ctx context.Context, group, name string) (*store.Schedule, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.m[[2]string{group, name}]
	if m == nil {
		return nil, fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound)
	}
	return copySchedule(&m.s), nil
}

// PutSchedule implements store.Schedules.
func (t *schedules) PutSchedule(ctx context.Context, sc *store.Schedule) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.m[[2]string{sc.Group, sc.Name}]
	switch {
	case m == nil:
		return fmt.Errorf("schedule %s/%s: %w", sc.Group, sc.Name, store.ErrNotFound)
	case m.s.Version != sc.Version:
		return fmt.Errorf("schedule %s/%s: version %d, not %d: %w", sc.Group, sc.Name, m.s.Version, sc.Version, store.ErrConflict)
	}
	sc.Version++
	m.s, m.claimed = *copySchedule(sc), time.Time{}
	return nil
}

// DeleteSchedule implements store.Schedules.
func (t *schedules) DeleteSchedule(ctx context.Context, group, name string, version int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := [2]string{group, name}
	m := t.m[k]
	switch {
	case m == nil:
		return fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound)
	case version != 0 && m.s.Version != version:
		return fmt.Errorf("schedule %s/%s: version %d, not %d: %w", group, name, m.s.Version, version, store.ErrConflict)
	}
	delete(t.m, k)
	return nil
}

// ListSchedules implements store.Schedules.
func (t *schedules) ListSchedules(ctx context.Context, group, prefix, state string, p store.Page) ([]*store.Schedule, string, error) {
	filter := codec.FilterHash(group, prefix, state)
	var after []string
	if p.Token != "" {
		var err error
		if _, after, err = codec.ParseToken(p.Token, codec.KindSchedules, filter, 2); err != nil {
			return nil, "", err
		}
	}
	t.mu.Lock()
	var list []*store.Schedule
	for k, m := range t.m {
		if (group == "" || k[0] == group) && strings.HasPrefix(k[1], prefix) && (state == "" || m.s.State == state) &&
			(after == nil || k[1] > after[1] || k[1] == after[1] && k[0] > after[0]) {
			list = append(list, copySchedule(&m.s))
		}
	}
	t.mu.Unlock()
	slices.SortFunc(list, func(a, b *store.Schedule) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	if n := codec.PageLimit(p); len(list) > n {
		last := list[n-1]
		return list[:n], codec.MakeToken(codec.KindSchedules, filter, 0, last.Group, last.Name), nil
	}
	return list, "", nil
}

// ClaimSchedules implements store.Schedules.
func (t *schedules) ClaimSchedules(ctx context.Context, now, until time.Time, limit int) ([]*store.Schedule, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var due []*memSchedule
	for _, m := range t.m {
		if !m.s.Next.IsZero() && !m.s.Next.After(now) && m.claimed.Before(now) {
			due = append(due, m)
		}
	}
	slices.SortFunc(due, func(a, b *memSchedule) int { return a.s.Next.Compare(b.s.Next) })
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]*store.Schedule, len(due))
	for i, m := range due {
		m.claimed = until
		out[i] = copySchedule(&m.s)
	}
	return out, nil
}
