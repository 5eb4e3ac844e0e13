package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestUsageErrors: a usage error is one line naming the problem, then how
// to get help, on standard error, with exit code 2 and nothing on standard
// output; never the list of flags.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "m.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	nested := writeFile(t, "nested.json", `{"StartAt":"Start","States":{"Start":{"Type":"Parallel","Branches":[{"StartAt":"Left","States":{"Left":{"Type":"Pass","End":true}}}],"Next":"Each"},
		"Each":{"Type":"Map","ItemProcessor":{"StartAt":"Item","States":{"Item":{"Type":"Pass","End":true}}},"End":true}}}`)
	for _, tt := range []struct {
		args []string
		want string // the first line
		help string // the command of the help line ("" : stepd help)
	}{
		{[]string{"run", "--inptu", "{}", def}, "stepd run: unknown flag --inptu (did you mean --input?)", "run"},
		{[]string{"run", def, "--inptu={}"}, "stepd run: unknown flag --inptu (did you mean --input?)", "run"},
		{[]string{"run"}, "stepd run: missing DEFINITION", "run"},
		{[]string{"run", def, def}, `stepd run: unexpected argument "` + def + `" after DEFINITION "` + def + `": one DEFINITION is taken`, "run"},
		{[]string{"run", def, "--input"}, "stepd run: --input needs a value", "run"},
		{[]string{"run", def, "--format", "xml"}, `stepd run: --format must be text or json, not "xml"`, "run"},
		{[]string{"run", def, "--type", "express"}, `stepd run: --type must be STANDARD or EXPRESS, not "express"`, "run"},
		{[]string{"run", def, "--eval-steps", "many"}, `stepd run: --eval-steps "many": want a whole number of steps, or 0 for no limit: not a whole number of at least 0`, "run"},
		{[]string{"run", def, "--frobnicate"}, "stepd run: unknown flag --frobnicate", "run"},
		{[]string{"run", def, "--name", "a b"}, "stepd run: --name: Invalid Name: 'a b'", "run"},
		{[]string{"run", def, "--execution-name", "a/b"}, "stepd run: --execution-name: Invalid Name: 'a/b'", "run"},
		{[]string{"test", def, "--parameter", "Stage=prod"}, `stepd test: --parameter: a case gives its template's parameters with "parameters"`, "test"},
		{[]string{"test"}, "stepd test: missing PATH", "test"},
		{[]string{"test", def, "-v=maybe"}, `stepd test: -v "maybe": want true or false`, "test"},
		{[]string{"test", def, "--run", "("}, "stepd test: --run: error parsing regexp: missing closing ): `(`", "test"},
		{[]string{"validate"}, "stepd validate: missing FILE", "validate"},
		{[]string{"validate", def, "--fromat", "json"}, "stepd validate: unknown flag --fromat (did you mean --format?)", "validate"},
		{[]string{"graph"}, "stepd graph: missing DEFINITION", "graph"},
		{[]string{"graph", def, "-o"}, "stepd graph: -o needs a value", "graph"},
		{[]string{"graph", def, "--format", "png"}, `stepd graph: --format must be mermaid or svg, not "png"`, "graph"},
		{[]string{"test-state"}, "stepd test-state: missing DEFINITION", "test-state"},
		{[]string{"test-state", def, "--sate", "A"}, "stepd test-state: unknown flag --sate (did you mean --state?)", "test-state"},
		{[]string{"test-state", nested, "--state", "Nope"}, nested + `: --state "Nope": no such state; its states: Start, Left, Each, Item`, "test-state"},
		{[]string{"test-state", nested, "--state", "Lfet"}, nested + `: --state "Lfet": no such state (did you mean "Left"?); its states: Start, Left, Each, Item`, "test-state"},
		{[]string{"test-state", nested}, nested + ": a whole state machine: name the state to test with --state (its states: Start, Left, Each, Item)", "test-state"},
		{[]string{"serve", "--name", "orders"}, `stepd serve: --name "orders": give it after the --definition FILE whose state machine it names`, "serve"},
		{[]string{"serve", "now"}, `stepd serve: unexpected argument "now": it takes flags only`, "serve"},
		{[]string{"serve", "--lease", "5"}, `stepd serve: --lease "5": want a duration such as 500ms, 30s or 2m`, "serve"},
		{[]string{"serve", "--time-scale", "fast"}, `stepd serve: --time-scale "fast": want a number`, "serve"},
		{[]string{"serve", "--adr", ":0"}, "stepd serve: unknown flag --adr (did you mean --addr?)", "serve"},
		{[]string{"serve", "--log-format", "xml", "--data", ""}, `stepd serve: --log-format: want text or json, got "xml"`, "serve"},
		{[]string{"bench", "--runs", "0"}, "stepd bench: --runs and --rounds must be at least 1, --warmup at least 0", "bench"},
		{[]string{"health", "--addr", "nowhere"}, `stepd health: --addr: want HOST:PORT, got "nowhere"`, "health"},
		{[]string{"health", "--endpoint", "stepd:8083"}, `stepd health: --endpoint: want a URL such as http://stepd:8083, got "stepd:8083"`, "health"},
		{[]string{"health", "now"}, `stepd health: unexpected argument "now": it takes flags only`, "health"},
		{[]string{"version", "--short"}, "stepd version: unknown flag --short", "version"},
		{[]string{"runn"}, `stepd: unknown command "runn" (did you mean "run"?)`, ""},
		{[]string{"frobnicate"}, `stepd: unknown command "frobnicate"`, ""},
		{[]string{"--input", "{}"}, "stepd: a command comes first, not the flag --input", ""},
		{[]string{"help", "nope"}, `stepd help: want one command of run, test, case, validate, graph, serve, health, test-state, lsp, bench, version, got "nope"`, ""},
		{[]string{}, `stepd: missing COMMAND, one of run, test, case, validate, graph, serve, health, test-state, lsp, bench, version, help`, ""},
		{[]string{"lps"}, `stepd: unknown command "lps" (did you mean "lsp"?)`, ""},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		help := "run 'stepd help' for the commands"
		if tt.help != "" {
			help = "run 'stepd " + tt.help + " -h' for help"
		}
		if tt.help == "test-state" && strings.HasPrefix(tt.want, nested) {
			tt.want = "stepd test-state: " + tt.want
		}
		if want := tt.want + "\n" + help + "\n"; code != exitUsage || stdout != "" || stderr != want {
			t.Errorf("stepd %s: exit %d, stdout %q, stderr\n%s--- want exit 2 and\n%s", strings.Join(tt.args, " "), code, stdout, stderr, want)
		}
	}
}

// TestUsageErrorBinary: the binary's exit status is the usage error's 2.
func TestUsageErrorBinary(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(stepdBinary(t), "run", "--inptu", "{}")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != exitUsage || stdout.Len() != 0 ||
		stderr.String() != "stepd run: unknown flag --inptu (did you mean --input?)\nrun 'stepd run -h' for help\n" {
		t.Errorf("stepd run --inptu: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

// TestHelp: every command's -h (and stepd help COMMAND) prints its usage
// line first, then what it does and its flags, on standard output, with
// exit code 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands {
		if cmd == "help" {
			continue
		}
		for _, args := range [][]string{{cmd, "-h"}, {cmd, "--help"}, {"help", cmd}} {
			code, stdout, stderr := runMain(t, "", args...)
			if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "usage: stepd "+cmd) {
				t.Errorf("stepd %s: exit %d, stderr %q, stdout\n%s", strings.Join(args, " "), code, stderr, stdout)
			}
			if cmd != "version" && !strings.Contains(stdout, "\nFlags:\n") {
				t.Errorf("stepd %s: no flags listed:\n%s", strings.Join(args, " "), stdout)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		if code, stdout, _ := runMain(t, "", args...); code != exitOK || !strings.HasPrefix(stdout, "stepd runs AWS Step Functions state machines.") || !strings.Contains(stdout, "stepd health") {
			t.Errorf("stepd %s: exit %d\n%s", strings.Join(args, " "), code, stdout)
		}
	}
}

// TestFileErrors: a problem in a file a command reads names the file and
// the place: the line of a YAML slip, the path (and line and column) of a
// registry's or a mock configuration's bad member, the state meant by a
// transition to a state that does not exist.
func TestFileErrors(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "m.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	yml := writeFile(t, "slip.asl.yaml", "StartAt: A\nStates:\n  A:\n    Type: Pass\n   End: true\n")
	reg := writeFile(t, "registry.json", "{\n  \"Functions\": {\n    \"greet\": {\"Comand\": [\"python3\", \"greet.py\"]}\n  }\n}\n")
	conns := writeFile(t, "connections.json", `{"arn:aws:events:us-east-1:123456789012:connection/api/1":{"ApiKeyNam":"x-api-key","ApiKeyValue":"k"}}`)
	mocks := writeFile(t, "mocks.json", `{"StateMachines":{"m":{"TestCases":{"T":{"A":"R"}}}},"MockedResponses":{"R":{"0":{"Retrun":{}}}}}`)
	badMocks := writeFile(t, "badmocks.json", "{\"StateMachines\":{\n \"m\": {,}}}")
	typo := writeFile(t, "typo.json", `{"StartAt":"Strat","States":{"Start":{"Type":"Pass","Next":"Edn"},"End":{"Type":"Succeed"}}}`)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", yml}, exitUsage, "stepd run: " + yml + ":5: invalid YAML: did not find expected key\n"},
		{[]string{"validate", yml}, exitUsage, "stepd validate: " + yml + ":5: invalid YAML: did not find expected key\n"},
		{[]string{"run", def, "--config", reg}, exitUsage, "stepd run: --config: " + reg + ":3:15: Functions.greet.Comand: unknown member (did you mean Command?)\n"},
		{[]string{"run", def, "--connections", conns}, exitUsage, "stepd run: --connections: " + conns + `:1:60: "arn:aws:events:us-east-1:123456789012:connection/api/1".ApiKeyNam: unknown member (did you mean ApiKeyName?)` + "\n"},
		{[]string{"run", def, "--mock-config", mocks, "--test-case", "T"}, exitUsage, "stepd run: " + mocks + `: mock configuration: MockedResponses.R."0".Retrun: unknown member (want Return or Throw (or ReturnInput, ReturnRepeat, Delay))` + "\n"},
		{[]string{"run", def, "--mock-config", badMocks, "--test-case", "T"}, exitUsage, "stepd run: " + badMocks + ":2:8: invalid JSON: unexpected ',', expecting a string key\n"},
		{[]string{"validate", typo}, exitFail, typo + ":/StartAt: ERROR MISSING_TRANSITION_TARGET: Missing 'Next' target: Strat (did you mean 'Start'?)\n" +
			typo + ":/States/Start/Next: ERROR MISSING_TRANSITION_TARGET: Missing 'Next' target: Edn (did you mean 'End'?)\n" +
			typo + ":/States/Start: ERROR MISSING_TRANSITION_TARGET: State \"Start\" is not reachable.\n" +
			typo + ":/States/End: ERROR MISSING_TRANSITION_TARGET: State \"End\" is not reachable.\n"},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != tt.code || stdout+stderr != tt.want {
			t.Errorf("stepd %s: exit %d\n%s%s--- want exit %d and\n%s", strings.Join(tt.args, " "), code, stdout, stderr, tt.code, tt.want)
		}
	}
}
