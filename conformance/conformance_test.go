package conformance_test

import (
	"context"
	"flag"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

var (
	verbose = flag.Bool("conformance.v", false, "print every failing case with its diff")
	only    = flag.String("conformance.run", "", "run only the cases whose names contain this text")
	update  = flag.Bool("conformance.update", false, "rewrite the known-failures file from this run, keeping existing reasons")
)

// TestConformance runs every AWS-recorded execution and definition case
// (test-state cases need the TestState API), prints the pass
// counts and enforces the known-failures list.
func TestConformance(t *testing.T) {
	cases, err := conformance.Load(shared.CasesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	known, err := conformance.LoadKnown(filepath.Join("testdata", "known_failures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var results []*conformance.Result
	var sum conformance.Summary
	for _, c := range cases {
		if !strings.Contains(c.Name, *only) {
			continue
		}
		var r *conformance.Result
		switch c.Kind {
		case "execution":
			r = conformance.Check(context.Background(), c)
		case "invalid-definition", "validate-definition":
			r = conformance.CheckDefinition(c)
		case "test-state":
			r = conformance.CheckTestState(context.Background(), c)
		default:
			continue
		}
		results = append(results, r)
		sum.AddResult(r)
		if *verbose && !r.Passed() {
			t.Logf("FAIL %s: %s", c.Name, describe(r))
		}
	}
	t.Logf("conformance results (history: tolerant comparison)\n%s", sum.String())
	if *only != "" {
		return
	}
	if *update {
		if err := known.Write(filepath.Join("testdata", "known_failures.txt"), results); err != nil {
			t.Fatal(err)
		}
		return
	}
	if complaints := known.Complaints(results); len(complaints) > 0 {
		t.Errorf("known-failures list is out of date:\n%s", strings.Join(complaints, "\n"))
	}
}

func describe(r *conformance.Result) string {
	var b strings.Builder
	if r.Err != nil {
		b.WriteString("error: " + r.Err.Error())
		return b.String()
	}
	b.WriteString("\n" + r.Explain())
	return b.String()
}

// TestCorpus loads the whole corpus, checks the counts the README gives,
// and compares each recorded history with itself turned back into the
// API's shape: the normaliser must undo exactly what the recording did.
func TestCorpus(t *testing.T) {
	cases, err := conformance.Load(shared.CasesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	withHistory, sorted := 0, 0
	for _, c := range cases {
		kinds[c.Kind]++
		if c.History == nil {
			continue
		}
		withHistory++
		if c.SortedParallel {
			sorted++
		}
		api := make([]any, len(c.History))
		for i, e := range c.History {
			api[i] = conformance.Denormalize(e.(*value.Object))
		}
		r := conformance.CompareHistory(c, &conformance.Outcome{History: api})
		want := conformance.Strict
		if c.SortedParallel {
			want = conformance.Tolerant
		}
		if r.Mode() != want {
			t.Errorf("%s: its own history compares %q, want %q:\n%s", c.Name, r.Mode(), want, conformance.Format(r.Diffs))
		}
	}
	want := map[string]int{"execution": 685, "test-state": 121, "invalid-definition": 11, "validate-definition": 8}
	if len(cases) != 825 || !maps.Equal(kinds, want) {
		t.Errorf("%d cases by kind %v, want 825 by kind %v", len(cases), kinds, want)
	}
	if withHistory != 343 || sorted != 4 {
		t.Errorf("%d cases with history (%d with sorted Parallel branches), want 343 (4)", withHistory, sorted)
	}
}
