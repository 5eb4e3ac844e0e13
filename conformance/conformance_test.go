package conformance_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/conformance"
)

const casesDir = "../../shared/conformance/cases"

var (
	verbose = flag.Bool("conformance.v", false, "print every failing case with its diff")
	only    = flag.String("conformance.run", "", "run only the cases whose names contain this text")
	update  = flag.Bool("conformance.update", false, "rewrite the known-failures file from this run, keeping existing reasons")
)

// TestConformance runs every AWS-recorded execution case, prints the pass
// counts and enforces the known-failures list.
func TestConformance(t *testing.T) {
	if _, err := os.Stat(casesDir); err != nil {
		t.Skipf("conformance cases not found at %s; skipping", casesDir)
	}
	cases, err := conformance.Load(casesDir)
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
		if c.Kind != "execution" || !strings.Contains(c.Name, *only) {
			continue
		}
		r := conformance.Check(context.Background(), c)
		results = append(results, r)
		sum.Add("category "+c.Category, r)
		if c.UsesJSONataOrVariables() {
			sum.Add("selection: JSONata or variables", r)
		} else {
			sum.Add("selection: JSONPath only", r)
		}
		sum.Add("all execution cases", r)
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
	for _, d := range r.OutcomeErr {
		b.WriteString("\n  " + d.String())
	}
	if r.History != nil && !r.History.Tolerant {
		for _, d := range r.History.Diffs {
			b.WriteString("\n  history " + d.String())
		}
	}
	return b.String()
}
