package service_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/service"
)

// passChain is an Express state machine of n Pass states.
func passChain(n int) string {
	def := `{"StartAt":"P0","States":{`
	for i := range n {
		if i > 0 {
			def += ","
		}
		next := fmt.Sprintf(`"Next":"P%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		def += fmt.Sprintf(`"P%d":{"Type":"Pass","Parameters":{"i":%d,"in.$":"$"},%s}`, i, i, next)
	}
	return def + "}}"
}

// runExpress runs total Express executions of sm from 8 goroutines and
// reports CPU time and allocations per execution.
func runExpress(b *testing.B, svc *service.Service, smARN string) {
	ctx := context.Background()
	total := max(b.N, 200)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if _, err := svc.StartSyncExecution(ctx, service.StartInput{StateMachineARN: smARN, Input: fmt.Sprintf(`{"n":%d}`, i)}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range total {
		work <- i
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(total), "cpu-µs/execution")
}

// BenchmarkExecutionLogging measures what execution logging costs a
// 10-state Express execution, alternated three times in one run: no
// destination configured (as before logging existed), a destination but
// the state machine's level OFF (the hot path when logging is off), level
// ERROR on executions that log nothing, and level ALL with data written
// to io.Discard.
func BenchmarkExecutionLogging(b *testing.B) {
	for round := 1; round <= 3; round++ {
		for _, mode := range []string{"none", "off", "error", "all"} {
			b.Run(fmt.Sprintf("round=%d/logging=%s", round, mode), func(b *testing.B) {
				ctx := context.Background()
				cfg := service.Config{Log: slog.New(slog.DiscardHandler)}
				if mode != "none" {
					cfg.ExecutionLogs = execlog.ToWriter(io.Discard)
				}
				svc := service.New(cfg)
				defer svc.Close()
				in := service.StateMachineInput{Name: "x", Type: "EXPRESS", RoleARN: "arn:aws:iam::1:role/r", Definition: passChain(10)}
				if mode == "error" || mode == "all" {
					in.Logging = &service.LoggingConfiguration{Level: map[string]string{"error": "ERROR", "all": "ALL"}[mode], IncludeExecutionData: true,
						Destinations: []service.LogDestination{{CloudWatchLogsLogGroup: &service.LogGroup{LogGroupArn: "arn:aws:logs:us-east-1:1:log-group:x:*"}}}}
				}
				sm, _, err := svc.CreateStateMachine(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				runExpress(b, svc, sm.ARN)
			})
		}
	}
	_ = time.Now
}
