package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/internal/sdkhttp"
)

// The tests that need stepd serve as a process of its own (to kill it,
// restart it, or run several nodes) run this test binary as stepd instead
// of building stepd, which costs a link of the whole program per test:
// TestMain links the binary as "stepd" in a temporary folder, and a process
// started under that name is the stepd command. Under -race the server is
// race-instrumented too, and a race it reports fails the test (see
// procLog).
var stepdLink string

// nested is set in the environment of every process the tests start: a
// test binary that finds it and was not started as stepd was started by
// mistake (it would run the tests again, and they would start it again).
const nested = "STEPD_TEST_PARENT"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "stepd" {
		main()
		return
	}
	if os.Getenv(nested) != "" {
		fmt.Fprintf(os.Stderr, "%s: the test binary was started again by a test without the name stepd (%s=%s): not running the tests in it\n", os.Args[0], nested, os.Getenv(nested))
		os.Exit(3)
	}
	code := func() int {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "the test binary:", err)
			return 1
		}
		dir, err := os.MkdirTemp("", "stepd-test-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		stepdLink = filepath.Join(dir, "stepd")
		if err := os.Symlink(exe, stepdLink); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Setenv(nested, fmt.Sprint(os.Getpid()))
		defer awstest.StopEmulators()
		return m.Run()
	}()
	os.Exit(code)
}

// long reports whether the long soaks run at their full size (STEPD_LONG=1;
// .ci/run runs them as a step of their own). Without it each soak runs a
// smaller version that still fails on the defect it guards.
func long() bool { return os.Getenv("STEPD_LONG") == "1" }

// sized returns short, or full when the long soaks are asked for.
func sized(short, full int) int {
	if long() {
		return full
	}
	return short
}

// stepdBinary returns the program to run as stepd: this test binary,
// under the name stepd (see TestMain).
func stepdBinary(tb testing.TB) string {
	tb.Helper()
	if stepdLink == "" {
		tb.Fatal("TestMain did not link the test binary as stepd")
	}
	return stepdLink
}

// buildStepd builds the stepd binary into a temporary folder, for the
// benchmarks, which measure the binary users run (not a test binary, which
// -race would instrument).
func buildStepd(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "stepd")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeAddr returns a free address on 127.0.0.1 for a server that must keep
// it across restarts. The port is drawn below the kernel's ephemeral range
// (32768 and up on Linux), where the thousands of client connections these
// tests open take their local ports, so that a restarting server does not
// find its port taken by a client's connection.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			_ = ln.Close()
			return addr
		}
	}
	tb.Fatal("no free port on 127.0.0.1 between 20000 and 32000")
	return ""
}

// restartingClient is an SDK client of the stepd serve at addr that
// survives the server's restarts: connections do not outlive a stopped
// server, so there is no keep-alive.
func restartingClient(addr string) *sfn.Client {
	httpClient := sdkhttp.Wrap(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}})
	return sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + addr), HTTPClient: httpClient,
		Credentials: credentials.NewStaticCredentialsProvider("x", "x", "")})
}

// procLog copies a server process's output into the test's log, shown when
// the test fails (go test -v shows it always), and never to the test's own
// stdout. It notes a data race the race detector reports in the process.
type procLog struct {
	tb     testing.TB
	prefix string
	watch  func(line string) // when set, sees every line
	mu     sync.Mutex
	ended  bool // the test has ended: its log takes nothing more
	race   bool
}

func newProcLog(tb testing.TB, prefix string) *procLog {
	l := &procLog{tb: tb, prefix: prefix}
	tb.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.ended = true
		if l.race {
			tb.Errorf("%s reported a data race (see the log above)", prefix)
		}
	})
	return l
}

// copy logs each line of r until it ends; ready, when not nil, is closed at
// the first line that starts with "listening on".
func (l *procLog) copy(r io.Reader, ready chan<- struct{}) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := s.Text()
		if ready != nil && strings.HasPrefix(line, "listening on") {
			close(ready)
			ready = nil
		}
		if l.watch != nil {
			l.watch(line)
		}
		l.mu.Lock()
		if strings.Contains(line, "WARNING: DATA RACE") {
			l.race = true
		}
		if !l.ended {
			l.tb.Log(l.prefix + line)
		}
		l.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// startServe starts stepd serve (with extra flags) as a process of its own
// and waits until it listens. Its output goes to the test's log. The
// caller kills or stops it; a process still running when the test ends is
// killed then.
func startServe(tb testing.TB, bin, addr, data string, extra ...string) *exec.Cmd {
	tb.Helper()
	return startServeWatched(tb, nil, bin, addr, data, extra...)
}

// startServeWatched is startServe with watch, when not nil, called with
// each line the process writes.
func startServeWatched(tb testing.TB, watch func(line string), bin, addr, data string, extra ...string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", data}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	log := newProcLog(tb, fmt.Sprintf("[serve %s pid %d] ", addr, cmd.Process.Pid))
	log.watch = watch
	ready := make(chan struct{})
	outDone, errDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(outDone); log.copy(stdout, ready) }()
	go func() { defer close(errDone); log.copy(stderr, nil) }()
	tb.Cleanup(func() {
		// Kill is a no-op error for a process already waited for.
		_ = cmd.Process.Kill()
		<-outDone
		<-errDone
	})
	select {
	case <-ready:
	case <-outDone:
		tb.Fatalf("stepd serve --addr %s ended before it listened (its output is in the log above)", addr)
	case <-time.After(2 * time.Minute): // bounds a failure only
		tb.Fatalf("stepd serve --addr %s did not listen within 2 minutes", addr)
	}
	return cmd
}
