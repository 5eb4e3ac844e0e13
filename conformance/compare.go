package conformance

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/stepd/stepd/value"
)

// Outcome is what the engine produced for an execution case.
type Outcome struct {
	Status string
	Output any    // meaningful when Status is SUCCEEDED
	Error  string // empty when none
	Cause  string
	// History is the event list in GetExecutionHistory's shape (JSON text
	// in input/output/parameters), without timestamps or with them.
	History []any
}

// Diff is one difference between expected and actual.
type Diff struct {
	Where      string
	Want, Got  string
	Unordered  bool
	EventIndex int
}

func (d Diff) String() string {
	return fmt.Sprintf("%s:\n\twant %s\n\t got %s", d.Where, d.Want, d.Got)
}

// matcher compares expected values (with placeholders) to actual ones.
type matcher struct {
	c    *Case
	repl *strings.Replacer
}

func newMatcher(c *Case) *matcher {
	ph := slices2(c.Placeholders)
	sort.SliceStable(ph, func(i, j int) bool { return len(ph[i][1]) > len(ph[j][1]) })
	var pairs []string
	for _, p := range ph {
		if p[1] != "" {
			pairs = append(pairs, p[1], p[0])
		}
	}
	pairs = append(pairs, "arn:aws:", "arn:<partition>:", ":us-east-1:", ":<region>:")
	return &matcher{c: c, repl: strings.NewReplacer(pairs...)}
}

func slices2(in [][2]string) [][2]string {
	out := make([][2]string, len(in))
	copy(out, in)
	return out
}

var (
	wildcardRE = regexp.MustCompile(`<[^<>]*>`)
	regexCache sync.Map
)

func isWildcard(s string) bool {
	switch s {
	case "date", "datetime", "timestamp":
		return true
	}
	return len(s) > 2 && s[0] == '<' && s[len(s)-1] == '>' && !strings.ContainsAny(s[1:len(s)-1], "<>")
}

// matchString compares an expected string (which may hold placeholders) to
// an actual one.
func (m *matcher) matchString(want, got string) bool {
	if want == got || isWildcard(want) {
		return true
	}
	got = m.repl.Replace(got)
	if want == got {
		return true
	}
	if !strings.Contains(want, "<") {
		return false
	}
	var re *regexp.Regexp
	if v, ok := regexCache.Load(want); ok {
		re = v.(*regexp.Regexp)
	} else {
		parts := wildcardRE.Split(want, -1)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re = regexp.MustCompile(`(?s)^` + strings.Join(parts, ".*") + `$`)
		regexCache.Store(want, re)
	}
	return re.MatchString(got)
}

// match compares JSON values; numbers by value, object keys unordered.
func (m *matcher) match(want, got any) bool {
	switch w := want.(type) {
	case string:
		if isWildcard(w) {
			return true
		}
		g, ok := got.(string)
		return ok && m.matchString(w, g)
	case []any:
		g, ok := got.([]any)
		if !ok || len(w) != len(g) {
			return false
		}
		for i := range w {
			if !m.match(w[i], g[i]) {
				return false
			}
		}
		return true
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok || w.Len() != g.Len() {
			return false
		}
		for k, wv := range w.All {
			gv, ok := g.Get(k)
			if !ok {
				return false
			}
			if k == "SdkHttpMetadata" || k == "SdkResponseMetadata" {
				continue
			}
			if !m.match(wv, gv) {
				return false
			}
		}
		return true
	}
	return value.Equal(want, got)
}

// matchCause compares an expected cause (a string, or the parsed object
// when AWS's cause was JSON) to the engine's cause text.
func (m *matcher) matchCause(want any, got string) bool {
	switch w := want.(type) {
	case nil:
		return got == ""
	case string:
		return m.matchString(w, got)
	}
	v, err := value.ParseString(got)
	return err == nil && m.match(want, v)
}

// CompareOutcome compares status, output, error and cause.
func CompareOutcome(c *Case, got *Outcome) []Diff {
	m := newMatcher(c)
	var diffs []Diff
	if c.Status != got.Status {
		diffs = append(diffs, Diff{Where: "status", Want: c.Status, Got: got.Status})
	}
	if c.Status == "SUCCEEDED" && got.Status == "SUCCEEDED" && !m.match(c.Output, got.Output) {
		diffs = append(diffs, Diff{Where: "output", Want: value.String(c.Output), Got: value.String(got.Output)})
	}
	if c.Status != "SUCCEEDED" {
		we, _ := c.Error.(string)
		if c.Error != nil && !m.matchString(we, got.Error) {
			diffs = append(diffs, Diff{Where: "error", Want: we, Got: got.Error})
		}
		if c.Cause != nil && !m.matchCause(c.Cause, got.Cause) {
			diffs = append(diffs, Diff{Where: "cause", Want: showCause(c.Cause), Got: got.Cause})
		}
	}
	return diffs
}

func showCause(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return value.String(v)
}

// jsonTextFields are the detail members the API returns as JSON text.
var jsonTextFields = map[string]bool{"input": true, "output": true, "parameters": true}

// Normalize converts an API-shaped history event into the corpus's
// normalised shape: no timestamp; input, output, parameters and
// assignedVariables values parsed; a JSON cause parsed.
func Normalize(ev any) *value.Object {
	o, _ := ev.(*value.Object)
	out := value.NewObject(o.Len())
	for k, v := range o.All {
		if k == "timestamp" {
			continue
		}
		if d, ok := v.(*value.Object); ok && strings.HasSuffix(k, "EventDetails") {
			nd := value.NewObject(d.Len())
			for dk, dv := range d.All {
				if s, ok := dv.(string); ok && jsonTextFields[dk] {
					if pv, err := value.ParseString(s); err == nil {
						dv = pv
					}
				}
				if s, ok := dv.(string); ok && dk == "cause" {
					if pv, err := value.ParseString(s); err == nil {
						if _, isObj := pv.(*value.Object); isObj {
							dv = pv
						}
					}
				}
				if av, ok := dv.(*value.Object); ok && dk == "assignedVariables" {
					na := value.NewObject(av.Len())
					for ak, aval := range av.All {
						if s, ok := aval.(string); ok {
							if pv, err := value.ParseString(s); err == nil {
								aval = pv
							}
						}
						na.Set(ak, aval)
					}
					dv = na
				}
				nd.Set(dk, dv)
			}
			v = nd
		}
		out.Set(k, v)
	}
	return out
}

// HistoryResult tells how a history compared.
type HistoryResult struct {
	Strict   bool   // events, ids and order all match
	Tolerant bool   // match with concurrent segments compared as multisets
	Diffs    []Diff // differences of the tolerant comparison
}

// CompareHistory compares the recorded history with the engine's. It
// returns nil when the case has no recorded history.
func CompareHistory(c *Case, got *Outcome) *HistoryResult {
	if c.History == nil {
		return nil
	}
	m := newMatcher(c)
	actual := make([]*value.Object, len(got.History))
	for i, e := range got.History {
		actual[i] = Normalize(e)
	}
	want := make([]*value.Object, len(c.History))
	for i, e := range c.History {
		want[i], _ = e.(*value.Object)
	}
	r := &HistoryResult{}
	r.Strict = !c.SortedParallel && len(m.strict(want, actual, true)) == 0
	if r.Strict {
		r.Tolerant = true
		return r
	}
	r.Diffs = m.tolerant(want, actual)
	r.Tolerant = len(r.Diffs) == 0
	return r
}

func evName(e *value.Object) string {
	t, _ := e.Get("type")
	s, _ := t.(string)
	return s
}

// eventDetails returns the event without its ids.
func eventDetails(e *value.Object) *value.Object {
	o := value.NewObject(e.Len())
	for k, v := range e.All {
		if k == "id" || k == "previousEventId" {
			continue
		}
		o.Set(k, v)
	}
	return o
}

func (m *matcher) strict(want, got []*value.Object, ids bool) []Diff {
	var diffs []Diff
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(want):
			diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d", i+1), Want: "(none)", Got: value.String(got[i]), EventIndex: i})
		case i >= len(got):
			diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d", i+1), Want: value.String(want[i]), Got: "(none)", EventIndex: i})
		default:
			w, g := want[i], got[i]
			if !ids {
				w, g = eventDetails(w), eventDetails(g)
			}
			if !m.match(w, g) {
				diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d (%s)", i+1, evName(want[i])), Want: value.String(want[i]), Got: value.String(got[i]), EventIndex: i})
			}
		}
		if len(diffs) >= 3 {
			break
		}
	}
	return diffs
}

func isContainer(typ string) bool {
	return strings.HasPrefix(typ, "Map") || strings.HasPrefix(typ, "Parallel")
}

// segments splits a history into ordered parts and concurrent segments: a
// segment runs from a Map or Parallel state's Entered event to its Exited
// event (or the end).
func segments(h []*value.Object) [][2]int {
	var segs [][2]int
	depth, start := 0, 0
	for i, e := range h {
		t := evName(e)
		if !isContainer(t) {
			continue
		}
		switch {
		case strings.HasSuffix(t, "StateEntered"):
			if depth == 0 {
				start = i
			}
			depth++
		case strings.HasSuffix(t, "StateExited"):
			depth--
			if depth == 0 {
				segs = append(segs, [2]int{start, i})
			}
		}
	}
	if depth > 0 {
		segs = append(segs, [2]int{start, len(h) - 1})
	}
	return segs
}

// tolerant compares events outside concurrent segments in order (ids
// included), and each segment as a multiset of events without ids.
func (m *matcher) tolerant(want, got []*value.Object) []Diff {
	ws, gs := segments(want), segments(got)
	if len(ws) == 0 || len(ws) != len(gs) {
		return m.strict(want, got, !m.c.SortedParallel)
	}
	var diffs []Diff
	wi, gi := 0, 0
	for k := range ws {
		// The ordered part before the segment.
		wpart, gpart := want[wi:ws[k][0]], got[gi:gs[k][0]]
		diffs = append(diffs, m.strict(wpart, gpart, k == 0 && !m.c.SortedParallel)...)
		diffs = append(diffs, m.multiset(want[ws[k][0]:ws[k][1]+1], got[gs[k][0]:gs[k][1]+1])...)
		wi, gi = ws[k][1]+1, gs[k][1]+1
	}
	diffs = append(diffs, m.strict(want[wi:], got[gi:], false)...)
	return diffs
}

func (m *matcher) multiset(want, got []*value.Object) []Diff {
	var diffs []Diff
	used := make([]bool, len(got))
	skipped := 0
	for _, w := range want {
		wd := eventDetails(w)
		found := false
		for j, g := range got {
			if !used[j] && m.match(wd, eventDetails(g)) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			diffs = append(diffs, Diff{Where: "concurrent segment", Want: value.String(w), Got: "(no matching event)", Unordered: true})
		}
	}
	for j, g := range got {
		if used[j] {
			continue
		}
		// A recording with sorted parallel branches lost the container's
		// Succeeded/Failed event.
		t := evName(g)
		if m.c.SortedParallel && skipped == 0 && (t == "ParallelStateSucceeded" || t == "ParallelStateFailed") {
			skipped++
			continue
		}
		diffs = append(diffs, Diff{Where: "concurrent segment", Want: "(no matching event)", Got: value.String(g), Unordered: true})
	}
	if len(diffs) > 3 {
		diffs = diffs[:3]
	}
	return diffs
}
