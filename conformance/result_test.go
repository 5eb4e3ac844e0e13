package conformance

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadKnown(t *testing.T) {
	k, err := LoadKnown(filepath.Join("testdata", "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if k[AspectOutcome]["synthetic.a"] != "the engine gets the output wrong" || len(k[AspectOutcome]) != 1 || len(k[AspectHistory]) != 2 {
		t.Errorf("LoadKnown: %v", k)
	}
	if k, err := LoadKnown(filepath.Join("testdata", "absent.txt")); err != nil || len(k[AspectOutcome])+len(k[AspectHistory]) != 0 {
		t.Errorf("missing file: %v, %v", k, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"known_aspect.txt", "known_aspect.txt:1: want"},
		{"known_dup.txt", "known_dup.txt:2: outcome synthetic.a is listed twice"},
		{"known_short.txt", "known_short.txt:1: want"},
	} {
		if _, err := LoadKnown(filepath.Join("testdata", "bad", bad.file)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.file, err, bad.want)
		}
	}
}

// result builds a result: outcome and history pass or fail; noHistory
// leaves the history unrecorded.
func result(name string, outcomeOK, historyOK, noHistory bool) *Result {
	r := &Result{Case: &Case{Name: name, Kind: "execution", Category: strings.Split(name, ".")[0]}, OutcomeOK: outcomeOK}
	if !outcomeOK {
		r.OutcomeErr = []Diff{{Where: "status", Want: "SUCCEEDED", Got: "FAILED"}}
	}
	if !noHistory {
		r.History = &HistoryResult{Tolerant: historyOK}
		if !historyOK {
			r.History.Diffs = []Diff{{Where: "event 2 (PassStateExited)", Want: "{}", Got: "[]"}}
		}
	}
	return r
}

func TestComplaints(t *testing.T) {
	k, err := LoadKnown(filepath.Join("testdata", "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	results := []*Result{
		result("synthetic.a", false, true, false), // listed outcome failure, still failing
		result("synthetic.b", true, false, false), // listed history failure, still failing
		result("synthetic.c", true, true, false),  // passes
		result("synthetic.d", true, false, false), // history fails, not listed
	}
	want := []string{
		"history synthetic.d: fails but is not a known failure",
		"history synthetic.gone: listed as a known failure but there is no such case",
	}
	if got := k.Complaints(results); !slices.Equal(got, want) {
		t.Errorf("Complaints:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	results = []*Result{
		result("synthetic.a", true, true, false), // fixed
		result("synthetic.b", true, true, true),  // history no longer recorded
		result("synthetic.gone", true, true, false),
		{Case: &Case{Name: "synthetic.e"}, Err: errors.New("cannot run")},
	}
	want = []string{
		"history synthetic.b: passes now; remove it from the known failures",
		"history synthetic.gone: passes now; remove it from the known failures",
		"outcome synthetic.a: passes now; remove it from the known failures",
		"outcome synthetic.e: fails but is not a known failure",
	}
	if got := k.Complaints(results); !slices.Equal(got, want) {
		t.Errorf("Complaints:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestKnownWrite(t *testing.T) {
	k, err := LoadKnown(filepath.Join("testdata", "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	results := []*Result{result("synthetic.a", false, true, false), result("synthetic.b", true, false, false), result("synthetic.new", false, false, false)}
	path := filepath.Join(t.TempDir(), "known.txt")
	if err := k.Write(path, results); err != nil {
		t.Fatal(err)
	}
	k2, err := LoadKnown(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := k2.Complaints(results); len(c) != 0 {
		t.Errorf("rewritten list has complaints: %v", c)
	}
	if k2[AspectOutcome]["synthetic.a"] != "the engine gets the output wrong" || k2[AspectHistory]["synthetic.new"] != "TODO: explain" {
		t.Errorf("rewritten list: %v", k2)
	}
}

func TestSummary(t *testing.T) {
	var s Summary
	jsonata := result("alpha.x", true, true, false)
	jsonata.Case.Features = []string{"jsonata"}
	s.AddResult(result("alpha.a", true, true, false))
	s.AddResult(result("alpha.b", false, true, false)) // history counts as failed too
	s.AddResult(result("beta.c", true, false, false))
	s.AddResult(result("beta.d", true, true, true))
	s.AddResult(jsonata)
	mocked := result("beta.m", false, true, false)
	mocked.Case.Mocks = map[string]any{}
	s.AddResult(mocked)
	tests := []struct {
		row  string
		want [4]int
	}{
		{"category alpha", [4]int{2, 3, 2, 3}},
		{"category beta", [4]int{2, 3, 0, 2}},
		{RowAll, [4]int{4, 6, 2, 5}},
		{RowJSONPathOnly, [4]int{3, 5, 1, 4}},
		{RowJSONataOrVar, [4]int{1, 1, 1, 1}},
		{RowMocked, [4]int{0, 1, 0, 1}},
		{"no such row", [4]int{}},
	}
	for _, tt := range tests {
		var got [4]int
		got[0], got[1], got[2], got[3] = s.Row(tt.row)
		if got != tt.want {
			t.Errorf("%s: %v, want %v", tt.row, got, tt.want)
		}
	}
	table := s.String()
	words := strings.Join(strings.Fields(table), " ")
	for _, line := range []string{"category alpha 2/3 67% 2/3 67%", "selection: JSONPath only (no JSONata, no variables) 3/5 60% 1/4 25%", "selection: tasks answered by mocks 0/1 0% 0/1 0%"} {
		if !strings.Contains(words, line) {
			t.Errorf("table has no %q:\n%s", line, table)
		}
	}
}

func TestSelection(t *testing.T) {
	tests := []struct {
		features []string
		def      string
		want     bool
	}{
		{nil, `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, false},
		{[]string{"assign"}, `{}`, true},
		{nil, `{"QueryLanguage":"JSONata","StartAt":"P","States":{}}`, true},
		{nil, `{"StartAt":"P","States":{"P":{"Type":"Pass","QueryLanguage":"JSONata","End":true}}}`, true},
		{nil, `{"StartAt":"P","States":{"P":{"Type":"Pass","Assign":{"x":1},"End":true}}}`, true},
		{nil, `{"StartAt":"P","States":{"P":{"Type":"Pass","Comment":"QueryLanguage JSONata","End":true}}}`, false},
	}
	for _, tt := range tests {
		c := &Case{Features: tt.features, Definition: mustParse(t, tt.def)}
		if got := c.UsesJSONataOrVariables(); got != tt.want {
			t.Errorf("%v %s: %v, want %v", tt.features, tt.def, got, tt.want)
		}
	}
}

func TestReporter(t *testing.T) {
	var b bytes.Buffer
	p := &Reporter{W: &b}
	ok := result("synthetic.ok", true, true, false)
	ok.Elapsed = 10 * time.Millisecond
	p.Report(ok)
	p.Report(result("synthetic.bad", false, true, true))
	p.Skip("synthetic.ts", "test-state cases are not run")
	p.Finish()
	want := `--- PASS: synthetic.ok (0.01s)
--- FAIL: synthetic.bad (0.00s)
    status:
      want SUCCEEDED
       got FAILED
--- SKIP: synthetic.ts (test-state cases are not run)
1 skipped
1 passed, 1 failed
`
	if b.String() != want {
		t.Errorf("Reporter printed:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	p = &Reporter{W: &b, FailuresOnly: true}
	p.Report(ok)
	p.Report(result("synthetic.hist", true, false, false))
	p.Finish()
	want = `--- FAIL: synthetic.hist (0.00s)
    history differs (tolerant comparison):
    event 2 (PassStateExited):
      - {}
      + []
1 passed, 1 failed
`
	if b.String() != want {
		t.Errorf("Reporter printed:\n%s\nwant:\n%s", b.String(), want)
	}
}
