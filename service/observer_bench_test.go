package service_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/metrics"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// BenchmarkObserverOverhead measures what the metrics cost the durable
// path: the 10-Task chain of BenchmarkDurable at 100 executions at once
// (GOGC=400, as stepd serve runs), without and with metrics.Metrics as the
// service's Observer and the store's commit observer, alternated three
// times in the same run.
func BenchmarkObserverOverhead(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("ok", true)}
	})
	const states, conc = 10, 100
	for round := 1; round <= 3; round++ {
		for _, observed := range []bool{false, true} {
			b.Run(fmt.Sprintf("round=%d/metrics=%v", round, observed), func(b *testing.B) {
				ctx := context.Background()
				st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "stepd.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				cfg := service.Config{Store: st, Invoker: inv, Log: slog.New(slog.DiscardHandler)}
				if observed {
					m := metrics.New()
					cfg.Observer = m
					st.ObserveCommits(m.Commit)
				}
				svc := service.New(cfg)
				defer svc.Close()
				sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "bench", RoleARN: "arn:aws:iam::1:role/r", Definition: chain(states)})
				if err != nil {
					b.Fatal(err)
				}
				total := max(b.N, conc)
				b.ResetTimer()
				start := time.Now()
				cpu0 := cpuTime()
				var wg sync.WaitGroup
				sem := make(chan struct{}, conc)
				for i := 0; i < total; i++ {
					sem <- struct{}{}
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						defer func() { <-sem }()
						e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: fmt.Sprintf("e%d", i)})
						if err != nil {
							b.Error(err)
							return
						}
						if d, err := svc.Wait(ctx, e.ARN); err != nil || d.Status != "SUCCEEDED" {
							b.Errorf("%v %v", d, err)
						}
					}(i)
				}
				wg.Wait()
				b.ReportMetric(float64(total*states)/time.Since(start).Seconds(), "transitions/s")
				// CPU time per transition suffers less than the rate from
				// other processes sharing the machine.
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(total*states), "cpu-µs/transition")
			})
		}
	}
}
