package api_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
)

var (
	loadClients  = flag.Int("load.clients", 300, "BenchmarkAPILoad: concurrent clients")
	loadDuration = flag.Duration("load.duration", 10*time.Second, "BenchmarkAPILoad: how long the clients send requests")
	loadIdle     = flag.Duration("load.idle", 10*time.Second, "BenchmarkAPILoad: how long the server stays idle before its memory is read again")
)

// BenchmarkAPILoad is the API under a mixed load: load.clients concurrent
// clients on 127.0.0.1 send, for load.duration, 30 % StartExecution, 30 %
// DescribeExecution, 20 % GetExecutionHistory and 20 % ListExecutions to a
// server on a durable SQLite store. It reports requests per second, the
// 50th and 99th percentile latency, and the process's RSS before, at its
// peak, right after the load and after load.idle without requests (whether
// memory is returned when idle). It runs once whatever b.N is.
func BenchmarkAPILoad(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "stepd.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := service.New(service.Config{Store: st, Log: slog.New(slog.DiscardHandler)})
	defer svc.Close()
	h := api.New(svc, nil)
	idleCtx, stopIdle := context.WithCancel(ctx)
	defer stopIdle()
	go h.ReleaseWhenIdle(idleCtx, *loadIdle/2) // as stepd serve does
	srv := httptest.NewServer(h)
	defer srv.Close()
	const sm = "arn:aws:states:us-east-1:123456789012:stateMachine:load"
	if _, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "load", RoleARN: role,
		Definition: `{"StartAt":"A","States":{
			"A":{"Type":"Pass","Parameters":{"order.$":"$.order","step":1},"Next":"B"},
			"B":{"Type":"Pass","Result":{"ok":true},"ResultPath":"$.result","Next":"C"},
			"C":{"Type":"Pass","End":true}}}`}); err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: *loadClients, MaxIdleConnsPerHost: *loadClients}}
	call := func(op, body string) error {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: status %d", op, resp.StatusCode)
		}
		return nil
	}

	// The executions that Describe and GetExecutionHistory read: a
	// thousand started before the load, then every one it starts.
	var (
		mu    sync.Mutex
		names []string
		seq   atomic.Int64
	)
	start := func() error {
		name := "e" + strconv.FormatInt(seq.Add(1), 10)
		body := `{"stateMachineArn":"` + sm + `","name":"` + name + `","input":"{\"order\":{\"id\":\"` + name + `\",\"items\":[1,2,3]}}"}`
		if err := call("StartExecution", body); err != nil {
			return err
		}
		mu.Lock()
		names = append(names, name)
		mu.Unlock()
		return nil
	}
	for range 1000 {
		if err := start(); err != nil {
			b.Fatal(err)
		}
	}
	pick := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		return "arn:aws:states:us-east-1:123456789012:execution:load:" + names[r.IntN(len(names))]
	}

	runtime.GC()
	rssBefore := rssMiB()
	var peak atomic.Int64
	peak.Store(int64(rssBefore))
	stopSampling := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				if r := int64(rssMiB()); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()

	b.ResetTimer()
	deadline := time.Now().Add(*loadDuration)
	lat := make([][]time.Duration, *loadClients)
	// byOp: the latencies of each operation (start, describe, history, list).
	ops := [...]string{"start", "describe", "history", "list"}
	byOp := make([][len(ops)][]time.Duration, *loadClients)
	var failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	began := time.Now()
	for c := range *loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			own := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) {
				t0 := time.Now()
				var err error
				var op int
				switch n := r.IntN(10); {
				case n < 3:
					err = start()
				case n < 6:
					op, err = 1, call("DescribeExecution", `{"executionArn":"`+pick(r)+`"}`)
				case n < 8:
					op, err = 2, call("GetExecutionHistory", `{"executionArn":"`+pick(r)+`"}`)
				default:
					op, err = 3, call("ListExecutions", `{"stateMachineArn":"`+sm+`"}`)
				}
				d := time.Since(t0)
				own = append(own, d)
				byOp[c][op] = append(byOp[c][op], d)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
			lat[c] = own
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	close(stopSampling)
	if e := firstErr.Load(); e != nil {
		b.Fatalf("%d requests failed; the first: %v", failures.Load(), e)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(p float64) float64 {
		return float64(all[int(float64(len(all)-1)*p)]) / float64(time.Millisecond)
	}
	rssAfter := rssMiB()
	time.Sleep(*loadIdle)
	rssIdle := rssMiB()
	// Of it, the process's own memory (the rest maps the database file,
	// which the kernel takes back as it needs).
	anonIdle := statusMiB("RssAnon:")

	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "requests/s")
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	for i, name := range ops {
		var each []time.Duration
		for c := range byOp {
			each = append(each, byOp[c][i]...)
		}
		if len(each) == 0 {
			continue
		}
		slices.Sort(each)
		b.ReportMetric(float64(each[len(each)*99/100])/float64(time.Millisecond), "p99-ms-"+name)
	}
	b.ReportMetric(rssBefore, "rss-before-MiB")
	b.ReportMetric(float64(peak.Load()), "rss-peak-MiB")
	b.ReportMetric(rssAfter, "rss-after-MiB")
	b.ReportMetric(rssIdle, "rss-idle-MiB")
	b.ReportMetric(anonIdle, "rss-idle-anon-MiB")
	b.ReportMetric(float64(len(names)), "executions")
}

// rssMiB is the process's resident set size in MiB (Linux).
func rssMiB() float64 { return statusMiB("VmRSS:") }

// statusMiB is a size of /proc/self/status in MiB (Linux).
func statusMiB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if f, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(string(f)), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
