// Package command serves Task states by running local programs (Invoker):
// the task's input on standard input, its result on standard output.
//
// It must not import the engine beside it, the other backends but
// task/lambdashape, or anything above (service, api, cmd/stepd …); registry
// wires it.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

// Invoker serves a task by running a local program: the task's effective
// input is written to its standard input as JSON, and its standard output is
// read as the JSON result.
//
// A non-zero exit fails the task. When the program printed a JSON object
// with errorType/errorMessage (as Lambda reports errors) or Error/Cause, on
// standard output or standard error, those name the error and cause;
// otherwise the error is States.TaskFailed with a cause naming the exit
// status and the end of standard error. A successful run must print one
// JSON value (nothing at all stands for null); other output fails the task
// with States.TaskFailed. With LambdaShaped set, a successful run whose
// output is a JSON object with an errorType (Lambda's error shape) fails
// the task too, as that error.
//
// Besides Env, the program finds STEPD_RESOURCE, STEPD_STATE_NAME and, for
// .waitForTaskToken tasks, STEPD_TASK_TOKEN in its environment. It runs in
// its own process group, which is killed when ctx is done and when the
// program exits (so children it leaves behind do not outlive the task).
//
// What the program writes to standard error is logged with the task (its
// execution, state, resource and exit status) at info level, on Log.
type Invoker struct {
	Path string
	Args []string
	Env  []string // added to the environment of stepd
	Dir  string
	// LambdaShaped takes an output in Lambda's error shape
	// ({"errorType": …, "errorMessage": …}) as the function's error even
	// when the program exits 0.
	LambdaShaped bool
	// Log receives the program's standard error (nil: slog.Default()).
	Log *slog.Logger
}

// maxStderrTail is how much of standard error a failure cause quotes.
const maxStderrTail = 2048

// waitDelay bounds how long Invoke waits for the program's standard input
// to be taken after it exited or was killed.
const waitDelay = 2 * time.Second

// Waits reports true (task.Waiting): it runs a program, so the engine calls
// it on a goroutine of its own.
func (c *Invoker) Waits(*task.Request) bool { return true }

// Invoke runs the command.
func (c *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	// Standard output and error go to files rather than pipes, so that a
	// child left running cannot hold Invoke up by keeping a pipe open.
	stdout, err := os.CreateTemp("", "stepd-stdout-*")
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s could not start: %v", c.Path, err)}
	}
	defer removeFile(stdout)
	stderr, err := os.CreateTemp("", "stepd-stderr-*")
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s could not start: %v", c.Path, err)}
	}
	defer removeFile(stderr)

	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Env = append(cmd.Env, "STEPD_RESOURCE="+req.Resource, "STEPD_STATE_NAME="+req.StateName)
	if req.TaskToken != "" {
		cmd.Env = append(cmd.Env, "STEPD_TASK_TOKEN="+req.TaskToken)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole process group, so children go too.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = waitDelay
	cmd.Stdin = strings.NewReader(value.String(req.Input))
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	err = cmd.Run()
	if cmd.Process != nil {
		// The task is over: children it left behind go too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s was stopped: %v", c.Path, ctx.Err())}
	}
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		err = nil // it answered without reading all its input
	}
	out, rerr := readFile(stdout)
	errText, _ := readFile(stderr)
	c.logStderr(ctx, req, cmd, errText)
	if rerr != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the output of the command %s could not be read: %v", c.Path, rerr)}
	}
	if err != nil {
		if r, ok := errorObject(out); ok {
			return r
		}
		if r, ok := errorObject(errText); ok {
			return r
		}
		var exit *exec.ExitError
		status := err.Error()
		if errors.As(err, &exit) {
			status = exit.ProcessState.String()
		}
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s failed (%s): %s", c.Path, status, tail(string(errText)))}
	}
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return task.Result{Output: nil}
	}
	if c.LambdaShaped {
		if r, ok := lambdashape.ShapedError(out); ok {
			return r
		}
	}
	v, perr := value.Parse(out)
	if perr != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s printed output that is not JSON (%v): %s", c.Path, perr, tail(string(out)))}
	}
	return task.Result{Output: v}
}

// logStderr logs what the program wrote to standard error (its end, when
// long), with the task it served.
func (c *Invoker) logStderr(ctx context.Context, req *task.Request, cmd *exec.Cmd, errText []byte) {
	if len(bytes.TrimSpace(errText)) == 0 {
		return
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	if !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	status := "not started"
	if cmd.ProcessState != nil {
		status = cmd.ProcessState.String()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "task handler stderr", slog.String("execution", executionOf(req)), slog.String("state", req.StateName),
		slog.String("resource", req.Resource), slog.String("command", c.Path), slog.String("exit", status), slog.String("stderr", tail(string(errText))))
}

// executionOf is the execution ARN in a task's Context object
// ($$.Execution.Id), or "".
func executionOf(req *task.Request) string {
	ctxObj, ok := req.Context.(*value.Object)
	if !ok {
		return ""
	}
	ex, _ := ctxObj.Get("Execution")
	exObj, ok := ex.(*value.Object)
	if !ok {
		return ""
	}
	id, _ := exObj.Get("Id")
	s, _ := id.(string)
	return s
}

func readFile(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func removeFile(f *os.File) {
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// errorObject recognises a Lambda-style or ASL-style error object: the
// whole text, or its last line (after log lines).
func errorObject(data []byte) (task.Result, bool) {
	data = bytes.TrimSpace(data)
	if r, ok := lambdashape.ErrorResult(data); ok {
		return r, true
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return lambdashape.ErrorResult(bytes.TrimSpace(data[i+1:]))
	}
	return task.Result{}, false
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxStderrTail {
		cut := len(s) - maxStderrTail
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++ // on a rune boundary: never half a character
		}
		s = "..." + s[cut:]
	}
	return s
}
