package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/store/storetest"
)

func open(t testing.TB, dir string) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir()) })
}

func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T, dir string) store.Store { return open(t, dir) })
}

// BenchmarkAppendStep commits steps of 3 small events, each goroutine to
// its own execution, and reports steps per second, transactions (fsyncs)
// per second, steps per transaction, and the temp disk's raw fsync rate
// measured in the same run, with the ratio of steps/s to it.
func BenchmarkAppendStep(b *testing.B) {
	fsyncs := storetest.FsyncRate(b, 200)
	for _, conc := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("goroutines=%d", conc), func(b *testing.B) {
			s := open(b, b.TempDir())
			defer s.Close()
			ctx := context.Background()
			arns := make([]string, conc)
			for i := range arns {
				arns[i] = fmt.Sprintf("arn:aws:states:us-east-1:1:execution:b:e%d", i)
				e := &store.Execution{ARN: arns[i], Name: fmt.Sprint(i), StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
				if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: arns[i], Status: "RUNNING"}); err != nil {
					b.Fatal(err)
				}
			}
			per := (b.N + conc - 1) / conc
			commits := sqlite.Commits(s)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i := range conc {
				wg.Go(func() {
					for k := 1; k <= per; k++ {
						st := &store.Step{ExecutionARN: arns[i], Seq: int64(k), At: start, Input: []byte(`{"kind":1,"id":1}`), Status: "RUNNING"}
						for j := range 3 {
							id := int64(3*(k-1) + j + 1)
							st.Events = append(st.Events, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(`{"type":"PassStateEntered","details":{"input":"{}"}}`)})
						}
						if err := s.AppendStep(ctx, st); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			secs := time.Since(start).Seconds()
			b.StopTimer()
			steps, txs := float64(per*conc), float64(sqlite.Commits(s)-commits)
			b.ReportMetric(steps/secs, "steps/s")
			b.ReportMetric(txs/secs, "txs/s")
			b.ReportMetric(steps/txs, "steps/tx")
			b.ReportMetric(fsyncs, "disk-fsyncs/s")
			b.ReportMetric(steps/secs/fsyncs, "steps/disk-fsync")
		})
	}
}

// BenchmarkFsync measures the temp disk's fsync rate on its own.
func BenchmarkFsync(b *testing.B) {
	b.ReportMetric(storetest.FsyncRate(b, b.N), "fsyncs/s")
}
