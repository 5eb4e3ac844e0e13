package conformance

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/graph"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// Coverage records, per state machine, which states and which branches —
// each Choice rule and Default, each Retry rule, each Catch clause — the
// execution cases exercised (stepd test --cover). A state machine is one
// definition text; cases that run the same definition add up.
type Coverage struct {
	machines map[string]*MachineCoverage // by definition text
	order    []*MachineCoverage
}

// MachineCoverage is the coverage of one state machine.
type MachineCoverage struct {
	Name   string           // the definition file, else the state machine name, else the first case's name
	States []*StateCoverage // in definition order, nested states after their container
	Cases  int              // the cases that ran it

	byName map[string]*StateCoverage
}

// StateCoverage is the coverage of one state.
type StateCoverage struct {
	Name     string
	Type     string
	Visits   int               // times entered, over all cases
	Branches []*BranchCoverage // Choice rules, Default, retriers, catchers, in that order
}

// BranchCoverage is one branch of a state.
type BranchCoverage struct {
	Kind  string // "choice", "default", "retry" or "catch"
	Index int    // the rule's, retrier's or catcher's index (0 for default)
	Label string // the rule as text, or the ErrorEquals list
	Next  string // the target state ("" for a retrier)
	Hits  int
}

func kindName(k interp.BranchKind) string {
	switch k {
	case interp.BranchChoice:
		return "choice"
	case interp.BranchDefault:
		return "default"
	case interp.BranchRetry:
		return "retry"
	case interp.BranchCatch:
		return "catch"
	}
	return "?"
}

// Add counts what one execution case's run exercised. Results of other
// kinds, and cases that could not run, add nothing.
func (cv *Coverage) Add(r *Result) {
	c := r.Case
	if c.Kind != "execution" || r.Outcome == nil {
		return
	}
	def := c.Definition
	if def == nil {
		var err error
		if def, err = value.ParseString(c.DefinitionString); err != nil {
			return
		}
	}
	key := value.String(def)
	if cv.machines == nil {
		cv.machines = map[string]*MachineCoverage{}
	}
	m := cv.machines[key]
	if m == nil {
		name := c.DefinitionFile
		if name == "" {
			name = c.StateMachineName
		}
		if name == "" {
			name = c.Name
		}
		m = newMachineCoverage(name, def)
		cv.machines[key] = m
		cv.order = append(cv.order, m)
	}
	m.Cases++
	for _, ev := range r.Outcome.History {
		e, _ := ev.(*value.Object)
		if t := evType(e); !strings.HasSuffix(t, "StateEntered") {
			continue
		}
		d, _ := e.Get("stateEnteredEventDetails")
		do, _ := d.(*value.Object)
		if do == nil {
			continue
		}
		name, _ := do.Get("name")
		if s, ok := name.(string); ok && m.byName[s] != nil {
			m.byName[s].Visits++
		}
	}
	for _, b := range r.Outcome.Branches {
		st := m.byName[b.State]
		if st == nil {
			continue
		}
		k := kindName(b.Kind)
		for _, bc := range st.Branches {
			if bc.Kind == k && bc.Index == b.Index {
				bc.Hits++
				break
			}
		}
	}
}

func newMachineCoverage(name string, def any) *MachineCoverage {
	m := &MachineCoverage{Name: name, byName: map[string]*StateCoverage{}}
	graph.Walk(graph.Build(def), func(n *graph.Node, sc *graph.Scope, _ int) {
		if n.Kind != graph.KindState || m.byName[n.Name] != nil {
			return
		}
		st := &StateCoverage{Name: n.Name, Type: n.Type}
		targets := map[string]string{}
		for _, e := range sc.Edges {
			if e.From == n.ID {
				targets[e.Kind+":"+fmt.Sprint(e.Index)] = strings.TrimPrefix(e.To, sc.ID+":")
			}
		}
		if n.Type == "Choice" {
			rules, _ := get(n.Def, "Choices").([]any)
			for i, r := range rules {
				ro, _ := r.(*value.Object)
				st.Branches = append(st.Branches, &BranchCoverage{Kind: "choice", Index: i, Label: graph.RuleText(ro), Next: targets[graph.EdgeChoice+":"+fmt.Sprint(i)]})
			}
			if n.Def.Has("Default") {
				st.Branches = append(st.Branches, &BranchCoverage{Kind: "default", Label: "Default", Next: targets[graph.EdgeDefault+":0"]})
			}
		}
		retries, _ := get(n.Def, "Retry").([]any)
		for i, r := range retries {
			ro, _ := r.(*value.Object)
			st.Branches = append(st.Branches, &BranchCoverage{Kind: "retry", Index: i, Label: graph.ErrorList(ro)})
		}
		catches, _ := get(n.Def, "Catch").([]any)
		for i, c := range catches {
			co, _ := c.(*value.Object)
			st.Branches = append(st.Branches, &BranchCoverage{Kind: "catch", Index: i, Label: graph.ErrorList(co), Next: targets[graph.EdgeCatch+":"+fmt.Sprint(i)]})
		}
		m.States = append(m.States, st)
		m.byName[n.Name] = st
	})
	return m
}

func get(o *value.Object, k string) any {
	if o == nil {
		return nil
	}
	v, _ := o.Get(k)
	return v
}

// Machines returns the state machines covered, in the order their first
// case ran.
func (cv *Coverage) Machines() []*MachineCoverage { return cv.order }

// Counts returns the states entered and the states in all, and the
// branches taken and the branches in all.
func (m *MachineCoverage) Counts() (states, totalStates, branches, totalBranches int) {
	for _, s := range m.States {
		totalStates++
		if s.Visits > 0 {
			states++
		}
		for _, b := range s.Branches {
			totalBranches++
			if b.Hits > 0 {
				branches++
			}
		}
	}
	return
}

func percent(a, b int) string {
	if b == 0 {
		return "100%"
	}
	s := fmt.Sprintf("%.1f", float64(a)*100/float64(b))
	return strings.TrimSuffix(s, ".0") + "%"
}

// Summary is the line `stepd test --cover` prints for the state machine,
// like go test -cover: "coverage: 83.3% of states, 70% of branches".
func (m *MachineCoverage) Summary() string {
	s, ts, b, tb := m.Counts()
	line := fmt.Sprintf("coverage: %s of states (%d/%d)", percent(s, ts), s, ts)
	if tb > 0 {
		line += fmt.Sprintf(", %s of branches (%d/%d)", percent(b, tb), b, tb)
	} else {
		line += ", no branches"
	}
	return line
}

// Text is the detailed report: per state machine, its summary, then each
// state with its visits and each branch with its hits; what was never
// exercised is marked with "!".
func (cv *Coverage) Text() string {
	var b strings.Builder
	for _, m := range cv.order {
		fmt.Fprintf(&b, "%s (%d cases): %s\n", m.Name, m.Cases, m.Summary())
		for _, s := range m.States {
			fmt.Fprintf(&b, "  %s %-30s %-9s %d visits\n", mark(s.Visits), s.Name, s.Type, s.Visits)
			for _, br := range s.Branches {
				what := br.Kind
				if br.Kind != "default" {
					what += fmt.Sprintf(" %d", br.Index)
				}
				to := ""
				if br.Next != "" {
					to = " → " + br.Next
				}
				fmt.Fprintf(&b, "      %s %-9s %s%s: %d\n", mark(br.Hits), what, br.Label, to, br.Hits)
			}
		}
	}
	return b.String()
}

func mark(n int) string {
	if n == 0 {
		return "!"
	}
	return " "
}

// JSON is the detailed report as a JSON value:
//
//	{"stateMachines": [{"name", "cases", "states": {"covered", "total"},
//	  "branches": {"covered", "total"},
//	  "detail": [{"name", "type", "visits",
//	              "branches": [{"kind", "index", "label", "next", "hits"}]}]}]}
//
// The console reads this file to colour a graph by coverage.
func (cv *Coverage) JSON() *value.Object {
	list := make([]any, 0, len(cv.order))
	for _, m := range cv.order {
		s, ts, b, tb := m.Counts()
		detail := make([]any, 0, len(m.States))
		for _, st := range m.States {
			brs := make([]any, 0, len(st.Branches))
			for _, br := range st.Branches {
				var next any
				if br.Next != "" {
					next = br.Next
				}
				brs = append(brs, value.ObjectOf("kind", br.Kind, "index", value.Int(int64(br.Index)), "label", br.Label, "next", next, "hits", value.Int(int64(br.Hits))))
			}
			detail = append(detail, value.ObjectOf("name", st.Name, "type", st.Type, "visits", value.Int(int64(st.Visits)), "branches", brs))
		}
		list = append(list, value.ObjectOf(
			"name", m.Name,
			"cases", value.Int(int64(m.Cases)),
			"states", value.ObjectOf("covered", value.Int(int64(s)), "total", value.Int(int64(ts))),
			"branches", value.ObjectOf("covered", value.Int(int64(b)), "total", value.Int(int64(tb))),
			"detail", detail))
	}
	return value.ObjectOf("stateMachines", list)
}
