package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
)

// BenchmarkParked starts executions that park in an hour-long Wait (on the
// SQLite store, 16 clients), then reports the live heap and RSS they hold,
// restarts the service on the same file and reports how long Resume takes
// (wall and CPU time: the CPU time is what other load on the machine
// leaves alone) and the memory after it. STEPD_PARKED sets the count
// (default 100,000); STEPD_PARKED_DB names a database file to keep and
// resume again on later runs (see parkMany).
func BenchmarkParked(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("STEPD_PARKED")); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		ctx := context.Background()
		path := os.Getenv("STEPD_PARKED_DB")
		if path == "" {
			path = filepath.Join(b.TempDir(), "stepd.db")
		}
		if _, err := os.Stat(path); err != nil {
			parkMany(ctx, b, path, n)
		}
		runtime.GC()

		st, err := sqlite.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		svc := service.New(service.Config{Store: st})
		stopProfile := profileResume(b)
		cpu0 := cpuTime()
		t0 := time.Now()
		resumed, err := svc.Runner().Resume(ctx)
		b.ReportMetric(time.Since(t0).Seconds(), "resume-s")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "resume-cpu-s")
		stopProfile()
		if err != nil || resumed != n {
			b.Fatalf("Resume = %d, %v; want %d", resumed, err, n)
		}
		heap, rss := memUse()
		b.ReportMetric(heap, "heapMiB-resumed")
		b.ReportMetric(rss, "rssMiB-resumed")
		svc.Close()
		st.Close()
	}
}

// parkMany starts n executions that park in an hour-long Wait in a new
// SQLite store at path (16 clients), reports the live heap and RSS they
// hold, and closes the store. STEPD_PARKED_DB keeps the file, so that
// runs of the benchmark (old and new binaries alternated) resume the same
// executions without starting them again.
func parkMany(ctx context.Context, b *testing.B, path string, n int) {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "park", RoleARN: "arn:aws:iam::123456789012:role/r",
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
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profileResume starts a CPU profile of Resume when STEPD_PARKED_PROFILE
// names a directory (resume.cpu there, and resume.alloc, the allocations
// once it returns); the function it returns stops it.
func profileResume(b *testing.B) func() {
	dir := os.Getenv("STEPD_PARKED_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, "resume.cpu"))
	if err != nil {
		b.Fatal(err)
	}
	runtime.MemProfileRate = 64 << 10
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		a, err := os.Create(filepath.Join(dir, "resume.alloc"))
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		if err := pprof.Lookup("allocs").WriteTo(a, 0); err != nil {
			b.Fatal(err)
		}
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
