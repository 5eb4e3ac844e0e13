package command

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func obj(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func handler(name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", "handlers", name))
	if err != nil {
		panic(err)
	}
	return p
}

func TestCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name  string
		cmd   Invoker
		out   string
		err   string
		cause string // substring
	}{
		{name: "echo input", cmd: Invoker{Path: handler("echo.sh")}, out: `{"x":[1,"a"],"u":"é"}`},
		{name: "lambda error", cmd: Invoker{Path: handler("lambda-error.sh")}, err: "ValueError", cause: `{"errorType":"ValueError","errorMessage":"bad"}`},
		{name: "ASL error after logs", cmd: Invoker{Path: handler("asl-error.sh")}, err: "My.Error", cause: `{"why":1}`},
		{name: "plain failure", cmd: Invoker{Path: handler("plain-failure.sh")}, err: "States.TaskFailed", cause: "(exit status 2): line 1\noops: disk full"},
		{name: "not JSON", cmd: Invoker{Path: handler("not-json.sh")}, err: "States.TaskFailed", cause: "printed output that is not JSON"},
		{name: "missing program", cmd: Invoker{Path: filepath.Join(dir, "nope")}, err: "States.TaskFailed", cause: "no such file"},
		{name: "no output is null", cmd: Invoker{Path: handler("silent.sh")}, out: `null`},
		{name: "environment and dir", cmd: Invoker{Path: handler("env.sh"), Env: []string{"EXTRA=yes"}, Dir: dir},
			out: `{"resource":"arn:aws:states:::my:task","state":"Work","token":"tok-1","extra":"yes","dir":` + strconv.Quote(dir) + `}`},
		{name: "args", cmd: Invoker{Path: "/bin/sh", Args: []string{"-c", `printf '[%s]' "$0"`, "7"}}, out: `[7]`},
		// Lambda's error shape from a program that exits 0 fails only a
		// handler marked Lambda-shaped, as a Url handler's 200 answer.
		{name: "error shape, exit 0", cmd: Invoker{Path: "/bin/sh", Args: []string{"-c", `echo '{"errorType":"CustomError","errorMessage":"boom"}'`}},
			out: `{"errorType":"CustomError","errorMessage":"boom"}`},
		{name: "error shape, exit 0, Lambda-shaped", cmd: Invoker{Path: "/bin/sh", Args: []string{"-c", `echo '{"errorType":"CustomError","errorMessage":"boom"}'`}, LambdaShaped: true},
			err: "CustomError", cause: `{"errorType":"CustomError","errorMessage":"boom"}`},
		{name: "result, Lambda-shaped", cmd: Invoker{Path: "/bin/sh", Args: []string{"-c", `echo '{"Error":"kept","n":1}'`}, LambdaShaped: true},
			out: `{"Error":"kept","n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.cmd.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::my:task", StateName: "Work", TaskToken: "tok-1", Input: obj(t, `{"x":[1,"a"],"u":"é"}`)})
			if tt.err != "" {
				if r.Error != tt.err || !strings.Contains(r.Cause, tt.cause) {
					t.Errorf("got %+v, want error %s with cause containing %q", r, tt.err, tt.cause)
				}
				return
			}
			if r.Failed() || value.String(r.Output) != tt.out {
				t.Errorf("got %+v (output %s), want %s", r, value.String(r.Output), tt.out)
			}
		})
	}
}

// readPID waits until the program has written a process ID and a newline
// to path, and returns it.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if s := string(b); strings.HasSuffix(s, "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				t.Fatalf("%s: %q", path, s)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never started")
		}
	}
}

// waitGone waits until process pid has gone (killed, or exited and reaped).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (process %d) is still running", what, pid)
		}
	}
}

// TestCommandStraggler: a child the program leaves running, holding its
// standard output open, neither delays the answer nor spoils it, and is
// killed once the program has exited. The child would run for an hour:
// Invoke returns while it runs (the deadline only bounds a failure, an
// Invoke that waits for it).
func TestCommandStraggler(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	c := &Invoker{Path: handler("straggler.sh"), Args: []string{pidFile}}
	done := make(chan task.Result, 1)
	go func() { done <- c.Invoke(context.Background(), &task.Request{Input: value.NewObject(0)}) }()
	var r task.Result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Invoke waited for the child holding its standard output")
	}
	if r.Failed() || value.String(r.Output) != `{"done":true}` {
		t.Errorf("got %+v (output %s), want {\"done\":true}", r, value.String(r.Output))
	}
	waitGone(t, readPID(t, pidFile), "the child left behind")
}

func TestCommandStderrTail(t *testing.T) {
	t.Parallel()
	c := &Invoker{Path: "/bin/sh", Args: []string{"-c", `i=0; while [ $i -lt 2000 ]; do echo "log line $i" >&2; i=$((i+1)); done; exit 4`}}
	r := c.Invoke(context.Background(), &task.Request{Input: value.NewObject(0)})
	if r.Error != "States.TaskFailed" || !strings.HasSuffix(r.Cause, "log line 1999") || strings.Contains(r.Cause, "log line 0\n") || len(r.Cause) > maxStderrTail+200 {
		t.Errorf("cause of %d bytes: %.200q...", len(r.Cause), r.Cause)
	}
}

// TestCommandCancel checks that cancelling kills the program and its
// children: Invoke returns the stop as the task's failure, and the child
// is gone. (hang.sh waits for a child that would run for an hour; the
// deadline only bounds a failure, a cancellation that kills nothing.)
func TestCommandCancel(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	c := &Invoker{Path: handler("hang.sh"), Args: []string{pidFile}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan task.Result, 1)
	go func() { done <- c.Invoke(ctx, &task.Request{Input: value.NewObject(0)}) }()
	pid := readPID(t, pidFile)
	cancel()
	select {
	case r := <-done:
		if r.Error != "States.TaskFailed" || !strings.Contains(r.Cause, "stopped") || !strings.Contains(r.Cause, context.Canceled.Error()) {
			t.Errorf("cancelled command: %+v", r)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Invoke did not return once cancelled")
	}
	// The child (a grandchild of stepd) is gone too.
	waitGone(t, pid, "the child of the cancelled command")
}

// TestCommandStderrLogged checks that what a handler writes to standard
// error is logged with its task, on success too.
func TestCommandStderrLogged(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	c := &Invoker{Path: "/bin/sh", Args: []string{"-c", `echo "progress 50%" >&2; echo '{"ok":true}'`}, Log: log}
	const exec = "arn:aws:states:us-east-1:123456789012:execution:sm:e1"
	r := c.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::my:task", StateName: "Work", Input: value.NewObject(0),
		Context: value.ObjectOf("Execution", value.ObjectOf("Id", exec))})
	if r.Failed() {
		t.Fatalf("failed: %+v", r)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	want := map[string]any{"level": "INFO", "msg": "task handler stderr", "execution": exec, "state": "Work",
		"resource": "arn:aws:states:::my:task", "stderr": "progress 50%", "exit": "exit status 0"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v (%s)", k, rec[k], v, buf.String())
		}
	}
	buf.Reset()
	quiet := &Invoker{Path: "/bin/sh", Args: []string{"-c", `echo 1`}, Log: log}
	quiet.Invoke(context.Background(), &task.Request{Input: value.NewObject(0)})
	if buf.Len() != 0 {
		t.Errorf("a handler without stderr logged %q", buf.String())
	}
}

// TestTailRuneBoundary: the tail of a long stderr is cut on a rune
// boundary, never inside a character.
func TestTailRuneBoundary(t *testing.T) {
	for shift := range 4 {
		s := strings.Repeat("x", shift) + strings.Repeat("é€💥", maxStderrTail)
		got := tail(s)
		if !utf8.ValidString(got) || !strings.HasPrefix(got, "...") || len(got) > maxStderrTail+3 || !strings.HasSuffix(s, got[3:]) {
			t.Errorf("tail of %d bytes (shift %d): %d bytes, valid %v, prefix %q", len(s), shift, len(got), utf8.ValidString(got), got[:min(len(got), 8)])
		}
	}
}
