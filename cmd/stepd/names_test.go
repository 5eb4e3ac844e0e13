package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMachineNameFromFile: a definition file X.asl.json or X.asl.yaml
// names the state machine X (stepd run's ARNs, serve's --definition), and
// --name overrides it; serve's --name names the --definition before it.
func TestMachineNameFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonDef := filepath.Join(dir, "orders.asl.json")
	yamlDef := filepath.Join(dir, "payments.asl.yaml")
	if err := os.WriteFile(jsonDef, []byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"sm.$":"$$.StateMachine.Name"},"End":true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yamlDef, []byte("StartAt: A\nStates:\n  A:\n    Type: Pass\n    Parameters:\n      sm.$: $$.StateMachine.Name\n    End: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", jsonDef}, "orders"},
		{[]string{"run", yamlDef}, "payments"},
		{[]string{"run", jsonDef, "--name", "Orders-v2"}, "Orders-v2"},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		var out struct{ SM string }
		if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || out.SM != tt.want {
			t.Errorf("stepd %s: exit %d, %q %s; want the state machine %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
		}
	}

	var files definitionFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&files, "definition", "")
	fs.Var(nameFlag{&files}, "name", "")
	if err := fs.Parse([]string{"--definition", jsonDef, "--definition", yamlDef, "--name", "pay"}); err != nil {
		t.Fatal(err)
	}
	sms, err := readStateMachines(&defFlags{}, files.files, files.names, nil, "us-east-1", "123456789012")
	if err != nil || len(sms) != 2 || sms[0].Input.Name != "orders" || sms[1].Input.Name != "pay" || sms[1].Input.RoleARN != "arn:aws:iam::123456789012:role/stepd-pay" {
		t.Fatalf("serve --definition: %+v, %v", sms, err)
	}
	for _, args := range [][]string{
		{"--name", "x", "--definition", jsonDef},                // before its --definition
		{"--definition", jsonDef, "--name", "a", "--name", "b"}, // twice
	} {
		var files definitionFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(&files, "definition", "")
		fs.Var(nameFlag{&files}, "name", "")
		if err := fs.Parse(args); err == nil {
			t.Errorf("serve %v: no error", args)
		}
	}
	_, err = readStateMachines(&defFlags{}, []string{jsonDef}, []string{"no spaces allowed"}, nil, "us-east-1", "123456789012")
	if err == nil || !strings.Contains(err.Error(), `the state machine name "no spaces allowed" is not one AWS accepts`) || !strings.Contains(err.Error(), "from --name") {
		t.Errorf("a bad --name: %v", err)
	}
}

// TestDuplicateKeyWarned: a YAML key given twice is kept (the last value)
// and said on stderr, naming both lines, by every command that reads
// definitions.
func TestDuplicateKeyWarned(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "twice.asl.yaml")
	if err := os.WriteFile(path, []byte("StartAt: A\nStates:\n  A:\n    Type: Pass\n    Result: 1\n    Result: 2\n    End: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", path}, {"validate", path}, {"graph", path}} {
		code, stdout, stderr := runMain(t, "", args...)
		if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "lines 5 and 6") {
			t.Errorf("stepd %s: exit %d, stderr %q; want a warning naming lines 5 and 6", strings.Join(args, " "), code, stderr)
		}
		if args[0] == "run" && !strings.Contains(stdout, "2") {
			t.Errorf("stepd run: output %q, want the last value kept", stdout)
		}
	}
}
