package sqlite

import (
	"context"
	"errors"
	"strconv"
	"strings"
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

// FuzzUnpackList checks that unpackList never fails to read what
// packedList's form holds, and never panics on anything else.
func FuzzUnpackList(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:1:execution:a:e,1", "e,1", "RUNNING", int64(5), int64(1), int64(0))
	f.Add("", "", "", int64(0), int64(0), int64(0))
	f.Add("a,b,c", "é\x00", "SUCCEEDED", int64(-1), int64(1<<62), int64(-7))
	f.Fuzz(func(t *testing.T, arn, name, status string, key, started, stopped int64) {
		pack := func(n []int64, texts ...string) string {
			var b strings.Builder
			for _, v := range n {
				b.WriteString(strconv.FormatInt(v, 10) + ",")
			}
			for _, s := range texts {
				b.WriteString(strconv.Itoa(len(s)) + ",")
			}
			for _, s := range texts {
				b.WriteString(s)
			}
			return b.String()
		}
		one := pack([]int64{key, started, stopped}, arn, name, "sm", "b", "STANDARD", status)
		list, err := unpackList(one + one)
		if err != nil || len(list) != 2 {
			t.Fatalf("unpack: %d, %v", len(list), err)
		}
		for _, e := range list {
			if e.key != key || e.e.ARN != arn || e.e.Name != name || e.e.Status != status || e.e.StateMachineARN != "sm" {
				t.Fatalf("unpacked %+v (key %d)", *e.e, e.key)
			}
		}
		// Anything else: an error or a list, never a panic.
		_, _ = unpackList(arn + name + status)
		_, _ = unpackList(one[:len(one)/2])
	})
}
