package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/stepd/stepd/value"
)

// Command serves a task by running a local program: the task's effective
// input is written to its standard input as JSON, and its standard output is
// read as the JSON result.
//
// A non-zero exit fails the task. When the program printed a JSON object
// with errorType/errorMessage (as Lambda reports errors) or Error/Cause, on
// standard output or standard error, those name the error and cause;
// otherwise the error is States.TaskFailed with a cause naming the exit
// status and the end of standard error.
type Command struct {
	Path string
	Args []string
	Env  []string // added to the environment of stepd
	Dir  string
}

// maxStderrTail is how much of standard error a failure cause quotes.
const maxStderrTail = 2048

// Invoke runs the command.
func (c *Command) Invoke(ctx context.Context, req *Request) Result {
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	if req.TaskToken != "" {
		cmd.Env = append(cmd.Env, "STEPD_TASK_TOKEN="+req.TaskToken)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Kill the whole process group, so children go too.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.Stdin = strings.NewReader(value.String(req.Input))
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s was stopped: %v", c.Path, ctx.Err())}
	}
	if err != nil {
		if r, ok := errorObject(stdout.Bytes()); ok {
			return r
		}
		if r, ok := errorObject(stderr.Bytes()); ok {
			return r
		}
		var exit *exec.ExitError
		status := err.Error()
		if errors.As(err, &exit) {
			status = exit.ProcessState.String()
		}
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s failed (%s): %s", c.Path, status, tail(stderr.String()))}
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if len(out) == 0 {
		return Result{Output: nil}
	}
	v, perr := value.Parse(out)
	if perr != nil {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the command %s printed output that is not JSON (%v): %s", c.Path, perr, tail(string(out)))}
	}
	return Result{Output: v}
}

// errorObject recognises a Lambda-style or ASL-style error object.
func errorObject(data []byte) (Result, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Result{}, false
	}
	v, err := value.Parse(data)
	if err != nil {
		return Result{}, false
	}
	o := v.(*value.Object)
	if t, ok := o.Get("errorType"); ok {
		name, _ := t.(string)
		if name != "" {
			return Result{Error: name, Cause: string(data)}, true
		}
	}
	if e, ok := o.Get("Error"); ok {
		name, _ := e.(string)
		cause, _ := o.Get("Cause")
		cs, _ := cause.(string)
		if name != "" {
			return Result{Error: name, Cause: cs}, true
		}
	}
	return Result{}, false
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxStderrTail {
		s = "..." + s[len(s)-maxStderrTail:]
	}
	return s
}
