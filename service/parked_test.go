package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
)

// BenchmarkParked starts executions that park in an hour-long Wait (on the
// SQLite store, 16 clients), then reports the live heap and RSS they hold,
// restarts the service on the same file and reports how long Resume takes
// and the memory after it. STEPD_PARKED sets the count (default 100,000).
func BenchmarkParked(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("STEPD_PARKED")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		ctx := context.Background()
		path := filepath.Join(b.TempDir(), "stepd.db")
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		svc := service.New(service.Config{Store: st})
		sm, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "park", RoleARN: "arn:aws:iam::123456789012:role/r",
			Definition: `{"StartAt":"Prepare","States":{"Prepare":{"Type":"Pass","Parameters":{"id.$":"$.id","at.$":"$$.Execution.StartTime"},"Next":"Park"},
				"Park":{"Type":"Wait","Seconds":3600,"Next":"Done"},"Done":{"Type":"Succeed"}}}`})
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		next := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range next {
					if _, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: fmt.Sprint("p", i), Input: fmt.Sprintf(`{"id":%d}`, i)}); err != nil {
						b.Error(err)
					}
				}
			})
		}
		t0 := time.Now()
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		b.ReportMetric(time.Since(t0).Seconds(), "start-s")
		// Let every execution reach its Wait.
		for deadline := time.Now().Add(2 * time.Minute); ; {
			if parkedAll(ctx, b, svc, n) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the executions did not all park")
			}
			time.Sleep(100 * time.Millisecond)
		}
		heap, rss := memUse()
		b.ReportMetric(heap, "heapMiB-parked")
		b.ReportMetric(rss, "rssMiB-parked")
		b.ReportMetric(heap*1024/float64(n), "heapKiB/execution")
		svc.Close()
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		runtime.GC()

		st, err = sqlite.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		svc = service.New(service.Config{Store: st})
		t0 = time.Now()
		resumed, err := svc.Resume(ctx)
		if err != nil || resumed != n {
			b.Fatalf("Resume = %d, %v; want %d", resumed, err, n)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "resume-s")
		heap, rss = memUse()
		b.ReportMetric(heap, "heapMiB-resumed")
		b.ReportMetric(rss, "rssMiB-resumed")
		svc.Close()
		st.Close()
	}
}

// parkedAll reports whether the last execution started has entered its
// Wait (executions park in the order they start, give or take the
// clients).
func parkedAll(ctx context.Context, b *testing.B, svc *service.Service, n int) bool {
	for _, i := range []int{0, n / 2, n - 1} {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:park:p%d", i)
		evs, _, err := svc.History(ctx, arn, "", 0, true)
		if err != nil {
			b.Fatal(err)
		}
		if len(evs) == 0 || evs[0].Type != "WaitStateEntered" {
			return false
		}
	}
	return true
}

// memUse returns the live heap and the RSS once the garbage collector has
// run (three times, so that idle goroutines' stacks shrink) and returned
// what it freed to the system.
func memUse() (heapMiB, rssMiBv float64) {
	for range 3 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20), rssMiB()
}
