package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// fibDef computes $f(20) by exponential recursion: about 22,000 calls.
const fibDef = `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass",
	"Output":"{% ($f := function($n) { $n <= 1 ? $n : $f($n - 1) + $f($n - 2) }; $f(20)) %}","End":true}}}`

// The budget flags of stepd run and test-state set the budget; bad values
// are refused, naming the flag.
func TestBudgetFlags(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "fib.json", fibDef)
	long := writeFile(t, "fib25.json", strings.Replace(fibDef, "$f(20)", "$f(25)", 1))  // 250,000 calls
	small := writeFile(t, "fib12.json", strings.Replace(fibDef, "$f(20)", "$f(12)", 1)) // 465 calls
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "default budget", args: []string{"run", small}, code: 0, stdout: "144\n"},
		{name: "steps", args: []string{"run", def, "--eval-steps", "10_000"}, code: 1,
			stderr: "the evaluation exceeded its budget of 10,000 steps."},
		{name: "time", args: []string{"run", long, "--eval-steps", "0", "--eval-memory", "0", "--eval-timeout", "1ms"}, code: 1,
			stderr: "the evaluation exceeded its budget of 1ms of time."},
		{name: "memory", args: []string{"run", long, "--eval-steps", "0", "--eval-memory", "64KiB", "--eval-timeout", "0"}, code: 1,
			stderr: "the evaluation exceeded its budget of 65,536 bytes allocated."},
		{name: "no limits", args: []string{"run", long, "--eval-steps", "0", "--eval-timeout", "0", "--eval-memory", "0"}, code: 0, stdout: "75025\n"},
		{name: "value limit", args: []string{"run", writeFile(t, "arr.json", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"a.$":"States.ArrayRange(1, 1000, 1)"},"End":true}}}`),
			"--value-limit", "1KB"}, code: 1, stderr: "exceeded its budget of 1,000 bytes."},
		{name: "path values", args: []string{"run", writeFile(t, "desc.json", `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"a.$":"$..*"},"End":true}}}`),
			"--input", `[[[[[[1]]]]]]`, "--path-values", "3"}, code: 1, stderr: "collected more than its budget of 3 values."},
		{name: "test-state", args: []string{"test-state", def, "--state", "P", "--eval-steps", "1000"}, code: 1, stdout: "exceeded its budget of 1,000 steps."},
		{name: "bad timeout", args: []string{"run", def, "--eval-timeout", "2"}, code: 2, stderr: `stepd run: --eval-timeout "2": want a duration`},
		{name: "negative timeout", args: []string{"run", def, "--eval-timeout", "-1s"}, code: 2, stderr: `--eval-timeout "-1s": want a duration such as 2s or 500ms, or 0 for no limit: must not be negative`},
		{name: "bad steps", args: []string{"run", def, "--eval-steps", "-3"}, code: 2, stderr: `stepd run: --eval-steps "-3": want a whole number`},
		{name: "bad memory", args: []string{"run", def, "--eval-memory", "lots"}, code: 2, stderr: `stepd run: --eval-memory "lots": want a size`},
		{name: "zero value limit", args: []string{"run", def, "--value-limit", "0"}, code: 2, stderr: `stepd run: --value-limit "0": want a size such as 16MiB: must be more than 0`},
		{name: "huge value limit", args: []string{"run", def, "--value-limit", "3GiB"}, code: 2, stderr: `--value-limit "3GiB": want a size such as 16MiB: must be at most 2GiB`},
		{name: "bad path values", args: []string{"test-state", def, "--path-values", "x"}, code: 2, stderr: `stepd test-state: --path-values "x": want a whole number`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d (stdout %q, stderr %q)", tt.name, code, tt.code, stdout, stderr)
			continue
		}
		if tt.stdout != "" && !strings.Contains(stdout, tt.stdout) {
			t.Errorf("%s: stdout %q, want %q", tt.name, stdout, tt.stdout)
		}
		if tt.stderr != "" && !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%s: stderr %q, want %q", tt.name, stderr, tt.stderr)
		}
	}
}

// stepd serve takes the budget from its flags and the environment: an
// execution started through the API fails with the cause naming the
// limit set, and a bad value stops the server from starting.
func TestServeBudgetFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds stepd")
	}
	bin := stepdBinary(t)
	ctx := context.Background()

	out, err := exec.Command(bin, "serve", "--data", "", "--addr", freeAddr(t), "--eval-memory", "12 parsecs").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), `stepd serve: --eval-memory "12 parsecs": want a size`) {
		t.Errorf("bad --eval-memory: exit %d, output %q", code, out)
	}
	bad := exec.Command(bin, "serve", "--data", "", "--addr", freeAddr(t))
	bad.Env = append(os.Environ(), "STEPD_EVAL_TIMEOUT=soon")
	out, err = bad.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), `stepd serve: STEPD_EVAL_TIMEOUT="soon": want a duration`) {
		t.Errorf("bad STEPD_EVAL_TIMEOUT: exit %d, output %q", code, out)
	}

	addr := freeAddr(t)
	t.Setenv("STEPD_EVAL_STEPS", "1_000") // the flag below wins over it
	proc := startServe(t, bin, addr, "", "--eval-steps", "5000")
	t.Cleanup(func() { _ = proc.Process.Kill(); _, _ = proc.Process.Wait() })
	c := restartingClient(addr)
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("fib"), Definition: aws.String(fibDef),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	d := waitFinished(t, c, aws.ToString(ex.ExecutionArn))
	if cause := aws.ToString(d.Cause); d.Status != "FAILED" || !strings.Contains(cause, "exceeded its budget of 5,000 steps.") {
		t.Errorf("execution %s: %s: %s; want FAILED by the budget of 5,000 steps", d.Status, aws.ToString(d.Error), cause)
	}
}

func exitCode(err error) int {
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"128MiB", "1GB", "0", "12 k", "9223372036854775807", "8EiB", "1_000b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
	})
}
