package memory

import (
	"context"
	"slices"
	"sort"
	"time"
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
