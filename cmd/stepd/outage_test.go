package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// outageLoops is how many times an execution of outageDef goes round its
// loop (a Pass that carries the pad, then a Wait of 1 s): long enough
// that the executions are still running when the disk fills or the
// database stops, short enough that they end within seconds after.
const outageLoops = 3

// outageDef is an execution that keeps writing: each round commits steps
// that carry its pad (a few KB that do not compress), and waits 1 s.
var outageDef = fmt.Sprintf(`{"StartAt":"Step","States":{
 "Step":{"Type":"Pass","Parameters":{"id.$":"$.id","i.$":"States.MathAdd($.i, 1)","pad.$":"$.pad"},"Next":"More"},
 "More":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericGreaterThanEquals":%d,"Next":"Done"}],"Default":"Nap"},
 "Nap":{"Type":"Wait","Seconds":1,"Next":"Step"},
 "Done":{"Type":"Pass","Parameters":{"id.$":"$.id","i.$":"$.i","pad.$":"$.pad"},"End":true}}}`, outageLoops)

// outagePad is execution id's pad: 4,000 hexadecimal digits of its own,
// which neither SQLite nor PostgreSQL's TOAST compresses much.
func outagePad(id int) string {
	r := rand.New(rand.NewPCG(uint64(id), 27))
	b := make([]byte, 2000)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

// outageExecArg matches the execution a log line of the engine is about,
// outageAttempts the attempts it counts.
var outageExecArg, outageAttempts = regexp.MustCompile(`execution=(\S+)`), regexp.MustCompile(`attempts=(\d+)`)

// commitWatch follows a node's log: the executions whose step the store
// refused ("cannot commit a step"), and when each moved on again.
type commitWatch struct {
	mu       sync.Mutex
	refused  map[string]time.Time // first refusal
	moved    map[string]time.Time // last "moves on"
	attempts int                  // the most attempts at one step refused
}

func newCommitWatch() *commitWatch {
	return &commitWatch{refused: map[string]time.Time{}, moved: map[string]time.Time{}}
}

func (w *commitWatch) line(line string) {
	m := outageExecArg.FindStringSubmatch(line)
	if m == nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case strings.Contains(line, "the store cannot commit a step"):
		if _, ok := w.refused[m[1]]; !ok {
			w.refused[m[1]] = now
		}
	case strings.Contains(line, "the store still cannot commit a step"):
		if a := outageAttempts.FindStringSubmatch(line); a != nil {
			n, _ := strconv.Atoi(a[1])
			w.attempts = max(w.attempts, n)
		}
	case strings.Contains(line, "the store took the step; the execution moves on"):
		w.moved[m[1]] = now
	}
}

// refusedCount is how many executions the store refused a step of.
func (w *commitWatch) refusedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.refused)
}

// mostAttempts is the most attempts at one step the store refused.
func (w *commitWatch) mostAttempts() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attempts
}

// resumed returns, for each execution refused, how long after since it
// moved on (a negative duration: not since), and the longest of them.
func (w *commitWatch) resumed(since time.Time) (slowest time.Duration, stuck []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for arn := range w.refused {
		at, ok := w.moved[arn]
		if !ok || at.Before(since) {
			stuck = append(stuck, arn)
			continue
		}
		slowest = max(slowest, at.Sub(since))
	}
	return slowest, stuck
}

// outageNode is a stepd serve process whose exit, unless the test stops
// it, fails the test.
type outageNode struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	stopping atomic.Bool
}

func startOutageNode(t *testing.T, watch func(string), addr, data string, extra ...string) *outageNode {
	t.Helper()
	n := &outageNode{cmd: startServeWatched(t, watch, stepdBinary(t), addr, data, extra...), exited: make(chan struct{})}
	// startServe's cleanup kills the process: registered after it, this
	// runs first.
	t.Cleanup(func() { n.stopping.Store(true) })
	go func() {
		state, err := n.cmd.Process.Wait()
		close(n.exited)
		if !n.stopping.Load() {
			t.Errorf("stepd serve (pid %d) exited on its own: %v %v", n.cmd.Process.Pid, state, err)
		}
	}()
	return n
}

// stop ends the node with SIGTERM and waits for it.
func (n *outageNode) stop(t *testing.T) {
	n.stopping.Store(true)
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(time.Minute): // bounds a failure only
		t.Fatal("stepd serve did not stop within a minute of SIGTERM")
	}
}

// mountTmpfs mounts a tmpfs of mb MiB on a new folder and unmounts it when
// the test ends; it skips the test where mounting is not allowed. Call it
// before starting what uses the folder, so that their cleanups run first.
func mountTmpfs(t *testing.T, mb int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "stepd-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm,mode=0755", mb), "tmpfs", dir).CombinedOutput(); err != nil {
		os.Remove(dir)
		t.Skipf("a disk-full test needs a small filesystem of its own, and mount -t tmpfs failed (it needs root or CAP_SYS_ADMIN): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			_ = exec.Command("umount", "-l", dir).Run()
		}
		os.Remove(dir)
	})
	return dir
}

// fill writes a file in dir until its filesystem is full, and returns the
// file's path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for _, size := range []int{1 << 20, 4096, 1} {
		for {
			_, err := f.Write(buf[:size])
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return path
}

// outageRun is the executions of outageDef a test starts on a node, and
// what it checks of them.
type outageRun struct {
	t        *testing.T
	cl       *sfn.Client // retries as the SDK does
	quick    *sfn.Client // does not retry: the node's first answer
	smARN    string
	arns     []string
	ids      map[string]int // execution → id
	nextName int
}

func newOutageRun(t *testing.T, addr string) *outageRun {
	cl := restartingClient(addr)
	r := &outageRun{t: t, cl: cl, quick: sfn.New(cl.Options(), func(o *sfn.Options) { o.RetryMaxAttempts = 1 }), ids: map[string]int{}}
	sm, err := cl.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String("outage"), Definition: aws.String(outageDef),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	r.smARN = aws.ToString(sm.StateMachineArn)
	return r
}

// start starts the next execution with cl; an execution it acknowledges
// must end.
func (r *outageRun) start(cl *sfn.Client) (time.Duration, error) {
	id := r.nextName
	r.nextName++
	t0 := time.Now()
	ex, err := cl.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(r.smARN), Name: aws.String(fmt.Sprintf("e%d", id)),
		Input: aws.String(fmt.Sprintf(`{"id":%d,"i":0,"pad":%q}`, id, outagePad(id)))})
	took := time.Since(t0)
	if err == nil {
		r.arns = append(r.arns, aws.ToString(ex.ExecutionArn))
		r.ids[aws.ToString(ex.ExecutionArn)] = id
	}
	return took, err
}

// startUntilRefused starts executions with the quick client until the
// node refuses one; it checks that the refusal is a prompt
// ServiceUnavailable whose message holds cause, and returns the message.
func (r *outageRun) startUntilRefused(cause string) string {
	deadline := time.Now().Add(time.Minute) // bounds a failure only
	for {
		took, err := r.start(r.quick)
		if err != nil {
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "ServiceUnavailable" || !strings.Contains(ae.ErrorMessage(), cause) {
				r.t.Fatalf("StartExecution refused with %v, want ServiceUnavailable naming %q", err, cause)
			}
			if took > answerWithin() {
				r.t.Errorf("StartExecution took %v to answer ServiceUnavailable, want < %v", took, answerWithin())
			}
			r.t.Logf("StartExecution answered in %v: %s: %s", took.Round(time.Millisecond), ae.ErrorCode(), ae.ErrorMessage())
			return ae.ErrorMessage()
		}
		if time.Now().After(deadline) {
			r.t.Fatal("StartExecution still succeeds a minute after the outage began")
		}
	}
}

// checkReads checks that the node still answers reads: every execution
// is described (and none has failed), listed, and its history read. The
// reads go through the client that retries, as the SDK does: a 503 is
// still an error after the retries.
func (r *outageRun) checkReads() (running int) {
	ctx := context.Background()
	for _, arn := range r.arns {
		d, err := r.cl.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			r.t.Fatalf("DescribeExecution during the outage: %v", err)
		}
		switch d.Status {
		case types.ExecutionStatusRunning:
			running++
		case types.ExecutionStatusSucceeded:
		default:
			r.t.Errorf("%s is %s during the outage (%s: %s), want it paused", arn, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
		if _, err := r.cl.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 5}); err != nil {
			r.t.Fatalf("GetExecutionHistory during the outage: %v", err)
		}
	}
	listed := 0
	var token *string
	for {
		page, err := r.cl.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(r.smARN), NextToken: token})
		if err != nil {
			r.t.Fatalf("ListExecutions during the outage: %v", err)
		}
		listed += len(page.Executions)
		if token = page.NextToken; token == nil {
			break
		}
	}
	if listed != len(r.arns) {
		r.t.Errorf("ListExecutions during the outage lists %d executions, want %d", listed, len(r.arns))
	}
	return running
}

// resumeWithin bounds how long after an outage ends the executions may
// take to end, and answerWithin how long a refusal may take while it
// lasts: issue 27's bounds (10 s, 5 s) in the long soaks, which report
// the figures; the default suite, which may run on a starved machine
// under -race, bounds them loosely enough to catch only executions that
// never resume and calls that hang.
func resumeWithin() time.Duration { return time.Duration(sized(120, 10)) * time.Second }

func answerWithin() time.Duration { return time.Duration(sized(30, 5)) * time.Second }

// waitAllEnded waits (up to within) until every execution acknowledged
// has ended, checks that each succeeded with its exact output and a
// history without lost or duplicated events, and returns how long after
// since the last one ended (its stop date: the server's clock is this
// machine's).
func (r *outageRun) waitAllEnded(since time.Time, within time.Duration) time.Duration {
	ctx := context.Background()
	left := append([]string(nil), r.arns...)
	var last time.Time
	for len(left) > 0 {
		var still []string
		for _, arn := range left {
			d, err := r.cl.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
			if err != nil {
				r.t.Fatalf("DescribeExecution: %v", err)
			}
			if d.Status == types.ExecutionStatusRunning {
				still = append(still, arn)
				continue
			}
			if stop := aws.ToTime(d.StopDate); stop.After(last) {
				last = stop
			}
			id := r.ids[arn]
			want := map[string]any{"id": float64(id), "i": float64(outageLoops), "pad": outagePad(id)}
			var got map[string]any
			if d.Status != types.ExecutionStatusSucceeded || json.Unmarshal([]byte(aws.ToString(d.Output)), &got) != nil || !reflect.DeepEqual(got, want) {
				r.t.Errorf("%s: %s %.200s %s %s, want SUCCEEDED with {id:%d, i:%d, pad}", arn, d.Status, aws.ToString(d.Output), aws.ToString(d.Error), aws.ToString(d.Cause), id, outageLoops)
			}
		}
		left = still
		if len(left) > 0 && time.Since(since) > within {
			r.t.Fatalf("%d of %d executions still running %v after the outage ended, e.g. %s", len(left), len(r.arns), within, left[0])
		}
		if len(left) > 0 {
			time.Sleep(100 * time.Millisecond) // the poll's interval
		}
	}
	for _, arn := range r.arns {
		checkHistory(r.t, r.cl, arn)
	}
	if took := last.Sub(since); took > within {
		r.t.Errorf("the last execution ended %v after the outage ended, want within %v", took, within)
	}
	return max(0, last.Sub(since))
}

// waitRefused waits until the store has refused a step of n executions
// (they pause), and one of them attempts times.
func waitRefused(t *testing.T, w *commitWatch, n, attempts int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // bounds a failure only
	for w.refusedCount() < n || w.mostAttempts() < attempts {
		if time.Now().After(deadline) {
			t.Fatalf("within a minute the store refused a step of %d executions, at most %d times, want %d executions and %d times", w.refusedCount(), w.mostAttempts(), n, attempts)
		}
		time.Sleep(20 * time.Millisecond) // the poll's interval
	}
}

// TestDiskFullSQLite keeps the SQLite file on a 30 MB tmpfs of the test's
// own, starts 50 executions that keep writing, and fills the disk: a
// StartExecution must be answered at once with ServiceUnavailable naming
// the full disk, reads must go on, the executions must pause rather than
// fail; once the filler is deleted they must all resume within 10 s, with
// no restart, and end SUCCEEDED with their exact outputs; the file's
// integrity check must be clean.
func TestDiskFullSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("a disk-full test skipped in -short mode")
	}
	disk := mountTmpfs(t, 30)
	data := filepath.Join(disk, "data")
	w := newCommitWatch()
	addr := freeAddr(t)
	node := startOutageNode(t, w.line, addr, data)
	r := newOutageRun(t, addr)
	testDiskFull(t, r, w, disk, "the disk holding the SQLite file is full", sized(50, 200))
	node.stop(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "stepd.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("PRAGMA integrity_check: %q %v, want ok", ok, err)
	}
}

// testDiskFull is the disk-full test on a node whose store's files are on
// the tmpfs disk (see TestDiskFullSQLite).
func testDiskFull(t *testing.T, r *outageRun, w *commitWatch, disk, cause string, n int) {
	for range n {
		if _, err := r.start(r.cl); err != nil {
			t.Fatalf("start before the disk is full: %v", err)
		}
	}
	filler := fill(t, disk)
	full := time.Now()
	msg := r.startUntilRefused(cause)
	// The drivers' back-off has grown to 1.6 s: space returns while they
	// wait, as it would.
	waitRefused(t, w, min(10, n), 6)
	t0 := time.Now()
	running := r.checkReads()
	t.Logf("the reads during the outage took %v", time.Since(t0).Round(time.Millisecond))
	t.Logf("disk full: %d executions acknowledged, %d of them paused (the store refused a step), %d running; StartExecution refused with %q",
		len(r.arns), w.refusedCount(), running, msg)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	took := r.waitAllEnded(back, resumeWithin())
	slowest, stuck := w.resumed(back)
	if len(stuck) > 0 {
		t.Errorf("%d executions paused by the full disk did not move on after it, e.g. %s", len(stuck), stuck[0])
	}
	t.Logf("the disk was full for %v; once space returned the paused executions moved on within %v, and all %d ended SUCCEEDED within %v",
		back.Sub(full).Round(time.Millisecond), slowest.Round(time.Millisecond), len(r.arns), took.Round(time.Millisecond))
}

// TestDiskFullPostgres is TestDiskFullSQLite on PostgreSQL: a private
// server whose data folder is on a tmpfs of the test's own and its
// write-ahead log on the ordinary disk, so that a full disk makes
// PostgreSQL refuse writes (SQLSTATE 53100, "could not extend file")
// rather than stop, as it does when its WAL cannot be written.
func TestDiskFullPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("a disk-full test skipped in -short mode")
	}
	disk := mountTmpfs(t, 64)
	wal, err := os.MkdirTemp("", "stepd-wal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(wal) })
	if err := os.Chmod(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	pg := pgtest.Private(t, pgtest.PrivateOptions{Dir: disk, WALDir: wal})
	w := newCommitWatch()
	addr := freeAddr(t)
	startOutageNode(t, w.line, addr, t.TempDir(), "--store", pg.DSN())
	r := newOutageRun(t, addr)
	testDiskFull(t, r, w, disk, "disk is full", sized(50, 200))
}

// TestPostgresOutage stops a private PostgreSQL server (as a crash) for
// about 5 s while executions run on two nodes: calls that need the
// database must be answered promptly with ServiceUnavailable, no node
// may exit, and once the server is back every execution must end
// SUCCEEDED with its exact output within 10 s.
func TestPostgresOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("an outage test skipped in -short mode")
	}
	pg := pgtest.Private(t, pgtest.PrivateOptions{})
	w := newCommitWatch()
	addrs := []string{freeAddr(t), freeAddr(t)}
	for _, addr := range addrs {
		startOutageNode(t, w.line, addr, t.TempDir(), "--store", pg.DSN())
	}
	r := newOutageRun(t, addrs[0])
	for range sized(50, 200) {
		if _, err := r.start(r.cl); err != nil {
			t.Fatalf("start before the outage: %v", err)
		}
	}
	outage := time.Duration(sized(5, 30)) * time.Second
	pg.Stop("immediate")
	down := time.Now()
	ctx := context.Background()
	for i, addr := range addrs {
		q := sfn.New(restartingClient(addr).Options(), func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
		for _, call := range []struct {
			name string
			fn   func() error
		}{
			{"StartExecution", func() error {
				_, err := q.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(r.smARN), Name: aws.String(fmt.Sprintf("down-%d", i))})
				return err
			}},
			{"DescribeExecution", func() error {
				_, err := q.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(r.arns[0])})
				return err
			}},
			{"ListExecutions", func() error {
				_, err := q.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(r.smARN)})
				return err
			}},
		} {
			t0 := time.Now()
			err := call.fn()
			took := time.Since(t0)
			if code := apiErrorCode(err); code != "ServiceUnavailable" || took > answerWithin() {
				t.Errorf("node %d: %s while PostgreSQL is down: %v (code %q) in %v, want ServiceUnavailable in < %v", i, call.name, err, code, took, answerWithin())
			}
			t.Logf("node %d: %s answered %s in %v while PostgreSQL was down: %v", i, call.name, apiErrorCode(err), took.Round(time.Millisecond), err)
		}
	}
	waitRefused(t, w, 1, 1)
	if rest := outage - time.Since(down); rest > 0 {
		time.Sleep(rest) // the outage's length, not an ordering
	}
	pg.Start()
	back := time.Now()
	took := r.waitAllEnded(back, resumeWithin())
	t.Logf("PostgreSQL was down for %v; all %d executions ended SUCCEEDED within %v of its return (%d had a step refused)",
		back.Sub(down).Round(time.Millisecond), len(r.arns), took.Round(time.Millisecond), w.refusedCount())
}
