package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/storetest"
)

// nodesChain is the number of Task states of BenchmarkNodes' executions:
// each is answered by a mock at once, and each result is a committed step.
const nodesChain = 50

// nodesExecutions is how many executions BenchmarkNodes runs at once.
const nodesExecutions = 1000

// BenchmarkNodes measures `stepd serve` over one PostgreSQL with 1, 2 and 3
// nodes, real processes on 127.0.0.1 started by the benchmark (the binary
// built from this tree, or STEPD_BENCH_BIN to compare another):
//
//   - transitions: 1,000 executions at once of a 50-Task chain whose tasks a
//     mock answers at once, started over HTTP round-robin across the nodes;
//     a transition is a Task state entered, each one a committed step, and
//     the rate is the transitions over the time from the first start to the
//     last execution's end;
//   - starts: StartExecution requests per second, 64 clients spread across
//     the nodes, of a machine that then waits (its executions park).
//
// Each reports the disk's fsync rate measured in the same run
// (storetest.FsyncRate, the disk PostgreSQL writes to on this machine) and
// the WAL flushes PostgreSQL made during the measurement (pg_stat_wal,
// server-wide). Run it with -benchtime 1x: every iteration starts its own
// nodes on a fresh schema.
func BenchmarkNodes(b *testing.B) {
	bin := os.Getenv("STEPD_BENCH_BIN")
	if bin == "" {
		bin = buildStepd(b)
	}
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("transitions/nodes=%d", n), func(b *testing.B) {
			var rate, syncs, nodeCPU, dbCPU float64
			for range b.N {
				r := benchTransitions(b, bin, n)
				rate += r.rate
				syncs += r.walSyncs
				nodeCPU += r.nodeCPU
				dbCPU += r.dbCPU
			}
			b.ReportMetric(rate/float64(b.N), "transitions/s")
			b.ReportMetric(nodeCPU/float64(b.N)*1e6, "stepd-cpu-µs/transition")
			b.ReportMetric(dbCPU/float64(b.N)*1e6, "pg-cpu-µs/transition")
			b.ReportMetric(syncs/float64(b.N), "wal-syncs/s")
			b.ReportMetric(storetest.FsyncRate(b, 200), "disk-fsyncs/s")
		})
	}
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("starts/nodes=%d", n), func(b *testing.B) {
			var rate, syncs, nodeCPU, dbCPU float64
			for range b.N {
				r := benchStarts(b, bin, n)
				rate += r.rate
				syncs += r.walSyncs
				nodeCPU += r.nodeCPU
				dbCPU += r.dbCPU
			}
			b.ReportMetric(rate/float64(b.N), "starts/s")
			b.ReportMetric(nodeCPU/float64(b.N)*1e6, "stepd-cpu-µs/start")
			b.ReportMetric(dbCPU/float64(b.N)*1e6, "pg-cpu-µs/start")
			b.ReportMetric(syncs/float64(b.N), "wal-syncs/s")
			b.ReportMetric(storetest.FsyncRate(b, 200), "disk-fsyncs/s")
		})
	}
}

// BenchmarkIdleNodes measures the database load of two idle stepd serve
// nodes, without and with 8 workers waiting in GetActivityTask long polls
// (spread over the nodes): the transactions per second of the database
// (pg_stat_database, xact_commit + xact_rollback) over 10 s. It counts
// every session of the database: point STEPD_TEST_POSTGRES at a database
// nothing else uses.
func BenchmarkIdleNodes(b *testing.B) {
	bin := os.Getenv("STEPD_BENCH_BIN")
	if bin == "" {
		bin = buildStepd(b)
	}
	for _, workers := range []int{0, 8} {
		b.Run(fmt.Sprintf("nodes=2/workers=%d", workers), func(b *testing.B) {
			var rate float64
			for range b.N {
				rate += benchIdle(b, bin, 2, workers)
			}
			b.ReportMetric(rate/float64(b.N), "db-xacts/s")
		})
	}
}

func benchIdle(b *testing.B, bin string, nodes, workers int) float64 {
	b.StopTimer()
	c := startCluster(b, bin, nodes)
	var act struct{ ActivityArn string }
	if err := c.call(0, "CreateActivity", map[string]string{"name": "idle"}, &act); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for w := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				body, _ := json.Marshal(map[string]string{"activityArn": act.ActivityArn, "workerName": fmt.Sprint("w", w)})
				req, _ := http.NewRequestWithContext(ctx, "POST", c.urls[w%len(c.urls)], bytes.NewReader(body))
				req.Header.Set("X-Amz-Target", "AWSStepFunctions.GetActivityTask")
				req.Header.Set("Content-Type", "application/x-amz-json-1.0")
				if resp, err := c.http.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	xacts := func() int64 {
		var n int64
		if err := c.db.QueryRow(context.Background(), `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	time.Sleep(3 * time.Second) // the workers are waiting; the statistics caught up
	b.StartTimer()
	x0, t0 := xacts(), time.Now()
	time.Sleep(10 * time.Second)
	x1, t1 := xacts(), time.Now()
	b.StopTimer()
	return float64(x1-x0-1) / t1.Sub(t0).Seconds() // the first reading's own transaction
}

type nodesResult struct {
	rate, walSyncs float64
	// CPU seconds of the stepd processes and of their PostgreSQL backends
	// per unit of work (a transition, a start).
	nodeCPU, dbCPU float64
}

// benchApp is the application_name of the nodes' database connections,
// so that the benchmark finds their backends' processes.
const benchApp = "stepd-bench-nodes"

// procCPU returns the CPU time (user and system) a process has used; 0
// when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// cpu returns the CPU time of the nodes and of their database backends.
func (c *benchCluster) cpu(b *testing.B) (nodes, db time.Duration) {
	for _, p := range c.procs {
		nodes += procCPU(p.Process.Pid)
	}
	rows, err := c.db.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, benchApp)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	for _, pid := range pids {
		db += procCPU(int(pid))
	}
	return nodes, db
}

// benchCluster is n stepd serve processes over one fresh schema.
type benchCluster struct {
	dsn   string
	urls  []string
	procs []*exec.Cmd
	db    *pgx.Conn
	http  *http.Client
}

func startCluster(b *testing.B, bin string, n int, extra ...string) *benchCluster {
	b.Helper()
	c := &benchCluster{dsn: pgtest.DSN(b) + "&application_name=" + benchApp, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	dir := b.TempDir()
	for i := range n {
		addr := freeAddr(b)
		args := append([]string{"--store", c.dsn, "--log-level", "warn", "--console=false"}, extra...)
		c.procs = append(c.procs, startServe(b, bin, addr, filepath.Join(dir, fmt.Sprint("data", i)), args...))
		c.urls = append(c.urls, "http://"+addr)
	}
	b.Cleanup(func() {
		for _, p := range c.procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range c.procs {
			done := make(chan struct{})
			go func() { _, _ = p.Process.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = p.Process.Kill()
				<-done
			}
		}
	})
	var err error
	if c.db, err = pgx.Connect(context.Background(), c.dsn); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.db.Close(context.Background()) })
	return c
}

// call sends one API request to node i and decodes its answer into out.
func (c *benchCluster) call(i int, op string, in, out any) error {
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest("POST", c.urls[i%len(c.urls)], bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %d %s", op, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// walSyncs returns PostgreSQL's count of WAL flushes (server-wide).
func (c *benchCluster) walSyncs(b *testing.B) int64 {
	var n int64
	if err := c.db.QueryRow(context.Background(), `SELECT wal_sync FROM pg_stat_wal`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func (c *benchCluster) createMachine(b *testing.B, name, def string) string {
	var out struct{ StateMachineArn string }
	if err := c.call(0, "CreateStateMachine", map[string]string{"name": name, "definition": def, "roleArn": "arn:aws:iam::123456789012:role/x"}, &out); err != nil {
		b.Fatal(err)
	}
	return out.StateMachineArn
}

func benchTransitions(b *testing.B, bin string, n int) nodesResult {
	b.StopTimer()
	mocks := filepath.Join(b.TempDir(), "mocks.json")
	states := map[string]string{}
	var def strings.Builder
	def.WriteString(`{"StartAt":"T0","States":{`)
	for i := range nodesChain {
		next := fmt.Sprintf(`"Next":"T%d"`, i+1)
		if i == nodesChain-1 {
			next = `"End":true`
		}
		if i > 0 {
			def.WriteString(",")
		}
		fmt.Fprintf(&def, `"T%d":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f",%s}`, i, next)
		states[fmt.Sprint("T", i)] = "Ok"
	}
	def.WriteString(`}}`)
	mc, _ := json.Marshal(map[string]any{
		"StateMachines":   map[string]any{"chain": map[string]any{"TestCases": map[string]any{"fast": states}}},
		"MockedResponses": map[string]any{"Ok": map[string]any{"0": map[string]any{"Return": map[string]bool{"ok": true}}}},
	})
	if err := os.WriteFile(mocks, mc, 0o644); err != nil {
		b.Fatal(err)
	}
	c := startCluster(b, bin, n, "--mock-config", mocks)
	sm := c.createMachine(b, "chain", def.String())
	ctx := context.Background()
	syncs0 := c.walSyncs(b)
	node0, db0 := c.cpu(b)
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	sem := make(chan struct{}, 64)
	for i := range nodesExecutions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.call(i, "StartExecution", map[string]string{"stateMachineArn": sm + "#fast", "name": fmt.Sprint("e", i), "input": "{}"}, nil); err != nil {
				if failed.Add(1) == 1 {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for {
		var running int64
		if err := c.db.QueryRow(ctx, `SELECT count(*) FROM executions WHERE status = 'RUNNING'`).Scan(&running); err != nil {
			b.Fatal(err)
		}
		if running == 0 {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d executions still running after 5 minutes", running)
		}
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	syncs := c.walSyncs(b) - syncs0
	node1, db1 := c.cpu(b)
	var succeeded int64
	if err := c.db.QueryRow(ctx, `SELECT count(*) FROM executions WHERE status = 'SUCCEEDED'`).Scan(&succeeded); err != nil {
		b.Fatal(err)
	}
	if succeeded != nodesExecutions {
		b.Fatalf("%d executions succeeded, want %d", succeeded, nodesExecutions)
	}
	const transitions = nodesExecutions * nodesChain
	return nodesResult{rate: transitions / elapsed.Seconds(), walSyncs: float64(syncs) / elapsed.Seconds(),
		nodeCPU: (node1 - node0).Seconds() / transitions, dbCPU: (db1 - db0).Seconds() / transitions}
}

func benchStarts(b *testing.B, bin string, n int) nodesResult {
	b.StopTimer()
	const clients, starts = 64, 6000
	c := startCluster(b, bin, n)
	sm := c.createMachine(b, "parked", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)
	syncs0 := c.walSyncs(b)
	node0, db0 := c.cpu(b)
	b.StartTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= starts {
					return
				}
				// Each client keeps to one node.
				if err := c.call(w, "StartExecution", map[string]string{"stateMachineArn": sm, "name": fmt.Sprint("e", i), "input": "{}"}, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	syncs := c.walSyncs(b) - syncs0
	node1, db1 := c.cpu(b)
	return nodesResult{rate: starts / elapsed.Seconds(), walSyncs: float64(syncs) / elapsed.Seconds(),
		nodeCPU: (node1 - node0).Seconds() / starts, dbCPU: (db1 - db0).Seconds() / starts}
}
