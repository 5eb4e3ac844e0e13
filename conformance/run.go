package conformance

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// The account and region the corpus was recorded with.
const (
	Account = "111111111111"
	Region  = "us-east-1"
)

// RunExecution runs an execution case on a fresh in-memory engine with a
// virtual clock, serving Task states from the case's mocks.
func RunExecution(ctx context.Context, c *Case) (*Outcome, error) {
	var sm *asl.StateMachine
	var err error
	if c.Definition != nil {
		sm, err = asl.FromValue(c.Definition)
	} else {
		sm, err = asl.Parse([]byte(c.DefinitionString))
	}
	if err != nil {
		return nil, fmt.Errorf("invalid definition: %w", err)
	}
	var inv task.Invoker
	if c.Mocks != nil {
		cfg, err := task.MockConfigFromValue(c.Mocks)
		if err != nil {
			return nil, fmt.Errorf("mocks: %w", err)
		}
		if inv, err = cfg.Invoker(c.StateMachineName, ""); err != nil {
			return nil, err
		}
	}
	smName, execName := c.StateMachineName, c.ExecutionName
	if smName == "" {
		smName = "stepd_test"
	}
	if execName == "" {
		execName = strings.NewReplacer(".", "_", " ", "_").Replace(c.Name)
	}
	l := &engine.Local{Region: Region, Account: Account, Options: engine.Options{Invoker: inv}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	x, err := l.Run(ctx, sm, engine.Execution{StateMachineName: smName, Name: execName, RoleArn: c.RoleArn, Input: c.Input})
	if err != nil {
		return nil, err
	}
	return OutcomeOf(x), nil
}

// OutcomeOf summarises a finished execution.
func OutcomeOf(x *interp.Execution) *Outcome {
	o := &Outcome{Status: string(x.Status()), History: history.Values(x.History(), false)}
	if x.Status() == interp.Succeeded {
		o.Output = x.Output()
	}
	if f := x.Failure(); f != nil {
		o.Error, o.Cause = f.Error, f.Cause
	}
	return o
}

// Result is how one case fared.
type Result struct {
	Case       *Case
	Outcome    *Outcome
	Err        error // the case could not run
	OutcomeOK  bool
	OutcomeErr []Diff
	History    *HistoryResult // nil when not recorded
	Elapsed    time.Duration
}

// Passed reports whether the outcome and (when recorded) the history match.
func (r *Result) Passed() bool {
	return r.Err == nil && r.OutcomeOK && (r.History == nil || r.History.Tolerant)
}

// Check runs an execution case and compares it.
func Check(ctx context.Context, c *Case) *Result {
	start := time.Now()
	r := &Result{Case: c}
	out, err := RunExecution(ctx, c)
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

// LoadKnown reads a known-failures file.
func LoadKnown(path string) (Known, error) {
	k := Known{"outcome": {}, "history": {}}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return k, nil
		}
		return nil, err
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) < 3 || (f[0] != "outcome" && f[0] != "history") {
			return nil, fmt.Errorf("%s:%d: want '<outcome|history> <case> <reason>'", path, n+1)
		}
		k[f[0]][f[1]] = strings.TrimSpace(f[2])
	}
	return k, nil
}

// Complaints checks results against the known-failures list: a failing
// case must be listed, and a listed case must exist and still fail.
func (k Known) Complaints(results []*Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		name := r.Case.Name
		seen[name] = true
		outcomeFails := r.Err != nil || !r.OutcomeOK
		historyFails := r.History != nil && !r.History.Tolerant
		check := func(aspect string, fails bool) {
			_, listed := k[aspect][name]
			switch {
			case fails && !listed:
				out = append(out, fmt.Sprintf("%s %s: fails but is not a known failure", aspect, name))
			case !fails && listed:
				out = append(out, fmt.Sprintf("%s %s: passes now; remove it from the known failures", aspect, name))
			}
		}
		check("outcome", outcomeFails)
		check("history", historyFails && r.History != nil)
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
	for _, aspect := range []string{"outcome", "history"} {
		for _, r := range results {
			outcomeFails := r.Err != nil || !r.OutcomeOK
			historyFails := r.History != nil && !r.History.Tolerant
			fails := outcomeFails
			if aspect == "history" {
				fails = historyFails
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
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Summary counts passes per category and selection.
type Summary struct {
	rows map[string]*[4]int // category → outcome pass, outcome total, history pass, history total
}

// Add counts a result.
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
	if r.Err == nil && r.OutcomeOK {
		row[0]++
	}
	if r.History != nil {
		row[3]++
		if r.Err == nil && r.OutcomeOK && r.History.Tolerant {
			row[2]++
		}
	}
}

// String prints the summary as a table.
func (s *Summary) String() string {
	keys := make([]string, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %15s %15s\n", "selection", "outcome", "history")
	for _, k := range keys {
		r := s.rows[k]
		fmt.Fprintf(&b, "%-40s %6d/%-4d %3.0f%% %6d/%-4d %3.0f%%\n", k, r[0], r[1], pct(r[0], r[1]), r[2], r[3], pct(r[2], r[3]))
	}
	return b.String()
}

// Row returns the counts of a selection.
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

// CheckDefinition runs an invalid-definition or validate-definition case
// through the validator and compares AWS's recorded answer.
func CheckDefinition(c *Case) *Result {
	start := time.Now()
	data := []byte(c.DefinitionString)
	if c.Definition != nil {
		data = []byte(value.String(c.Definition))
	}
	vr := validate.Definition(data, c.Type)
	r := &Result{Case: c, OutcomeOK: true}
	switch c.Kind {
	case "invalid-definition":
		want := str(c.Expected, "message")
		got := validate.Message(vr.Diagnostics)
		m := newMatcher(c)
		if vr.OK() || !m.matchString(want, got) {
			r.OutcomeOK = false
			r.OutcomeErr = []Diff{{Where: "InvalidDefinition message", Want: want, Got: got}}
		}
	case "validate-definition":
		got := validate.Response(vr)
		if !value.Equal(c.Expected, got) {
			r.OutcomeOK = false
			r.OutcomeErr = []Diff{{Where: "ValidateStateMachineDefinition response", Want: value.String(c.Expected), Got: value.String(got)}}
		}
	default:
		r.Err = fmt.Errorf("case kind %q is not a definition check", c.Kind)
	}
	r.Elapsed = time.Since(start)
	return r
}
