package service

import (
	"context"
	"fmt"
	"time"

	"github.com/stepd/stepd/store"
)

// retentionBatch is how many executions one DeleteEnded call deletes; a
// pause as long as the batch took leaves the store to the executions'
// writes at least half the time. On SQLite a batch of 50 executions of 20
// steps holds the writer about 30 ms, one of 500 about 300 ms (see
// store/sqlite's BenchmarkDeleteEnded).
const retentionBatch = 50

// DeleteExpired deletes the executions, Standard and Express, that ended
// more than keep ago (on the service's clock), with their histories, in
// batches of retentionBatch, pausing between batches as long as the last
// one took; it returns how many
// it deleted.
func (s *Service) DeleteExpired(ctx context.Context, keep time.Duration) (int, error) {
	before := s.clock.Now().Add(-keep)
	total := 0
	for _, st := range []store.Store{s.store, s.express} {
		for {
			t0 := time.Now()
			n, err := st.DeleteEnded(ctx, before, retentionBatch)
			took := time.Since(t0)
			total += n
			if err != nil {
				return total, fmt.Errorf("retention: %w", err)
			}
			if n < retentionBatch {
				break
			}
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(max(took, time.Millisecond)):
			}
		}
	}
	return total, nil
}

// Retain runs DeleteExpired every `every` until ctx ends, logging what it
// deleted.
func (s *Service) Retain(ctx context.Context, keep, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.DeleteExpired(ctx, keep)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("retention: deleting old executions", "err", err, "deleted", n)
		case n > 0:
			s.log.Info("retention: deleted executions that ended before the retention period", "deleted", n, "retention", keep)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
