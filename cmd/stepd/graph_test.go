package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGraphCommand(t *testing.T) {
	t.Parallel()
	def := "../../examples/job-poller/job-poller.json"
	code, stdout, stderr := runMain(t, "", "graph", def)
	if code != exitOK || !strings.HasPrefix(stdout, "flowchart TD\n") || !strings.Contains(stdout, `{"Job Complete?"}`) {
		t.Fatalf("mermaid: exit %d\n%s%s", code, stdout, stderr)
	}
	svg := filepath.Join(t.TempDir(), "poller.svg")
	if code, _, stderr := runMain(t, "", "graph", def, "-o", svg); code != exitOK {
		t.Fatalf("svg: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(data), `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(string(data), `data-state="Get Job Status"`) {
		t.Fatalf("svg file: %v\n%.300s", err, data)
	}
	if code, stdout, _ := runMain(t, `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`, "graph", "-", "--format", "svg"); code != exitOK || !strings.Contains(stdout, `data-state="A"`) {
		t.Errorf("standard input: exit %d\n%s", code, stdout)
	}
	// What stepd run takes: YAML, substitutions, templates.
	const sample = "../../template/testdata/sam/samples/order-api.yaml"
	for _, tt := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"graph", writeFile(t, "d.yaml", "StartAt: A\nStates:\n  A: {Type: Pass, End: true}\n")}, `n2["A<br/>Pass"]`, ""},
		{[]string{"graph", writeFile(t, "s.json", `{"StartAt":"${First}","States":{"${First}":{"Type":"Pass","End":true}}}`), "--definition-substitutions", "First=Go"}, `n2["Go<br/>Pass"]`, ""},
		{[]string{"graph", sample, "--state-machine", "OrderWorkflow"}, `"Validate<br/>Task"`, "RunOrder"},
		{[]string{"graph", sample, "--state-machine", "ShippingWorkflow", "--parameter", "AWS::StackName=sam-app"}, `"RunOrder<br/>Task"`, "Validate"},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != exitOK || !strings.Contains(stdout, tt.want) || tt.not != "" && strings.Contains(stdout, tt.not) {
			t.Errorf("%v: exit %d\n%s%s", tt.args, code, stdout, stderr)
		}
	}
	bad := writeFile(t, "bad.json", "{\"StartAt\": \"A\",\n \"States\": {,}}")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"graph", def, "--format", "png"}, `--format must be mermaid or svg, not "png"`},
		{[]string{"graph", bad}, "bad.json:2:13: invalid JSON"},
		{[]string{"graph", writeFile(t, "arr.json", `[1]`)}, "a definition is a JSON object with States"},
		{[]string{"graph"}, "stepd graph: missing DEFINITION\nrun 'stepd graph -h' for help\n"},
		{[]string{"graph", sample}, "the template has 2 state machines (OrderWorkflow, ShippingWorkflow): choose one with --state-machine"},
		{[]string{"graph", sample, "--state-machine", "OrderWorkflow", "--parameter", "Nope=1"}, "--parameter Nope"},
	} {
		code, _, stderr := runMain(t, "", tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestGraphCoverage: the coverage report of stepd test colours the states
// of the picture: entered green, never entered red.
func TestGraphCoverage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	def := filepath.Join(dir, "m.json")
	if err := os.WriteFile(def, []byte(`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"Yes"}],"Default":"No"},"Yes":{"Type":"Succeed"},"No":{"Type":"Succeed"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(dir, "case.json")
	if err := os.WriteFile(c, []byte(`{"name":"yes","definitionFile":"m.json","input":{"x":1},"expected":{"status":"SUCCEEDED"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "cover.json")
	if code, stdout, _ := runMain(t, "", "test", c, "--cover-report", report); code != exitOK || !strings.Contains(stdout, "coverage: 66.7% of states (2/3), 50% of branches (1/2)") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	code, stdout, stderr := runMain(t, "", "graph", def, "--format", "svg", "--cover-report", report)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`data-state="C" data-status="succeeded"`, `data-state="Yes" data-status="succeeded"`, `data-state="No" data-status="failed"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	code, stdout, _ = runMain(t, "", "graph", def, "--cover-report", report)
	if code != exitOK || !strings.Contains(stdout, "class n2,n3 covered") || !strings.Contains(stdout, "class n4 uncovered") {
		t.Errorf("mermaid: exit %d\n%s", code, stdout)
	}
}
