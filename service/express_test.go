package service_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
)

// TestExpressExecutionsDoNotAccumulate: the service forgets finished
// Express executions beyond KeepExpress, so a sustained Express load does
// not grow it; each StartSyncExecution still answers with its outcome.
func TestExpressExecutionsDoNotAccumulate(t *testing.T) {
	ctx := context.Background()
	const keep, n = 20, 300
	svc := service.New(service.Config{KeepExpress: keep})
	defer svc.Close()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "x", Type: "EXPRESS", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$.n"},"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range n {
		e, err := svc.StartSyncExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: fmt.Sprintf(`{"n":%d}`, i)})
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != "SUCCEEDED" || e.Output != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("execution %d: %s %s", i, e.Status, e.Output)
		}
		if i == 0 {
			first = e.ARN
		}
	}
	if _, _, err := svc.ListExecutions(ctx, sm.ARN, "", store.Page{Limit: 1000}); !errors.Is(err, fault.ErrTypeNotSupported) {
		t.Fatalf("ListExecutions of an Express state machine: %v, want StateMachineTypeNotSupported as on AWS", err)
	}
	list, _, err := svc.ListExecutions(service.WithExpressListing(ctx), sm.ARN, "", store.Page{Limit: 1000})
	if err != nil || len(list) != keep {
		t.Fatalf("the service keeps %d Express executions (%v), want %d", len(list), err, keep)
	}
	if _, err := svc.DescribeExecution(ctx, first); !errors.Is(err, fault.ErrExecutionNotFound) {
		t.Fatalf("the first execution, long finished: %v, want ExecutionDoesNotExist", err)
	}
}

// BenchmarkExpressMemory runs Express executions through StartSyncExecution
// and StartExecution, half each, from 8 goroutines, and reports the live
// heap and the process's RSS after 100,000 and 1,000,000 executions: both
// must stay flat. -express.count sets the largest count.
func BenchmarkExpressMemory(b *testing.B) {
	ctx := context.Background()
	svc := service.New(service.Config{})
	defer svc.Close()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "x", Type: "EXPRESS", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"n.$":"$.n","pad":"0123456789012345678901234567890123456789"},"Next":"Q"},"Q":{"Type":"Pass","End":true}}}`})
	if err != nil {
		b.Fatal(err)
	}
	total := 1000000
	if v, err := strconv.Atoi(os.Getenv("STEPD_EXPRESS_COUNT")); err == nil && v > 0 {
		total = v
	}
	done := 0
	report := func(at int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(m.HeapAlloc)/(1<<20), fmt.Sprintf("heapMiB@%d", at))
		b.ReportMetric(rssMiB(), fmt.Sprintf("rssMiB@%d", at))
	}
	for b.Loop() {
		for _, mark := range []int{min(100000, total), total} {
			work := make(chan int)
			errs := make(chan error, 8)
			for range 8 {
				go func() {
					for i := range work {
						var err error
						if i%2 == 0 {
							_, err = svc.StartSyncExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: fmt.Sprintf(`{"n":%d}`, i)})
						} else {
							_, err = svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: fmt.Sprintf(`{"n":%d}`, i)})
						}
						if err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for ; done < mark; done++ {
				work <- done
			}
			close(work)
			for range 8 {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			report(mark)
			if mark == total {
				break
			}
		}
	}
}

// rssMiB is the process's resident set size, from /proc (0 elsewhere).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(f), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}
