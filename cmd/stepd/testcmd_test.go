package main

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

// TestTestCommandMockConfigFile: a case names an AWS Step Functions Local
// MockConfigFile and one of its test cases; a test case it does not have,
// or mocks given twice, are refused with the field named.
func TestTestCommandMockConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("mocks.json", `{"StateMachines":{"Orders":{"TestCases":{"Paid":{"Charge":"Ok"},"Declined":{"Charge":"No"}}}},
"MockedResponses":{"Ok":{"0":{"Return":{"paid":true}}},"No":{"0":{"Throw":{"Error":"Card.Declined","Cause":"no funds"}}}}}`)
	write("orders.json", `{"StartAt":"Charge","States":{"Charge":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"charge"},"End":true}}}`)
	paid := write("paid.json", `{"name":"paid","definitionFile":"orders.json","mockConfigFile":"mocks.json","testCase":"Paid","expected":{"status":"SUCCEEDED","output":{"paid":true}}}`)
	declined := write("declined.json", `{"name":"declined","definitionFile":"orders.json","mockConfigFile":"mocks.json","testCase":"Declined","expected":{"status":"FAILED","error":"Card.Declined"}}`)
	code, stdout, stderr := runMain(t, "", "test", paid, declined, "-v")
	if code != exitOK || !strings.HasSuffix(stdout, "2 passed, 0 failed\n") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"name":"x","definitionFile":"orders.json","mockConfigFile":"mocks.json","testCase":"Refunded","expected":{}}`, `no test case "Refunded" (it has "Declined", "Paid")`},
		{`{"name":"x","definitionFile":"orders.json","mockConfigFile":"mocks.json","expected":{}}`, "mockConfigFile needs testCase"},
		{`{"name":"x","definitionFile":"orders.json","testCase":"Paid","expected":{}}`, "mockConfigFile is required"},
		{`{"name":"x","definitionFile":"orders.json","mockConfigFile":"mocks.json","testCase":"Paid","mocks":{},"expected":{}}`, "either mocks or mockConfigFile"},
		{`{"name":"x","definitionFile":"orders.json","mockConfigFile":"missing.json","testCase":"Paid","expected":{}}`, "mockConfigFile: open"},
		{`{"name":"x","definitionFile":"orders.json","mockConfigFile":"mocks.json","testCase":"Paid","run":{"stateMachineName":"Other"},"expected":{}}`, `no state machine "Other"`},
		{`{"name":"x","definitionFile":"orders.json","expected":{"status":"DONE"}}`, `expected.status must be SUCCEEDED, FAILED, TIMED_OUT or ABORTED, not "DONE"`},
	} {
		code, _, stderr := runMain(t, "", "test", write("bad.json", bad.text))
		if code != exitUsage || !strings.Contains(stderr, bad.want) {
			t.Errorf("%s: exit %d, %q; want exit %d naming %q", bad.text, code, stderr, exitUsage, bad.want)
		}
	}
}

// TestTestCommandPartialExpected: members absent from expected are not
// checked; present ones are.
func TestTestCommandPartialExpected(t *testing.T) {
	t.Parallel()
	def := `"definition":{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"it broke"}}}`
	for _, tt := range []struct {
		expected string
		pass     bool
	}{
		{`{}`, true},
		{`{"status":"FAILED"}`, true},
		{`{"error":"Boom"}`, true},
		{`{"cause":"<anything>"}`, true},
		{`{"error":"Bang"}`, false},
		{`{"status":"SUCCEEDED"}`, false},
		{`{"output":{}}`, false}, // an expected output needs a SUCCEEDED execution
	} {
		c := writeFile(t, "case.json", `{"name":"partial",`+def+`,"expected":`+tt.expected+`}`)
		code, stdout, stderr := runMain(t, "", "test", c)
		if (code == exitOK) != tt.pass {
			t.Errorf("expected %s: exit %d, want pass=%v\n%s%s", tt.expected, code, tt.pass, stdout, stderr)
		}
	}
}

// TestTestCommandMinimalDiff: a failure prints the differing values at
// their JSON paths, not both documents.
func TestTestCommandMinimalDiff(t *testing.T) {
	t.Parallel()
	big := `"padding":"` + strings.Repeat("p", 300) + `"`
	c := writeFile(t, "case.json", `{"name":"deep","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{`+big+`,"order":{"id":7,"items":[1,2,3],"extra":true}},"End":true}}},
"expected":{"status":"SUCCEEDED","output":{`+big+`,"order":{"id":8,"items":[1,2],"note":"x"}}}}`)
	code, stdout, _ := runMain(t, "", "test", c)
	if code != exitFail {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	for _, want := range []string{
		"    output:\n",
		"      $.order.id: want 8, got 7\n",
		"      $.order.items[2]: want (absent), got 3\n",
		"      $.order.note: want \"x\", got (absent)\n",
		"      $.order.extra: want (absent), got true\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "ppppp") {
		t.Errorf("the report repeats the documents:\n%s", stdout)
	}
}

// TestTestCommandJUnit decodes the --junit report strictly with the
// elements and attributes the JUnit schema requires.
func TestTestCommandJUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pass := writeFile(t, "pass.json", `{"name":"ok","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"expected":{"status":"SUCCEEDED"}}`)
	fail := writeFile(t, "fail.json", `{"name":"wrong <&>","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}},"expected":{"output":2}}`)
	skip := writeFile(t, "skip.json", `{"name":"later","kind":"activity","expected":{}}`)
	report := filepath.Join(dir, "report.xml")
	code, stdout, stderr := runMain(t, "", "test", pass, fail, skip, "--junit", report)
	if code != exitFail {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	type problem struct {
		Message *string `xml:"message,attr"`
		Type    string  `xml:"type,attr"`
		Text    string  `xml:",chardata"`
	}
	type testcase struct {
		Name      *string  `xml:"name,attr"`
		Classname *string  `xml:"classname,attr"`
		Time      *string  `xml:"time,attr"`
		Failure   *problem `xml:"failure"`
		Error     *problem `xml:"error"`
		Skipped   *problem `xml:"skipped"`
	}
	type testsuite struct {
		Name       *string    `xml:"name,attr"`
		Tests      *int       `xml:"tests,attr"`
		Failures   *int       `xml:"failures,attr"`
		Errors     *int       `xml:"errors,attr"`
		Skipped    *int       `xml:"skipped,attr"`
		Time       *float64   `xml:"time,attr"`
		Timestamp  *string    `xml:"timestamp,attr"`
		Hostname   *string    `xml:"hostname,attr"`
		Properties *struct{}  `xml:"properties"`
		Cases      []testcase `xml:"testcase"`
		SystemOut  *string    `xml:"system-out"`
		SystemErr  *string    `xml:"system-err"`
	}
	var doc struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 1 || len(doc.Suites) != 3 {
		t.Fatalf("totals %d tests, %d failures, %d skipped, %d suites\n%s", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites), data)
	}
	for _, s := range doc.Suites {
		if s.Name == nil || s.Tests == nil || s.Failures == nil || s.Errors == nil || s.Time == nil || s.Timestamp == nil || s.Hostname == nil || s.Properties == nil || s.SystemOut == nil || s.SystemErr == nil || len(s.Cases) != 1 {
			t.Fatalf("a testsuite lacks a required element or attribute:\n%s", data)
		}
		tc := s.Cases[0]
		if tc.Name == nil || tc.Classname == nil || tc.Time == nil {
			t.Fatalf("a testcase lacks a required attribute:\n%s", data)
		}
		switch *tc.Name {
		case "ok":
			if tc.Failure != nil || tc.Skipped != nil || tc.Error != nil {
				t.Errorf("ok: %+v", tc)
			}
		case "wrong <&>":
			if tc.Failure == nil || tc.Failure.Message == nil || *tc.Failure.Message != "output: $: want 2, got 1" || !strings.Contains(tc.Failure.Text, "want 2, got 1") {
				t.Errorf("failure: %+v", tc.Failure)
			}
		case "later":
			if tc.Skipped == nil {
				t.Errorf("later is not skipped")
			}
		default:
			t.Errorf("unexpected case %q", *tc.Name)
		}
	}
}

// TestTestCommandJUnitConsumer reads the --junit report with junit2json, a
// converter CI pipelines use to load JUnit reports (npm ci in
// cmd/stepd/testdata/junit; skipped without it unless CI=true).
func TestTestCommandJUnitConsumer(t *testing.T) {
	t.Parallel()
	cli, err := filepath.Abs(filepath.Join("testdata", "junit", "node_modules", "junit2json", "dist", "esm", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(cli)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the JUnit consumer test needs node and npm ci in cmd/stepd/testdata/junit: %v", err)
		}
		t.Skipf("the JUnit consumer test needs node and npm ci in cmd/stepd/testdata/junit: %v", err)
	}
	pass := writeFile(t, "pass.json", `{"name":"ok","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"expected":{"status":"SUCCEEDED"}}`)
	fail := writeFile(t, "fail.json", `{"name":"wrong","definition":{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"a":1},"End":true}}},"expected":{"output":{"a":2}}}`)
	report := filepath.Join(t.TempDir(), "report.xml")
	if code, stdout, stderr := runMain(t, "", "test", pass, fail, "--junit", report); code != exitFail {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	out, err := exec.Command(node, cli, report).Output()
	if err != nil {
		t.Fatalf("junit2json: %v", err)
	}
	v, err := value.Parse(out)
	if err != nil {
		t.Fatalf("junit2json printed %s: %v", out, err)
	}
	root := v.(*value.Object)
	get := func(o *value.Object, k string) any {
		x, _ := o.Get(k)
		return x
	}
	if value.String(get(root, "tests")) != "2" || value.String(get(root, "failures")) != "1" {
		t.Fatalf("junit2json read %s", out)
	}
	var failures []string
	for _, s := range get(root, "testsuite").([]any) {
		for _, c := range get(s.(*value.Object), "testcase").([]any) {
			if f, ok := get(c.(*value.Object), "failure").([]any); ok {
				failures = append(failures, value.String(get(c.(*value.Object), "name"))+": "+value.String(get(f[0].(*value.Object), "message")))
			}
		}
	}
	if strings.Join(failures, "\n") != `"wrong": "output: $.a: want 2, got 1"` {
		t.Errorf("junit2json found the failures %q in %s", failures, out)
	}
}

// TestTestCommandCover: --cover counts the states entered and the Choice
// rules, Default, retriers and catchers taken, per state machine.
func TestTestCommandCover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	def := `{"StartAt":"Route","States":{
"Route":{"Type":"Choice","Choices":[{"Variable":"$.kind","StringEquals":"a","Next":"Work"},{"Variable":"$.kind","StringEquals":"b","Next":"Done"}],"Default":"Done"},
"Work":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"w"},
 "Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1,"MaxAttempts":2},{"ErrorEquals":["Slow"],"MaxAttempts":1}],
 "Catch":[{"ErrorEquals":["Broken"],"Next":"Recover"},{"ErrorEquals":["States.ALL"],"Next":"Done"}],"Next":"Done"},
"Recover":{"Type":"Pass","Next":"Done"},
"Never":{"Type":"Pass","Next":"Done"},
"Done":{"Type":"Succeed"}}}`
	if err := os.WriteFile(filepath.Join(dir, "machine.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	mocks := `"mocks":{"TestCase":{"Work":"R"},"MockedResponses":{"R":{"0":{"Throw":{"Error":"Flaky","Cause":""}},"1":{"Throw":{"Error":"Broken","Cause":""}}}}}`
	cases := `[{"name":"a","definitionFile":"machine.json","input":{"kind":"a"},` + mocks + `,"expected":{"status":"SUCCEEDED"}},
{"name":"c","definitionFile":"machine.json","input":{"kind":"c"},"expected":{"status":"SUCCEEDED"}}]`
	cf := filepath.Join(dir, "cases.json")
	if err := os.WriteFile(cf, []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "cover.json")
	code, stdout, stderr := runMain(t, "", "test", cf, "--cover-report", report)
	// 4 of 5 states (Never is not reached); branches: rule 0 and Default
	// of 3 Choice branches, retrier 0 of 2, catcher 0 of 2: 4 of 7.
	want := filepath.Join(dir, "machine.json") + ": coverage: 80% of states (4/5), 57.1% of branches (4/7)\n"
	if code != exitOK || !strings.Contains(stdout, want) {
		t.Fatalf("exit %d, want %q\n%s%s", code, want, stdout, stderr)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	hits := map[string]string{}
	machines, _ := v.(*value.Object).Get("stateMachines")
	m := machines.([]any)[0].(*value.Object)
	detail, _ := m.Get("detail")
	for _, s := range detail.([]any) {
		so := s.(*value.Object)
		name, _ := so.Get("name")
		visits, _ := so.Get("visits")
		hits[name.(string)] = value.String(visits)
		brs, _ := so.Get("branches")
		for _, b := range brs.([]any) {
			bo := b.(*value.Object)
			kind, _ := bo.Get("kind")
			idx, _ := bo.Get("index")
			h, _ := bo.Get("hits")
			hits[name.(string)+"/"+kind.(string)+value.String(idx)] = value.String(h)
		}
	}
	for k, w := range map[string]string{
		"Route": "2", "Work": "1", "Recover": "1", "Never": "0", "Done": "2",
		"Route/choice0": "1", "Route/choice1": "0", "Route/default0": "1",
		"Work/retry0": "1", "Work/retry1": "0", "Work/catch0": "1", "Work/catch1": "0",
	} {
		if hits[k] != w {
			t.Errorf("%s: %s, want %s (%v)", k, hits[k], w, hits)
		}
	}
	text := filepath.Join(dir, "cover.txt")
	if code, _, _ := runMain(t, "", "test", cf, "--cover-report", text); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	data, _ = os.ReadFile(text)
	if !strings.Contains(string(data), "! Never") || !strings.Contains(string(data), "! choice 1  $.kind == \"b\" → Done: 0") {
		t.Errorf("text report:\n%s", data)
	}
}
