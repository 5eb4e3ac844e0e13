package sqlite_test

import (
	"context"
	"fmt"
	"os"
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

// BenchmarkAppendStep commits steps of 3 small events from concurrent
// executions and reports steps per second; BenchmarkFsync measures the
// disk's fsync rate in the same run, for the ratio.
func BenchmarkAppendStep(b *testing.B) {
	for _, conc := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("executions=%d", conc), func(b *testing.B) {
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
			per := b.N/conc + 1
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i := 0; i < conc; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					for k := 1; k <= per; k++ {
						st := &store.Step{ExecutionARN: arns[i], Seq: int64(k), Input: []byte(`{"kind":1,"id":1}`), Status: "RUNNING"}
						for j := 0; j < 3; j++ {
							id := int64(3*(k-1) + j + 1)
							st.Events = append(st.Events, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(`{"type":"PassStateEntered","details":{"input":"{}"}}`)})
						}
						if err := s.AppendStep(ctx, st); err != nil {
							b.Error(err)
							return
						}
					}
				}(i)
			}
			wg.Wait()
			b.ReportMetric(float64(per*conc)/time.Since(start).Seconds(), "steps/s")
		})
	}
}

func BenchmarkFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write([]byte("x")); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "fsyncs/s")
}
