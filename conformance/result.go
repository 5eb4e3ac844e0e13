package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Result is how one case fared.
type Result struct {
	Case       *Case
	Outcome    *Outcome // nil for definition checks and cases that could not run
	Err        error    // the case could not run
	OutcomeOK  bool
	OutcomeErr []Diff
	History    *HistoryResult // nil when not recorded
	Elapsed    time.Duration
}

// Passed reports whether the outcome and (when recorded) the history match.
func (r *Result) Passed() bool {
	return r.Err == nil && r.OutcomeOK && (r.History == nil || r.History.Tolerant)
}

// OutcomeFailed reports whether the case failed its outcome (or could
// not run).
func (r *Result) OutcomeFailed() bool { return r.Err != nil || !r.OutcomeOK }

// HistoryFailed reports whether the case has a recorded history that the
// engine's does not match (tolerantly).
func (r *Result) HistoryFailed() bool { return r.History != nil && !r.History.Tolerant }

// Explain describes why a case failed, in several lines; it is empty for
// a case that passed.
func (r *Result) Explain() string {
	if r.Err != nil {
		return "cannot run: " + r.Err.Error() + "\n"
	}
	var b strings.Builder
	b.WriteString(Format(r.OutcomeErr))
	if r.HistoryFailed() {
		b.WriteString("history differs (tolerant comparison):\n")
		b.WriteString(Format(r.History.Diffs))
	}
	return b.String()
}

// Runner runs an execution case on an engine.
type Runner func(ctx context.Context, c *Case) (*Outcome, error)

// CheckWith runs an execution case with run and compares the outcome and
// the history.
func CheckWith(ctx context.Context, c *Case, run Runner) *Result {
	start := time.Now()
	r := &Result{Case: c}
	out, err := run(ctx, c)
	r.Elapsed = time.Since(start)
	if err != nil {
		r.Err = err
		return r
	}
	r.Outcome = out
	r.OutcomeErr = CompareOutcome(c, out)
	r.OutcomeOK = len(r.OutcomeErr) == 0
	r.History = CompareHistory(c, out)
	return r
}

// Known is a known-failures list: aspect ("outcome" or "history") → case
// name → reason.
type Known map[string]map[string]string

// Aspects of a case that the known-failures list tracks.
const (
	AspectOutcome = "outcome"
	AspectHistory = "history"
)

// LoadKnown reads a known-failures file (format in the package comment).
// A missing file is an empty list.
func LoadKnown(path string) (Known, error) {
	k := Known{AspectOutcome: {}, AspectHistory: {}}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return k, nil
		}
		return nil, fmt.Errorf("known failures: %w", err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || (f[0] != AspectOutcome && f[0] != AspectHistory) {
			return nil, fmt.Errorf("%s:%d: want '<outcome|history> <case> <reason>'", path, n+1)
		}
		if _, dup := k[f[0]][f[1]]; dup {
			return nil, fmt.Errorf("%s:%d: %s %s is listed twice", path, n+1, f[0], f[1])
		}
		k[f[0]][f[1]] = strings.Join(f[2:], " ")
	}
	return k, nil
}

// Complaints checks results against the known-failures list: a failing
// case must be listed, a listed case must still fail (the list only
// shrinks), and a listed case must exist among the results.
func (k Known) Complaints(results []*Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		name := r.Case.Name
		seen[name] = true
		check := func(aspect string, fails bool) {
			_, listed := k[aspect][name]
			switch {
			case fails && !listed:
				out = append(out, fmt.Sprintf("%s %s: fails but is not a known failure", aspect, name))
			case !fails && listed:
				out = append(out, fmt.Sprintf("%s %s: passes now; remove it from the known failures", aspect, name))
			}
		}
		check(AspectOutcome, r.OutcomeFailed())
		check(AspectHistory, r.HistoryFailed())
	}
	for aspect, m := range k {
		for name := range m {
			if !seen[name] {
				out = append(out, fmt.Sprintf("%s %s: listed as a known failure but there is no such case", aspect, name))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Write rewrites a known-failures file from results, keeping the reasons
// already given and marking new entries for a person to explain.
func (k Known) Write(path string, results []*Result) error {
	var b strings.Builder
	b.WriteString("# Conformance cases that stepd does not pass yet: <outcome|history> <case> <reason>.\n")
	b.WriteString("# The list may only shrink: the test fails when a listed case passes.\n")
	for _, aspect := range []string{AspectOutcome, AspectHistory} {
		for _, r := range results {
			fails := r.OutcomeFailed()
			if aspect == AspectHistory {
				fails = r.HistoryFailed()
			}
			if !fails {
				continue
			}
			reason := k[aspect][r.Case.Name]
			if reason == "" {
				reason = "TODO: explain"
			}
			fmt.Fprintf(&b, "%s %s %s\n", aspect, r.Case.Name, reason)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("known failures: %w", err)
	}
	return nil
}

// Names of the summary rows that AddResult fills besides the categories.
const (
	RowAll          = "all execution cases"
	RowJSONPathOnly = "selection: JSONPath only (no JSONata, no variables)"
	RowJSONataOrVar = "selection: JSONata or variables"
	RowMocked       = "selection: tasks answered by mocks"
)

// Summary counts passes per category and selection.
type Summary struct {
	rows map[string]*[4]int // outcome pass, outcome total, history pass, history total
}

// Add counts a result in the row key. A history counts as passed only
// when the outcome passed too.
func (s *Summary) Add(key string, r *Result) {
	if s.rows == nil {
		s.rows = map[string]*[4]int{}
	}
	row := s.rows[key]
	if row == nil {
		row = &[4]int{}
		s.rows[key] = row
	}
	row[1]++
	if !r.OutcomeFailed() {
		row[0]++
	}
	if r.History != nil {
		row[3]++
		if !r.OutcomeFailed() && r.History.Tolerant {
			row[2]++
		}
	}
}

// AddResult counts a result in its category's row ("category NAME"),
// and, for execution cases, in RowAll, in one of RowJSONPathOnly and
// RowJSONataOrVar, and in RowMocked when the case's tasks are answered by
// its mocks.
func (s *Summary) AddResult(r *Result) {
	c := r.Case
	s.Add("category "+c.Category, r)
	if c.Kind != "execution" {
		return
	}
	s.Add(RowAll, r)
	if c.UsesJSONataOrVariables() {
		s.Add(RowJSONataOrVar, r)
	} else {
		s.Add(RowJSONPathOnly, r)
	}
	if c.Mocks != nil {
		s.Add(RowMocked, r)
	}
}

// String prints the summary as a table, rows in name order.
func (s *Summary) String() string {
	keys := make([]string, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-52s %16s %16s\n", "selection", "outcome", "history")
	for _, k := range keys {
		r := s.rows[k]
		fmt.Fprintf(&b, "%-52s %7d/%-4d %3.0f%% %7d/%-4d %3.0f%%\n", k, r[0], r[1], pct(r[0], r[1]), r[2], r[3], pct(r[2], r[3]))
	}
	return b.String()
}

// Row returns the counts of a row.
func (s *Summary) Row(key string) (outcomePass, outcomeTotal, historyPass, historyTotal int) {
	r := s.rows[key]
	if r == nil {
		return
	}
	return r[0], r[1], r[2], r[3]
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return float64(a) * 100 / float64(b)
}

// Reporter prints results the way go test does, for `stepd test`:
//
//	--- PASS: name (0.01s)
//	--- FAIL: name (0.01s)
//	    <the differences, indented>
//
// and Finish ends with the line "N passed, N failed", which CI tools read.
type Reporter struct {
	W            io.Writer
	FailuresOnly bool // leave out the PASS lines
	Passed       int
	Failed       int
	Skipped      int
}

// Report prints one result.
func (p *Reporter) Report(r *Result) {
	secs := r.Elapsed.Seconds()
	if r.Passed() {
		p.Passed++
		if !p.FailuresOnly {
			fmt.Fprintf(p.W, "--- PASS: %s (%.2fs)\n", r.Case.Name, secs)
		}
		return
	}
	p.Failed++
	fmt.Fprintf(p.W, "--- FAIL: %s (%.2fs)\n", r.Case.Name, secs)
	fmt.Fprint(p.W, indent(r.Explain(), "    "))
}

// Skip prints a case that was not run.
func (p *Reporter) Skip(name, reason string) {
	p.Skipped++
	fmt.Fprintf(p.W, "--- SKIP: %s (%s)\n", name, reason)
}

// Finish prints the totals: a skip count when cases were skipped, then
// "N passed, N failed" as the last line.
func (p *Reporter) Finish() {
	if p.Skipped > 0 {
		fmt.Fprintf(p.W, "%d skipped\n", p.Skipped)
	}
	fmt.Fprintf(p.W, "%d passed, %d failed\n", p.Passed, p.Failed)
}

func indent(s, pre string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}
