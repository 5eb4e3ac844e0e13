package conformance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func loadOne(t *testing.T, name string) *Case {
	t.Helper()
	cs, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("%s: %d cases, want 1", name, len(cs))
	}
	return cs[0]
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestLoad(t *testing.T) {
	tests := []struct {
		path  string
		names []string // name/kind/category/type of each case
	}{
		{"testdata/cases/minimal.json", []string{"minimal/execution/cases/STANDARD"}},
		// In a directory, files that are not cases are skipped.
		{"testdata/cases", []string{"minimal/execution/cases/STANDARD", "pair.first/execution/pairs/STANDARD", "pair[1]/invalid-definition/cases/STANDARD"}},
		{"testdata/placeholders.json", []string{"synthetic.placeholders/execution/synthetic/STANDARD"}},
		{"testdata/test_state.json", []string{"synthetic.test_state/test-state/synthetic/STANDARD"}},
	}
	for _, tt := range tests {
		cs, err := Load(tt.path)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Name+"/"+c.Kind+"/"+c.Category+"/"+c.Type)
		}
		if strings.Join(got, " ") != strings.Join(tt.names, " ") {
			t.Errorf("%s: got %v, want %v", tt.path, got, tt.names)
		}
	}
}

func TestLoadFields(t *testing.T) {
	c := loadOne(t, "cases/minimal.json")
	if c.Status != "SUCCEEDED" || !value.Equal(c.Output, mustParse(t, `{"a":1}`)) || c.History != nil || c.StateMachineName != "" || len(c.Placeholders) != 0 {
		t.Errorf("minimal case: %+v", c)
	}
	c = loadOne(t, "placeholders.json")
	if c.StateMachineName != "conformance_sm" || c.ExecutionName != "conformance_exec" || !strings.HasSuffix(c.RoleArn, "role/conformance-sfn-role") {
		t.Errorf("run: %q %q %q", c.StateMachineName, c.ExecutionName, c.RoleArn)
	}
	if len(c.Placeholders) != 3 || c.Placeholders[1] != [2]string{"<lambda_function_name>", "my_fn"} {
		t.Errorf("placeholders: %v", c.Placeholders)
	}
	if len(c.History) != 6 || !c.Has("lambda") || c.Has("map") || c.SortedParallel {
		t.Errorf("history %d events, features %v", len(c.History), c.Features)
	}
	if _, ok := c.Cause.(*value.Object); !ok {
		t.Errorf("cause %T, want an object", c.Cause)
	}
	if c := loadOne(t, "parallel_sorted.json"); !c.SortedParallel || c.Compare == nil {
		t.Errorf("parallel_sorted: compare hints not read")
	}
	if c := loadOne(t, "test_state.json"); c.Request == nil || c.Expected == nil {
		t.Errorf("test_state: no request or expected")
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ path, want string }{
		{"testdata/missing.json", "missing.json"},
		{"testdata/bad/syntax.json", "syntax.json"},
		{"testdata/bad/no_expected.json", "no_expected.json: case x has no expected object"},

		{"testdata/bad/no_request.json", "no_request.json: case x: a test-state case needs a request object"},
	}
	for _, tt := range tests {
		_, err := Load(tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s) = %v, want an error containing %q", tt.path, err, tt.want)
		}
	}
}

func TestMatchString(t *testing.T) {
	c := &Case{Placeholders: [][2]string{{"<ArnPart_0idx>", "sm"}, {"<ExecArnPart_0idx>", "sm_exec"}, {"snf_role_arn", "arn:aws:iam::111111111111:role/r"}}}
	tests := []struct {
		want, got string
		ok        bool
	}{
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"date", "2024-01-01", true},
		{"<request_id>", "anything", true},
		{"snf_role_arn", "arn:aws:iam::111111111111:role/r", true},
		{"snf_role_arn", "arn:aws:iam::111111111111:role/other", false},
		// The longest concrete value is replaced first.
		{"arn:<partition>:states:<region>:111111111111:execution:<ArnPart_0idx>:<ExecArnPart_0idx>", "arn:aws:states:us-east-1:111111111111:execution:sm:sm_exec", true},
		{"arn:<partition>:states:<region>:111111111111:execution:sm:sm_exec", "arn:aws:states:us-east-1:111111111111:execution:sm:sm_exec", true},
		{"arn:<partition>:states:<region>:111111111111:execution:sm:x", "arn:aws:states:us-east-1:111111111111:execution:sm:y", false},
		{"prefix <resource:1> suffix", "prefix xyz suffix", true},
		{"prefix <resource:1> suffix", "prefix xyz suffi", false},
	}
	for _, tt := range tests {
		if got := newMatcher(c).matchString(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchString(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}

func TestUUIDConsistency(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
	}{
		{`["<uuid:1>", "<uuid:1>"]`, `["a", "a"]`, true},
		{`["<uuid:1>", "<uuid:1>"]`, `["a", "b"]`, false},
		{`["<uuid:1>", "<uuid:2>"]`, `["a", "b"]`, true},
		{`["<uuid:1>", "id <uuid:1>."]`, `["a", "id a."]`, true},
		{`["<uuid:1>", "id <uuid:1>."]`, `["a", "id b."]`, false},
		{`{"x": "<uuid:1>"}`, `{"x": 5}`, false},
	}
	for _, tt := range tests {
		m := newMatcher(&Case{})
		if got := m.match(mustParse(t, tt.want), mustParse(t, tt.got)); got != tt.ok {
			t.Errorf("match(%s, %s) = %v, want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}

func TestDiffPath(t *testing.T) {
	tests := []struct{ want, got, path string }{
		{`{"a": [1, {"b": 2}]}`, `{"a": [1, {"b": 2.0}]}`, ""},
		{`{"a": [1, {"b": 2}]}`, `{"a": [1, {"b": 3}]}`, "$.a[1].b"},
		{`{"a": 1}`, `{"a": 1, "my key": 2}`, `$["my key"]`},
		{`{"a": 1, "b": 2}`, `{"a": 1}`, "$.b"},
		{`[1, 2]`, `[1]`, "$[1]"},
		{`{"SdkHttpMetadata": {"h": "date"}, "p": "<json-input:1>"}`, `{"SdkHttpMetadata": {"x": 1}, "p": {"any": [1]}}`, ""},
	}
	for _, tt := range tests {
		if got := newMatcher(&Case{}).diff(mustParse(t, tt.want), mustParse(t, tt.got), "$"); got != tt.path {
			t.Errorf("diff(%s, %s) = %q, want %q", tt.want, tt.got, got, tt.path)
		}
	}
}

func TestCompareOutcome(t *testing.T) {
	failed := loadOne(t, "placeholders.json")
	ok := loadOne(t, "cases/minimal.json")
	tests := []struct {
		name  string
		c     *Case
		got   Outcome
		where []string
	}{
		{"succeeded", ok, Outcome{Status: "SUCCEEDED", Output: mustParse(t, `{"a": 1.0}`)}, nil},
		{"wrong output", ok, Outcome{Status: "SUCCEEDED", Output: mustParse(t, `{"a": 2}`)}, []string{"output"}},
		{"wrong status", ok, Outcome{Status: "FAILED", Error: "E"}, []string{"status"}},
		{"json cause", failed, Outcome{Status: "FAILED", Error: "Exception", Cause: `{"errorType":"Exception","errorMessage":"boom","requestId":"1234"}`}, nil},
		{"json cause differs", failed, Outcome{Status: "FAILED", Error: "Exception", Cause: `{"errorType":"Exception","errorMessage":"bang","requestId":"1234"}`}, []string{"cause"}},
		{"cause not json", failed, Outcome{Status: "FAILED", Error: "Exception", Cause: `boom`}, []string{"cause"}},
		{"wrong error", failed, Outcome{Status: "FAILED", Error: "States.TaskFailed", Cause: `{"errorType":"Exception","errorMessage":"boom","requestId":"1"}`}, []string{"error"}},
	}
	for _, tt := range tests {
		var where []string
		for _, d := range CompareOutcome(tt.c, &tt.got) {
			where = append(where, d.Where)
		}
		if strings.Join(where, ",") != strings.Join(tt.where, ",") {
			t.Errorf("%s: diffs at %v, want %v", tt.name, where, tt.where)
		}
	}
}

// apiHistory converts a case's recorded history back to the API's shape.
func apiHistory(c *Case) []any {
	out := make([]any, len(c.History))
	for i, e := range c.History {
		out[i] = Denormalize(e.(*value.Object))
	}
	return out
}

// edit returns a copy of h with event i's JSON text rewritten.
func edit(t *testing.T, h []any, i int, from, to string) []any {
	t.Helper()
	out := append([]any(nil), h...)
	s := value.String(out[i])
	if !strings.Contains(s, from) {
		t.Fatalf("event %d has no %q: %s", i, from, s)
	}
	out[i] = mustParse(t, strings.Replace(s, from, to, 1))
	return out
}

// reorder returns h's events in the given order.
func reorder(t *testing.T, h []any, order ...int) []any {
	t.Helper()
	out := make([]any, len(h))
	for i, j := range order {
		out[i] = h[j]
	}
	return out
}

func TestCompareHistory(t *testing.T) {
	ph := loadOne(t, "placeholders.json")
	par := loadOne(t, "parallel.json")
	sorted := loadOne(t, "parallel_sorted.json")
	phAPI := apiHistory(ph)
	// What an engine would produce: concrete names instead of placeholders.
	engine := edit(t, phAPI, 0, `"snf_role_arn"`, `"arn:aws:iam::111111111111:role/conformance-sfn-role"`)
	engine = edit(t, engine, 2, "arn:<partition>:lambda:<region>:111111111111:function:<lambda_function_name>", "arn:aws:lambda:us-east-1:111111111111:function:my_fn")
	engine = edit(t, engine, 4, `<uuid:1>`, `req-1`)
	engine = edit(t, engine, 5, `<uuid:1>`, `req-1`)
	parAPI := apiHistory(par)
	// Branch B's events before branch A's, ids as recorded: only the
	// tolerant mode accepts it.
	swapped := reorder(t, parAPI, 0, 1, 2, 5, 6, 3, 4, 7, 8, 9)
	// Ids renumbered in the new order: still tolerant only.
	renumbered := append([]any(nil), swapped...)
	for i := range renumbered {
		o := renumbered[i].(*value.Object).Clone()
		o.Set("id", value.Int(int64(i+1)))
		renumbered[i] = o
	}
	sortedGot := parAPI // the engine's full history, in its own order
	tests := []struct {
		name string
		c    *Case
		got  []any
		mode string // "" when the comparison must fail
		at   string // the Where of the first difference
	}{
		{"itself", ph, phAPI, Strict, ""},
		{"with timestamps", ph, withTimestamps(phAPI), Strict, ""},
		{"engine names", ph, engine, Strict, ""},
		{"uuid inconsistent", ph, edit(t, engine, 5, "req-1", "req-2"), "", "event 6 (ExecutionFailed)"},
		{"detail differs", ph, edit(t, engine, 2, `\"k\":\"v\"`, `\"k\":\"w\"`), "", "event 3 (LambdaFunctionScheduled)"},
		{"wrong id", ph, edit(t, engine, 3, `"previousEventId":3`, `"previousEventId":2`), "", "event 4 (LambdaFunctionStarted)"},
		{"missing event", ph, engine[:5], "", "event 6 (missing ExecutionFailed)"},
		{"extra event", ph, append(append([]any(nil), engine...), engine[5]), "", "event 7 (unexpected ExecutionFailed)"},
		{"parallel itself", par, parAPI, Strict, ""},
		{"parallel swapped", par, swapped, Tolerant, ""},
		{"parallel renumbered", par, renumbered, Tolerant, ""},
		{"parallel branch differs", par, edit(t, swapped, 6, `\"a\"`, `\"c\"`), "", "Parallel segment, events 2-9 (no PassStateExited like event 5)"},
		{"parallel event missing", par, append(append([]any(nil), parAPI[:4]...), parAPI[5:]...), "", "Parallel segment, events 2-9 (no PassStateExited like event 5)"},
		{"after parallel differs", par, edit(t, swapped, 9, `"previousEventId":9`, `"previousEventId":8`), "", "event 10 (ExecutionSucceeded)"},
		{"sorted parallel", sorted, sortedGot, Tolerant, ""},
		{"sorted parallel swapped", sorted, swapped, Tolerant, ""},
		{"sorted parallel differs", sorted, edit(t, swapped, 4, `\"b\"`, `\"c\"`), "", "Parallel segment, events 2-8 (no PassStateExited like event 7)"},
	}
	for _, tt := range tests {
		r := CompareHistory(tt.c, &Outcome{History: tt.got})
		if r == nil {
			t.Fatalf("%s: no result", tt.name)
		}
		if r.Mode() != tt.mode {
			t.Errorf("%s: mode %q, want %q; diffs:\n%s", tt.name, r.Mode(), tt.mode, Format(r.Diffs))
			continue
		}
		if tt.mode == "" && (len(r.Diffs) == 0 || r.Diffs[0].Where != tt.at) {
			t.Errorf("%s: diffs:\n%s\nwant the first at %q", tt.name, Format(r.Diffs), tt.at)
		}
	}
	if r := CompareHistory(loadOne(t, "cases/minimal.json"), &Outcome{}); r != nil {
		t.Errorf("a case without history compared: %+v", r)
	}
}

func withTimestamps(h []any) []any {
	out := make([]any, len(h))
	for i, e := range h {
		o := value.NewObject(0)
		o.Set("timestamp", value.Float(1.7e9+float64(i)))
		for k, v := range e.(*value.Object).All {
			o.Set(k, v)
		}
		out[i] = o
	}
	return out
}

func TestFormat(t *testing.T) {
	d := []Diff{
		{Where: "status", Want: "SUCCEEDED", Got: "FAILED"},
		{Where: "event 2 (PassStateExited)", Path: "$.stateExitedEventDetails.output", Want: `{"id":2,"type":"PassStateExited","x":1}`, Got: `{"id":2,"type":"PassStateExited","x":2}`},
	}
	want := `status:
  want SUCCEEDED
   got FAILED
event 2 (PassStateExited) at $.stateExitedEventDetails.output:
    {
      "id": 2,
      "type": "PassStateExited",
  -   "x": 1
  +   "x": 2
    }
`
	if got := Format(d); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
}

func TestCompareTestState(t *testing.T) {
	c := loadOne(t, "test_state.json")
	inspection := `"inspectionData": {"input": "{\"a\":1}", "afterInputPath": "{\"a\":1}"}`
	tests := []struct {
		name, got string
		where     []string
	}{
		{"api shape", `{"output": "{\"a\":1,\"arn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:x\"}", "status": "SUCCEEDED", ` + inspection + `}`, nil},
		{"wrong output", `{"output": "{\"a\":2,\"arn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:x\"}", "status": "SUCCEEDED", ` + inspection + `}`, []string{"output"}},
		{"no inspection", `{"output": "{\"a\":1,\"arn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:x\"}", "status": "SUCCEEDED"}`, []string{"inspectionData"}},
		{"extra member", `{"output": "{\"a\":1,\"arn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:x\"}", "status": "SUCCEEDED", "nextState": "X", ` + inspection + `}`, []string{"nextState"}},
		{"rejected", `{"error": "ValidationException", "message": "no"}`, []string{"inspectionData", "output", "status", "error", "message"}},
	}
	for _, tt := range tests {
		var where []string
		for _, d := range CompareTestState(c, mustParse(t, tt.got).(*value.Object)) {
			where = append(where, d.Where)
		}
		if strings.Join(where, ",") != strings.Join(tt.where, ",") {
			t.Errorf("%s: diffs at %v, want %v", tt.name, where, tt.where)
		}
	}
}

func TestCompareDefinitions(t *testing.T) {
	inv := loadOne(t, "invalid.json")
	msg := "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The resource provided arn:aws:states:::dynamodb:query is not recognized. at /States/T/Resource'"
	if d := CompareInvalidDefinition(inv, &DefinitionError{Code: "InvalidDefinition", Message: msg}); len(d) != 0 {
		t.Errorf("matching rejection: %v", d)
	}
	if d := CompareInvalidDefinition(inv, &DefinitionError{Code: "ValidationException", Message: msg}); len(d) != 1 || d[0].Where != "error" {
		t.Errorf("wrong code: %v", d)
	}
	if d := CompareInvalidDefinition(inv, &DefinitionError{Code: "InvalidDefinition", Message: msg + "!"}); len(d) != 1 || d[0].Where != "message" {
		t.Errorf("wrong message: %v", d)
	}
	if d := CompareInvalidDefinition(inv, nil); len(d) != 1 {
		t.Errorf("accepted definition: %v", d)
	}
	val := loadOne(t, "validate.json")
	if d := CompareValidation(val, mustParse(t, `{"truncated": false, "diagnostics": [], "result": "OK"}`).(*value.Object)); len(d) != 0 {
		t.Errorf("matching validation: %v", d)
	}
	d := CompareValidation(val, mustParse(t, `{"result": "FAIL", "diagnostics": [{"code": "X"}], "truncated": false}`).(*value.Object))
	if len(d) != 2 || d[0].Where != "result" || d[1].Where != "diagnostics" {
		t.Errorf("failed validation: %v", d)
	}
}

func TestCheckWith(t *testing.T) {
	c := loadOne(t, "placeholders.json")
	hist := apiHistory(c)
	tests := []struct {
		name                 string
		run                  Runner
		passed, outcome, his bool // Passed, OutcomeFailed, HistoryFailed
	}{
		{"passes", func(context.Context, *Case) (*Outcome, error) {
			return &Outcome{Status: "FAILED", Error: "Exception", Cause: `{"errorMessage":"boom","errorType":"Exception","requestId":"<uuid:1>"}`, History: hist}, nil
		}, true, false, false},
		{"history fails", func(context.Context, *Case) (*Outcome, error) {
			return &Outcome{Status: "FAILED", Error: "Exception", Cause: `{"errorMessage":"boom","errorType":"Exception","requestId":"r"}`, History: hist[:3]}, nil
		}, false, false, true},
		{"cannot run", func(context.Context, *Case) (*Outcome, error) { return nil, errors.New("no engine") }, false, true, false},
	}
	for _, tt := range tests {
		r := CheckWith(context.Background(), c, tt.run)
		if r.Passed() != tt.passed || r.OutcomeFailed() != tt.outcome || r.HistoryFailed() != tt.his {
			t.Errorf("%s: passed %v outcome failed %v history failed %v", tt.name, r.Passed(), r.OutcomeFailed(), r.HistoryFailed())
		}
		if r.Passed() != (r.Explain() == "") {
			t.Errorf("%s: explanation %q", tt.name, r.Explain())
		}
	}
}

func TestLeaves(t *testing.T) {
	m := newMatcher(&Case{})
	want := mustParse(t, `{"a":1,"list":[1,{"x":"<anything>"},3],"meta":{"SdkHttpMetadata":{"h":1}},"id":"<uuid:1>","same":"<uuid:1>","gone":true}`)
	got := mustParse(t, `{"a":2,"list":[1,{"x":[9]}],"meta":{"SdkHttpMetadata":{"h":2}},"id":"u-1","same":"u-2","new":null}`)
	var lines []string
	for _, l := range m.leaves(want, got) {
		lines = append(lines, l.String())
	}
	wantLines := []string{
		`$.a: want 1, got 2`,
		`$.list[2]: want 3, got (absent)`,
		`$.same: want "<uuid:1>", got "u-2"`,
		`$.gone: want true, got (absent)`,
		`$.new: want (absent), got null`,
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("leaves:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
	if len(m.bind) != 0 {
		t.Errorf("leaves left bindings behind: %v", m.bind)
	}
	// At most maxLeaves, each value shortened.
	many := value.NewObject(0)
	for i := range 30 {
		many.Set(fmt.Sprintf("k%d", i), strings.Repeat("x", 500))
	}
	ls := m.leaves(value.NewObject(0), many)
	if len(ls) != maxLeaves || len(ls[0].Got) > maxLeafText+len("…") {
		t.Errorf("%d leaves, the first %d bytes long", len(ls), len(ls[0].Got))
	}
}

// TestHistoryDiffLeaves: a differing event lists the differing values
// inside it.
func TestHistoryDiffLeaves(t *testing.T) {
	c := loadOne(t, "placeholders.json")
	h := apiHistory(c)
	last := h[len(h)-1].(*value.Object)
	typ, _ := last.Get("type")
	h[len(h)-1] = last.With("type", typ.(string)+"X")
	r := CompareHistory(c, &Outcome{History: h})
	if r.Tolerant || len(r.Diffs) == 0 || len(r.Diffs[0].Leaves) == 0 || r.Diffs[0].Leaves[0].Path != "$.type" {
		t.Fatalf("diffs: %+v", r.Diffs)
	}
	if !strings.Contains(Format(r.Diffs), `$.type: want "`+typ.(string)+`", got "`+typ.(string)+`X"`) {
		t.Errorf("Format:\n%s", Format(r.Diffs))
	}
}
