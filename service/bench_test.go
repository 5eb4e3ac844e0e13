package service_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/store/storetest"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func chain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"T0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"T%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"T%d":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f",%s}`, i, next)
	}
	b.WriteString(`}}`)
	return b.String()
}

// BenchmarkDurable runs Standard executions of a 10-Task chain on the
// SQLite store with 1, 100 and 1000 executions at once; every task result
// is a committed step. It reports state transitions (states entered) per
// second, with Go's default garbage collector target (gogc=100) and with
// stepd serve's (gogc=400, see cmd/stepd), next to the disk's fsync rate
// measured in the same run.
func BenchmarkDurable(b *testing.B) {
	for _, gc := range []int{100, 400} {
		b.Run(fmt.Sprintf("gogc=%d", gc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gc))
			benchDurable(b, openSQLite)
		})
	}
}

// BenchmarkDurableStores runs BenchmarkDurable's workload on each durable
// store in the same run, as stepd serve runs it (gogc=400): SQLite in a
// temporary folder and PostgreSQL (a schema of its own on the test server,
// see store/postgres/pgtest).
func BenchmarkDurableStores(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.Run("store=sqlite", func(b *testing.B) { benchDurable(b, openSQLite) })
	b.Run("store=postgres", func(b *testing.B) {
		benchDurable(b, func(b *testing.B) store.Store {
			st, err := postgres.Open(context.Background(), pgtest.DSN(b))
			if err != nil {
				b.Fatal(err)
			}
			return st
		})
	})
}

func openSQLite(b *testing.B) store.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "stepd.db"))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func benchDurable(b *testing.B, open func(b *testing.B) store.Store) {
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("ok", true)}
	})
	const states = 10
	for _, conc := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("executions=%d", conc), func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			defer st.Close()
			// The execution-end log lines would go to the benchmark's output.
			cfg := service.Config{Store: st, Invoker: inv, Log: slog.New(slog.DiscardHandler)}
			if pg, ok := st.(*postgres.Store); ok {
				cfg.Shared = pg // as stepd serve runs it
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
			rate := float64(total*states) / time.Since(start).Seconds()
			b.StopTimer()
			b.ReportMetric(rate, "transitions/s")
			b.ReportMetric(storetest.FsyncRate(b, 200), "disk-fsyncs/s")
		})
	}
}
