package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
)

// fillEnded stores n ended executions of steps steps (3 events of 200
// bytes each), 64 at a time.
func fillEnded(b *testing.B, s *sqlite.Store, n, steps int, stopped time.Time) {
	ctx := context.Background()
	ev := make([]byte, 200)
	for i := range ev {
		ev[i] = 'x'
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			arn := fmt.Sprintf("arn:aws:states:us-east-1:1:execution:old:e%d", i)
			e := &store.Execution{ARN: arn, Name: fmt.Sprint(i), StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
			if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
				b.Error(err)
				return
			}
			id := int64(1)
			for k := 1; k <= steps; k++ {
				st := &store.Step{ExecutionARN: arn, Seq: int64(k), Input: []byte(`{"kind":1,"id":1}`), Status: "RUNNING"}
				for range 3 {
					st.Events = append(st.Events, store.Event{ID: id, Type: "TaskSucceeded", JSON: ev})
					id++
				}
				if k == steps {
					st.Status, st.Stopped, st.Output = "SUCCEEDED", stopped, "{}"
				}
				if err := s.AppendStep(ctx, st); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkDeleteEnded deletes 10,000 ended executions of 20 steps (60
// events of 200 bytes) each, in batches of 50 and of 500 with a pause as
// long as the batch took between batches (as service.DeleteExpired does),
// while one goroutine keeps committing steps of a running execution. It
// reports the time of one batch (the writer is held that long), the
// deletion rate, and the median and longest commit of the running
// execution's steps meanwhile, next to the same commits measured without
// deletion in the same run.
func BenchmarkDeleteEnded(b *testing.B) {
	for _, batch := range []int{50, 500} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchDeleteEnded(b, batch) })
	}
}

func benchDeleteEnded(b *testing.B, batch int) {
	const n, steps = 10000, 20
	for b.Loop() {
		b.StopTimer()
		s := open(b, b.TempDir())
		fillEnded(b, s, n, steps, time.Unix(1000, 0))
		ctx := context.Background()
		e := &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:live:x", Name: "x", StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
		if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING"}); err != nil {
			b.Fatal(err)
		}
		seq := int64(0)
		commit := func() time.Duration {
			seq++
			t0 := time.Now()
			if err := s.AppendStep(ctx, &store.Step{ExecutionARN: e.ARN, Seq: seq, Status: "RUNNING", Events: []store.Event{{ID: seq, Type: "PassStateEntered", JSON: []byte(`{}`)}}}); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
		var quiet []time.Duration
		for range 200 {
			quiet = append(quiet, commit())
		}
		b.StartTimer()
		stop := make(chan struct{})
		var busy []time.Duration
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				busy = append(busy, commit())
			}
		})
		start := time.Now()
		var batches []time.Duration
		deleted := 0
		for {
			t0 := time.Now()
			k, err := s.DeleteEnded(ctx, time.Unix(2000, 0), batch)
			if err != nil {
				b.Fatal(err)
			}
			batches = append(batches, time.Since(t0))
			deleted += k
			if k < batch {
				break
			}
			time.Sleep(batches[len(batches)-1]) // as service.DeleteExpired pauses
		}
		took := time.Since(start)
		close(stop)
		wg.Wait()
		b.StopTimer()
		if deleted != n {
			b.Fatalf("deleted %d of %d", deleted, n)
		}
		slices.Sort(batches)
		slices.Sort(quiet)
		slices.Sort(busy)
		b.ReportMetric(float64(batches[len(batches)/2].Microseconds())/1000, "ms/batch-median")
		b.ReportMetric(float64(batches[len(batches)-1].Microseconds())/1000, "ms/batch-max")
		b.ReportMetric(float64(n)/took.Seconds(), "executions/s")
		b.ReportMetric(float64(quiet[len(quiet)/2].Microseconds())/1000, "ms/commit-quiet-median")
		b.ReportMetric(float64(quiet[len(quiet)-1].Microseconds())/1000, "ms/commit-quiet-max")
		b.ReportMetric(float64(busy[len(busy)/2].Microseconds())/1000, "ms/commit-deleting-median")
		b.ReportMetric(float64(busy[len(busy)-1].Microseconds())/1000, "ms/commit-deleting-max")
		s.Close()
		b.StartTimer()
	}
}
