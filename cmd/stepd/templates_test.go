package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const samTemplate = "../../template/testdata/sam/template.yaml"

// registryFor serves the SAM template's functions and DynamoDB writes with
// cat (the result is the input).
func registryFor(t *testing.T, stage, stack string) string {
	t.Helper()
	return writeFile(t, "registry.json", `{"Functions":{"check-stock-`+stage+`":{"Command":["cat"]},"`+stack+`-charge":{"Command":["cat"]}},`+
		`"Resources":{"arn:aws:states:::dynamodb:putItem":{"Command":["cat"]}}}`)
}

func TestRunTemplate(t *testing.T) {
	t.Parallel()
	reg := registryFor(t, "dev", "stepd-template")
	code, stdout, stderr := runMain(t, "", "run", samTemplate, "--state-machine", "orders-dev", "--config", reg, "--input", `{"orderId":"o1"}`)
	if code != 0 || stdout != `{"orderId":"o1"}`+"\n" {
		t.Fatalf("by name: exit %d\n%s%s", code, stdout, stderr)
	}
	// By logical id, with a parameter and a pseudo parameter.
	reg = registryFor(t, "prod", "shop")
	code, stdout, stderr = runMain(t, "", "run", samTemplate, "--state-machine", "OrderStateMachine", "--parameter", "Stage=prod", "--parameter", "AWS::StackName=shop",
		"--config", reg, "--input", `{"orderId":"o2"}`)
	if code != 0 || stdout != `{"orderId":"o2"}`+"\n" {
		t.Fatalf("with parameters: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{samTemplate}, "the template has 2 state machines (OrderStateMachine, ShipStateMachine): choose one with --state-machine"},
		{[]string{samTemplate, "--state-machine", "Nope"}, `has no state machine "Nope"`},
		{[]string{samTemplate, "--state-machine", "OrderStateMachine", "--parameter", "Stage=qa"}, "AllowedValues"},
		{[]string{"../../template/testdata/sam/statemachine/orders.asl.yaml"}, "orders.asl.yaml:/States/CheckStock/Resource: ERROR UNRESOLVED_SUBSTITUTION: ${CheckStockFunctionArn} has no substitution and is not a resource (give it with --definition-substitutions CheckStockFunctionArn=VALUE)"},
		{[]string{"../../template/testdata/sam/statemachine/orders.asl.yaml", "--state-machine", "X"}, "is a state machine definition, not a SAM or CloudFormation template"},
	} {
		code, _, stderr := runMain(t, "", append([]string{"run"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, stderr, c.want)
		}
	}
}

func TestRunSubstitutions(t *testing.T) {
	t.Parallel()
	const fn = "arn:aws:lambda:us-east-1:123456789012:function:"
	reg := writeFile(t, "registry.json", `{"Functions":{"a":{"Command":["cat"]},"b":{"Command":["cat"]}},"Resources":{"arn:aws:states:::dynamodb:putItem":{"Command":["cat"]}}}`)
	subs := writeFile(t, "subs.yaml", "CheckStockFunctionArn: "+fn+"a\nChargeFunctionArn: "+fn+"b\n")
	def := "../../template/testdata/sam/statemachine/orders.asl.yaml"
	code, stdout, stderr := runMain(t, "", "run", def, "--definition-substitutions", subs, "--definition-substitutions", "OrdersTable=orders", "--config", reg, "--input", `{"orderId":"o3"}`)
	if code != 0 || stdout != `{"orderId":"o3"}`+"\n" || stderr != "" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// A JSON definition with a placeholder outside a string, and a warning
	// for one left in text.
	j := writeFile(t, "wait.json", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":${Delay},"Next":"P"},"P":{"Type":"Pass","Result":"${Greeting}","End":true}}}`)
	code, stdout, stderr = runMain(t, "", "run", j, "--definition-substitutions", "Delay=5")
	if code != 0 || stdout != `"${Greeting}"`+"\n" || !strings.Contains(stderr, "/States/P/Result: WARNING UNRESOLVED_SUBSTITUTION: ${Greeting} has no substitution and is left as text") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runMain(t, "", "run", j, "--definition-substitutions", "nofile")
	if code != exitUsage || !strings.Contains(stderr, `--definition-substitutions "nofile": no such file, and not NAME=VALUE`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestValidateTemplates(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runMain(t, "", "validate", samTemplate, "../../template/testdata/cfn/sub.yaml")
	want := samTemplate + "#OrderStateMachine: OK\n" + samTemplate + "#ShipStateMachine: OK\n" +
		"../../template/testdata/cfn/sub.yaml#Jobs:/Comment: WARNING UNRESOLVED_SUBSTITUTION: ${Literal} has no substitution and is left as text (add Literal to the state machine's DefinitionSubstitutions, or give it with --definition-substitutions Literal=VALUE)\n" +
		"../../template/testdata/cfn/sub.yaml#Jobs: OK\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d\n%s%s\nwant\n%s", code, stdout, stderr, want)
	}
	code, _, stderr = runMain(t, "", "validate", "../../template/testdata/cfn/template.json")
	if code != exitUsage || !strings.Contains(stderr, "parameter BucketName has no Default: give it with --parameter BucketName=VALUE") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, _ = runMain(t, "", "validate", "../../template/testdata/cfn/template.json", "--parameter", "BucketName=b", "--format", "json")
	if code != 0 || stdout != `{"result":"OK","diagnostics":[],"truncated":false}`+"\n" {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	// A YAML definition with an error is located by its JSON pointer.
	bad := writeFile(t, "bad.yaml", "StartAt: A\nStates:\n  A:\n    Type: Pass\n    Next: Nowhere\n")
	code, stdout, _ = runMain(t, "", "validate", bad)
	if code != 1 || !strings.Contains(stdout, "bad.yaml:/States/A/Next: ERROR MISSING_TRANSITION_TARGET") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
}

func TestTestCommandTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	abs, err := filepath.Abs(samTemplate)
	if err != nil {
		t.Fatal(err)
	}
	reg := registryFor(t, "prod", "stepd-template")
	c := filepath.Join(dir, "case.json")
	body := `{"name":"orders","definitionFile":"` + filepath.ToSlash(abs) + `","stateMachine":"OrderStateMachine","parameters":{"Stage":"prod"},` +
		`"config":"` + filepath.ToSlash(reg) + `","input":{"orderId":"o4"},"expected":{"status":"SUCCEEDED","output":{"orderId":"o4"}}}`
	if err := os.WriteFile(c, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "", "test", c)
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	// A definition file with a placeholder: refused until substituted.
	def := writeFile(t, "def.yaml", "StartAt: T\nStates:\n  T:\n    Type: Task\n    Resource: ${Fn}\n    End: true\n")
	c2 := filepath.Join(dir, "case2.json")
	body = `{"name":"sub","definitionFile":"` + filepath.ToSlash(def) + `","config":"` + filepath.ToSlash(reg) + `","input":{"x":1},"expected":{"status":"SUCCEEDED","output":{"x":1}}}`
	if err := os.WriteFile(c2, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runMain(t, "", "test", c2)
	if code != 1 || !strings.Contains(stdout, "/States/T/Resource: ${Fn} has no substitution and is not a resource") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	code, stdout, stderr = runMain(t, "", "test", c2, "--definition-substitutions", "Fn=arn:aws:lambda:us-east-1:123456789012:function:check-stock-prod")
	if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
		t.Fatalf("substituted: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestServeTemplate starts stepd serve with a template and a YAML
// definition and drives it with the AWS CLI.
func TestServeTemplate(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		skipUnlessCI(t, "the AWS CLI is not installed")
	}
	reg := registryFor(t, "dev", "stepd-template")
	hello := writeFile(t, "hello.yaml", "StartAt: P\nStates:\n  P:\n    Type: Pass\n    Result:\n      greeting: ${Greeting}\n    End: true\n")
	url := startInProcess(t, "--data", "", "--config", reg, "--template", samTemplate, "--definition", hello, "--definition-substitutions", "Greeting=hi")
	cli := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"stepfunctions", "--endpoint-url", url, "--region", "us-east-1", "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("aws %v: %v\n%s", args, err, stderr)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("aws %v: %v\n%s", args, err, out)
		}
		return m
	}
	list := cli("list-state-machines")
	var names []string
	for _, sm := range list["stateMachines"].([]any) {
		names = append(names, sm.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "ShipStateMachine,hello,orders-dev" {
		t.Errorf("state machines: %v", names)
	}
	const base = "arn:aws:states:us-east-1:123456789012:stateMachine:"
	d := cli("describe-state-machine", "--state-machine-arn", base+"orders-dev")
	if role, _ := d["roleArn"].(string); !strings.HasPrefix(role, "arn:aws:iam::123456789012:role/stepd-template-OrderStateMachineRole-") || !strings.Contains(d["definition"].(string), `"Resource":"arn:aws:lambda:us-east-1:123456789012:function:check-stock-dev"`) {
		t.Errorf("orders-dev: %v", d)
	}
	tags := cli("list-tags-for-resource", "--resource-arn", base+"orders-dev")
	if b, _ := json.Marshal(tags["tags"]); !strings.Contains(string(b), `{"key":"team","value":"orders"}`) {
		t.Errorf("tags: %s", b)
	}
	run := func(sm string) map[string]any {
		t.Helper()
		x := cli("start-execution", "--state-machine-arn", base+sm, "--input", `{"orderId":"o5"}`)
		for deadline := time.Now().Add(30 * time.Second); ; {
			d := cli("describe-execution", "--execution-arn", x["executionArn"].(string))
			if d["status"] != "RUNNING" {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still running", sm)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The second state machine runs the first (.sync), as the template's
	// Ref wired it.
	if d := run("ShipStateMachine"); d["status"] != "SUCCEEDED" || !strings.Contains(d["output"].(string), `"Output":{"orderId":"o5"}`) {
		t.Errorf("ShipStateMachine: %v", d)
	}
	if d := run("hello"); d["status"] != "SUCCEEDED" || d["output"] != `{"greeting":"hi"}` {
		t.Errorf("hello: %v", d)
	}
}

// TestReadStateMachines: the --definition and --template files are read
// with their substitutions, and a template given as a definition, a
// definition given as a template and a placeholder left in a Resource are
// refused. (The server's own test checks that loading them again updates
// them.)
func TestReadStateMachines(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "p.yaml", "StartAt: P\nStates:\n  P: {Type: Pass, Result: '${V}', End: true}\n")
	for _, v := range []string{"one", "two"} {
		f := &defFlags{subs: multiFlag{"V=" + v}}
		sms, err := readStateMachines(f, []string{def}, nil, nil, "us-east-1", "123456789012")
		if err != nil {
			t.Fatal(err)
		}
		if len(sms) != 1 || sms[0].Input.Name != "p" || sms[0].Input.Type != "STANDARD" || sms[0].Input.RoleARN != "arn:aws:iam::123456789012:role/stepd-p" ||
			!strings.Contains(sms[0].Input.Definition, `"Result":"`+v+`"`) {
			t.Fatalf("with %s: %+v", v, sms)
		}
	}
	tpl := writeFile(t, "t.yaml", "Resources:\n  p:\n    Type: AWS::Serverless::StateMachine\n    Properties:\n      Type: EXPRESS\n      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}\n")
	sms, err := readStateMachines(&defFlags{}, nil, nil, []string{tpl}, "us-east-1", "123456789012")
	if err != nil || len(sms) != 1 || sms[0].Input.Name != "p" || sms[0].Input.Type != "EXPRESS" || sms[0].Source != tpl+"#p" {
		t.Fatalf("template: %+v, %v", sms, err)
	}
	_, err = readStateMachines(&defFlags{}, []string{tpl}, nil, nil, "us-east-1", "123456789012")
	if err == nil || !strings.Contains(err.Error(), "a template: load it with --template") {
		t.Fatalf("got %v", err)
	}
	_, err = readStateMachines(&defFlags{}, nil, nil, []string{def}, "us-east-1", "123456789012")
	if err == nil || !strings.Contains(err.Error(), "not a SAM or CloudFormation template: load it with --definition") {
		t.Fatalf("got %v", err)
	}
	bad := writeFile(t, "bad.json", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${Fn}","End":true}}}`)
	_, err = readStateMachines(&defFlags{}, []string{bad}, nil, nil, "us-east-1", "123456789012")
	if err == nil || !strings.Contains(err.Error(), "${Fn} has no substitution and is not a resource") {
		t.Fatalf("got %v", err)
	}
}

func TestTestStateYAML(t *testing.T) {
	t.Parallel()
	st := writeFile(t, "state.yaml", "Type: Pass\nParameters:\n  n: ${N}\n  v.$: $.v\nEnd: true\n")
	code, stdout, stderr := runMain(t, "", "test-state", st, "--definition-substitutions", "N=12345678901234567890", "--input", `{"v":1.50}`)
	if code != 0 || !strings.Contains(stdout, "\"output\": {\n    \"n\": \"12345678901234567890\",\n    \"v\": 1.50\n  }") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain(t, "", "test-state", samTemplate, "--state-machine", "OrderStateMachine", "--state", "CheckStock", "--mock-result", `{"ok":true}`)
	if code != 0 || !strings.Contains(stdout, `"status": "SUCCEEDED"`) || !strings.Contains(stdout, `"nextState": "Charge"`) {
		t.Fatalf("template: exit %d\n%s%s", code, stdout, stderr)
	}
}
