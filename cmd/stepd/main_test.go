package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runMain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	t.Parallel()
	pass := writeFile(t, "pass.json", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":300,"Next":"P"},"P":{"Type":"Pass","Parameters":{"sum.$":"States.MathAdd($.a, 1)"},"End":true}}}`)
	fail := writeFile(t, "fail.json", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"it broke"}}}`)
	bare := writeFile(t, "bare.json", `{"StartAt":"F","States":{"F":{"Type":"Fail"}}}`)
	badTarget := writeFile(t, "bad.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`)
	badJSON := writeFile(t, "badjson.json", `{"StartAt": `)
	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		stdout   string
		stderr   string
		contains bool
	}{
		{name: "succeeds", args: []string{"run", pass, "--input", `{"a":41}`}, code: 0, stdout: "{\"sum\":42}\n"},
		{name: "flags before file", args: []string{"run", "--input", `{"a":1}`, pass}, code: 0, stdout: "{\"sum\":2}\n"},
		{name: "input from stdin", stdin: `{"a":2}`, args: []string{"run", pass, "--input", "@-"}, code: 0, stdout: "{\"sum\":3}\n"},
		{name: "fails", args: []string{"run", fail}, code: 1, stderr: "error: Boom", contains: true},
		{name: "json format", args: []string{"run", fail, "--format", "json"}, code: 1, stdout: `"status":"FAILED","output":null,"error":"Boom","cause":"it broke","history":[`, contains: true},
		{name: "json format, Fail without Error", args: []string{"run", bare, "--format", "json"}, code: 1, stdout: `"status":"FAILED","output":null,"error":null,"cause":null,"history":[`, contains: true},
		{name: "missing target", args: []string{"run", badTarget}, code: 2, stderr: "bad.json:/States/A/Next: ERROR MISSING_TRANSITION_TARGET: Missing 'Next' target: Nowhere", contains: true},
		{name: "malformed definition", args: []string{"run", badJSON}, code: 2, stderr: "badjson.json:1:13: invalid JSON: unexpected end of input", contains: true},
		{name: "malformed input", args: []string{"run", pass, "--input", `{"a":`}, code: 2, stderr: "--input", contains: true},
		{name: "no file", args: []string{"run"}, code: 2},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2},
		{name: "bad format", args: []string{"run", pass, "--format", "xml"}, code: 2},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, tt.stdin, tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tt.name, code, tt.code, stderr)
		}
		check := func(what, got, want string) {
			if want == "" {
				return
			}
			if tt.contains && !strings.Contains(got, want) || !tt.contains && got != want {
				t.Errorf("%s: %s = %q, want %q", tt.name, what, got, want)
			}
		}
		check("stdout", stdout, tt.stdout)
		check("stderr", stderr, tt.stderr)
	}
}

// TestExamples runs the committed examples' case files, as CI must.
func TestExamples(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runMain(t, "", "test", "../../examples", "-v")
	if code != 0 || !strings.Contains(stdout, " passed, 0 failed") {
		t.Fatalf("stepd test examples: exit %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "0 passed") {
		t.Fatalf("no example case ran:\n%s", stdout)
	}
}

// TestTestCommandConfig runs a case whose Task is served by a registry
// handler: named with --config, or by the case's "config" member; the
// handler's relative Dir is the registry file's folder, not the working
// directory.
func TestTestCommandConfig(t *testing.T) {
	t.Parallel()
	handlers := t.TempDir()
	if err := os.WriteFile(filepath.Join(handlers, "answer.sh"), []byte("cat >/dev/null; echo '{\"answer\":42}'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(handlers, "registry.json")
	if err := os.WriteFile(reg, []byte(`{"Resources":{"arn:aws:states:::local:answer":{"Command":["sh","answer.sh"],"Dir":"."}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := writeFile(t, "case.json", `{"name":"answer","definition":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::local:answer","End":true}}},"input":{},"expected":{"status":"SUCCEEDED","output":{"answer":42}}}`)
	code, stdout, stderr := runMain(t, "", "test", c, "--config", reg)
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("--config: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runMain(t, "", "test", c)
	if code != 1 || !strings.Contains(stdout, "got FAILED") {
		t.Fatalf("without a registry: exit %d\n%s", code, stdout)
	}
	rel, err := filepath.Rel(filepath.Dir(c), reg)
	if err != nil {
		t.Fatal(err)
	}
	named := writeFile(t, "named.json", `{"name":"named","config":"`+filepath.ToSlash(rel)+`","definition":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::local:answer","End":true}}},"input":{},"expected":{"status":"SUCCEEDED","output":{"answer":42}}}`)
	code, stdout, stderr = runMain(t, "", "test", named)
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("case config: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestTestCommandReportsFailures(t *testing.T) {
	t.Parallel()
	c := writeFile(t, "case.json", `{"name":"wrong","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}},"input":{},"expected":{"status":"SUCCEEDED","output":2}}`)
	code, stdout, _ := runMain(t, "", "test", c)
	if code != 1 || !strings.Contains(stdout, "--- FAIL: wrong") || !strings.Contains(stdout, "want 2") || !strings.HasSuffix(stdout, "0 passed, 1 failed\n") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = runMain(t, "", "test", c, "--format", "json")
	if code != 1 || !strings.Contains(stdout, `{"name":"wrong","kind":"execution","passed":false,"status":"SUCCEEDED","output":1`) {
		t.Fatalf("json: exit %d:\n%s", code, stdout)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "good.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	warn := writeFile(t, "warn.json", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"D"}]},"D":{"Type":"Succeed"}}}`)
	code, stdout, _ := runMain(t, "", "validate", good, warn)
	if code != 0 || !strings.Contains(stdout, "good.json: OK") || !strings.Contains(stdout, "warn.json:/States/C: WARNING MISSING_DEFAULT:") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = runMain(t, "", "validate", "../../examples/nested-loop/published.json", "--format", "json")
	want := `{"result":"FAIL","diagnostics":[{"code":"MISSING_TRANSITION_TARGET","location":"/States/IsNotificationUserCountReached/Choices[0]/Next","message":"Missing 'Next' target: NotifyOverflow","severity":"ERROR"},{"code":"MISSING_TRANSITION_TARGET","location":"/States/NotifyAlerts","message":"State \"NotifyAlerts\" is not reachable.","severity":"ERROR"}],"truncated":false}` + "\n"
	if code != 1 || stdout != want {
		t.Errorf("exit %d:\n%s\nwant\n%s", code, stdout, want)
	}
}

func TestTestStateCommand(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "state.json", `{"Type":"Pass","InputPath":"$.a","Parameters":{"b.$":"$.x"},"Next":"Later"}`)
	code, stdout, stderr := runMain(t, "", "test-state", def, "--input", `{"a":{"x":7}}`)
	if code != 0 || !strings.Contains(stdout, `"status": "SUCCEEDED"`) || !strings.Contains(stdout, `"nextState": "Later"`) || !strings.Contains(stdout, `"afterParameters": {`) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	named := writeFile(t, "named.json", `{"Type":"Pass","Parameters":{"name.$":"$$.Execution.Name"},"End":true}`)
	code, stdout, stderr = runMain(t, "", "test-state", named, "--context", `{"Execution":{"Name":"nightly"}}`)
	if code != 0 || !strings.Contains(stdout, `nightly`) {
		t.Fatalf("--context: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runMain(t, "", "test-state", named, "--context", `{"Pokedex":{}}`)
	if code == 0 || !strings.Contains(stderr, "Field 'Pokedex' is not allowed") {
		t.Fatalf("bad --context: exit %d\n%s", code, stderr)
	}
	sdk := writeFile(t, "sdk.json", `{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:lambda:getFunction","End":true}`)
	code, _, stderr = runMain(t, "", "test-state", sdk, "--mock-result", `{"Configuration":{"MemorySize":127}}`)
	if code == 0 || !strings.Contains(stderr, "Mock result schema validation error: Field 'MemorySize' is less than the minimum value") {
		t.Fatalf("invalid --mock-result: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = runMain(t, "", "test-state", sdk, "--mock-result", `{"Configuration":{"MemorySize":127}}`, "--mock-validation", "NONE")
	if code != 0 || !strings.Contains(stdout, `"status": "SUCCEEDED"`) {
		t.Fatalf("--mock-validation NONE: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRunAppliesServerChecks: stepd run applies the server's name, input
// and definition size checks.
func TestRunAppliesServerChecks(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "my.machine.json")
	if err := os.WriteFile(def, []byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runMain(t, "", "run", def, "--execution-name", "order.2024-01-01"); code != exitOK {
		t.Fatalf("accepted names: exit %d: %s %s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--execution-name", "a b"}, "Invalid Name: 'a b'"},
		{[]string{"--name", "x/y"}, "Invalid Name: 'x/y'"},
		{[]string{"--input", `"` + strings.Repeat("x", 256*1024) + `"`}, "262144"},
	} {
		code, _, errOut := runMain(t, "", append([]string{"run", def}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("stepd run %s: exit %d, %q; want exit %d naming %q", c.args[0], code, errOut, exitUsage, c.want)
		}
	}
	bad := filepath.Join(dir, "bad name.json")
	if err := os.WriteFile(bad, []byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runMain(t, "", "run", bad); code != exitUsage || !strings.Contains(errOut, "--name") {
		t.Errorf("a file name AWS would not accept as a name: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runMain(t, "", "run", bad, "--name", "ok"); code != exitOK {
		t.Errorf("--name overrides the file name: exit %d, %q", code, errOut)
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, []byte(`{"Comment":"`+strings.Repeat("x", 1<<20)+`","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runMain(t, "", "run", huge); code != exitUsage || !strings.Contains(errOut, "1048576") {
		t.Errorf("a definition over 1 MiB: exit %d, %q", code, errOut)
	}
}

// TestBenchRefusesPeerFlagsWithoutPeer: the peer's flags are refused by
// name without --peer rather than ignored.
func TestBenchRefusesPeerFlagsWithoutPeer(t *testing.T) {
	code, _, errOut := runMain(t, "", "bench", "--node", "/usr/bin/node", "--peer-dir", "/tmp/x")
	if code != exitUsage || !strings.Contains(errOut, "--node") || !strings.Contains(errOut, "--peer-dir") || !strings.Contains(errOut, "--peer") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}
