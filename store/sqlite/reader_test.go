package sqlite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// TestReaderGate checks that every read gives its place at the gate back —
// rows closed, a row scanned, a query that failed, a read transaction
// ended, a read whose ctx ended while it waited — and that a read waits
// while every place is taken.
func TestReaderGate(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	arn := newExec(t, s, "a")
	var wg sync.WaitGroup
	for range 4 * readers {
		wg.Go(func() {
			if _, err := s.GetExecution(ctx, "arn:aws:states:us-east-1:1:execution:m:none"); !errors.Is(err, store.ErrNotFound) {
				t.Error(err)
			}
			if _, err := s.Steps(ctx, arn); err != nil {
				t.Error(err)
			}
			if _, err := s.db.QueryContext(ctx, `SELECT no_such_column FROM executions`); err == nil {
				t.Error("a bad query succeeded")
			}
			// A query that fails once it runs: its ctx has ended (it was
			// prepared with one that had not).
			var n int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM executions`).Scan(&n); err != nil {
				t.Error(err)
			}
			ended, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.db.QueryContext(ended, `SELECT count(*) FROM executions`); err == nil {
				t.Error("a query with an ended ctx succeeded")
			}
			if err := s.db.QueryRowContext(ended, `SELECT count(*) FROM executions`).Scan(&n); err == nil {
				t.Error("a query with an ended ctx succeeded")
			}
			if _, _, err := s.ListExecutions(ctx, "sm", "SUCCEEDED", store.Page{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := s.ScanRunning(ctx, func(*store.Execution, []*store.Step) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := len(s.db.gate); n != 0 {
		t.Fatalf("%d places still taken after the reads ended", n)
	}

	// Every place taken: a read waits, and gives up when its ctx ends.
	for range readers {
		if err := s.db.enter(ctx); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.GetExecution(short, "arn:aws:states:us-east-1:1:execution:m:none"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a read with every place taken: %v, want its ctx's end", err)
	}
	for range readers {
		s.db.leave()
	}
	if n := len(s.db.gate); n != 0 {
		t.Fatalf("%d places taken", n)
	}
}
