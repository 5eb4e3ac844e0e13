package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
)

// BenchmarkMapRunStored runs a Distributed Map of STEPD_MAPRUN_ITEMS (by
// default 10,000) Pass iterations through the service on SQLite, where
// every iteration is a child execution whose summary and history are
// stored, and reports the items per second and the bytes allocated per
// item.
func BenchmarkMapRunStored(b *testing.B) {
	n := 10000
	if s := os.Getenv("STEPD_MAPRUN_ITEMS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	input := fmt.Sprintf(`{"n":%d}`, n)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "stepd.db"))
		if err != nil {
			b.Fatal(err)
		}
		svc := service.New(service.Config{Store: st})
		sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "big", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":1000,"Items":"{% [1..$states.input.n] %}",
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"Output":{"n":"{% $count($states.result) %}"},"End":true}}}`})
		if err != nil {
			b.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: input})
		if err != nil {
			b.Fatal(err)
		}
		done, err := svc.Wait(ctx, e.ARN)
		if err != nil || done.Output != fmt.Sprintf(`{"n":%d}`, n) {
			b.Fatalf("%+v %v", done, err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		runs, _, err := svc.ListMapRuns(ctx, e.ARN, store.Page{})
		if err != nil || len(runs) != 1 {
			b.Fatal(err)
		}
		r, err := svc.DescribeMapRun(ctx, runs[0].ARN)
		if err != nil || r.Executions.Succeeded != int64(n) {
			b.Fatalf("%+v %v", r, err)
		}
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(n), "B/item")
		svc.Close()
		st.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
