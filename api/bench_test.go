package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/store/storetest"
)

// BenchmarkStartExecutionHTTP measures StartExecution requests per second
// over HTTP on 127.0.0.1 against the durable SQLite store (each request
// commits the new execution before it is answered), next to the disk's
// fsync rate measured in the same run.
func BenchmarkStartExecutionHTTP(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "stepd.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := service.New(service.Config{Store: st})
	defer svc.Close()
	srv := httptest.NewServer(api.New(svc, nil))
	defer srv.Close()
	if _, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "w", RoleARN: role,
		Definition: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`}); err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var n atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Sprintf(`{"stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:w","name":"e%d","input":"{}"}`, i)
			req, _ := http.NewRequest("POST", srv.URL, bytes.NewBufferString(body))
			req.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			// Read to the end, so that the connection is reused.
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	rate := float64(n.Load()) / time.Since(start).Seconds()
	b.StopTimer()
	b.ReportMetric(rate, "starts/s")
	b.ReportMetric(storetest.FsyncRate(b, 200), "disk-fsyncs/s")
}
