package conformance

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/value"
)

// jsonTextFields are the detail members the API returns as JSON text.
var jsonTextFields = map[string]bool{"input": true, "output": true, "parameters": true}

// Normalize converts an API-shaped history event into the corpus's
// normalised shape: no timestamp; input, output, parameters and each
// assignedVariables value parsed; a cause that is a JSON object parsed.
// Other values are kept, so normalising twice is harmless.
func Normalize(ev any) *value.Object {
	o, _ := ev.(*value.Object)
	out := value.NewObject(o.Len())
	for k, v := range o.All {
		if k == "timestamp" {
			continue
		}
		if d, ok := v.(*value.Object); ok && strings.HasSuffix(k, "EventDetails") {
			v = normalizeDetails(d)
		}
		out.Set(k, v)
	}
	return out
}

func normalizeDetails(d *value.Object) *value.Object {
	nd := value.NewObject(d.Len())
	for k, v := range d.All {
		switch s, isText := v.(string); {
		case isText && jsonTextFields[k]:
			if pv, err := value.ParseString(s); err == nil {
				v = pv
			}
		case isText && k == "cause":
			if pv, err := value.ParseString(s); err == nil {
				if _, isObj := pv.(*value.Object); isObj {
					v = pv
				}
			}
		case k == "assignedVariables":
			if av, ok := v.(*value.Object); ok {
				na := value.NewObject(av.Len())
				for ak, aval := range av.All {
					if s, ok := aval.(string); ok {
						if pv, err := value.ParseString(s); err == nil {
							aval = pv
						}
					}
					na.Set(ak, aval)
				}
				v = na
			}
		}
		nd.Set(k, v)
	}
	return nd
}

// Denormalize is the inverse of Normalize: it turns a recorded
// (normalised) event back into the API's shape, with input, output,
// parameters, assignedVariables values and object causes as JSON text.
func Denormalize(ev *value.Object) *value.Object {
	out := value.NewObject(ev.Len())
	for k, v := range ev.All {
		if d, ok := v.(*value.Object); ok && strings.HasSuffix(k, "EventDetails") {
			nd := value.NewObject(d.Len())
			for dk, dv := range d.All {
				switch {
				case jsonTextFields[dk]:
					dv = value.String(dv)
				case dk == "cause":
					if _, isText := dv.(string); !isText {
						dv = value.String(dv)
					}
				case dk == "assignedVariables":
					if av, ok := dv.(*value.Object); ok {
						na := value.NewObject(av.Len())
						for ak, aval := range av.All {
							na.Set(ak, value.String(aval))
						}
						dv = na
					}
				}
				nd.Set(dk, dv)
			}
			v = nd
		}
		out.Set(k, v)
	}
	return out
}

// Comparison modes of a history.
const (
	// Strict: the events, their ids and their order all match.
	Strict = "strict"
	// Tolerant: events outside Map and Parallel states match in order
	// with their ids; the events inside each top-level Map or Parallel
	// state match as a multiset (type and details, ids ignored), since
	// AWS interleaves iterations and branches in no particular order.
	Tolerant = "tolerant"
)

// HistoryResult tells how a history compared.
type HistoryResult struct {
	Strict      bool   // the strict comparison matched
	Tolerant    bool   // the tolerant comparison matched (implied by Strict)
	Diffs       []Diff // differences of the tolerant comparison
	StrictDiffs []Diff // differences of the strict comparison
}

// Mode returns the strictest mode that matched, or "" when none did.
func (r *HistoryResult) Mode() string {
	switch {
	case r.Strict:
		return Strict
	case r.Tolerant:
		return Tolerant
	}
	return ""
}

// maxDiffs bounds the differences reported per comparison.
const maxDiffs = 3

// CompareHistory compares the recorded history with the engine's
// (got.History, in the API's shape). It returns nil when the case has no
// recorded history. Pass/fail is the tolerant result; the strict result
// is reported alongside. A recording with sorted Parallel branches
// (compare.parallelBranchEventsSorted) never matches strictly.
func CompareHistory(c *Case, got *Outcome) *HistoryResult {
	if c.History == nil {
		return nil
	}
	actual := make([]*value.Object, len(got.History))
	for i, e := range got.History {
		actual[i] = Normalize(e)
	}
	want := make([]*value.Object, len(c.History))
	for i, e := range c.History {
		want[i], _ = e.(*value.Object)
		if want[i] == nil {
			want[i] = value.NewObject(0)
		}
	}
	r := &HistoryResult{}
	if c.SortedParallel {
		r.StrictDiffs = []Diff{{Where: "history", Want: "(a recording with sorted Parallel branches)", Got: "(cannot be compared strictly)"}}
	} else {
		r.StrictDiffs = newMatcher(c).ordered(want, actual, 0, 0, true)
	}
	r.Strict = len(r.StrictDiffs) == 0
	if r.Strict {
		r.Tolerant = true
		return r
	}
	r.Diffs = newMatcher(c).tolerant(want, actual, c.SortedParallel)
	r.Tolerant = len(r.Diffs) == 0
	return r
}

func evType(e *value.Object) string {
	t, _ := e.Get("type")
	s, _ := t.(string)
	return s
}

// withoutIDs returns the event without its ids.
func withoutIDs(e *value.Object) *value.Object {
	o := value.NewObject(e.Len())
	for k, v := range e.All {
		if k != "id" && k != "previousEventId" {
			o.Set(k, v)
		}
	}
	return o
}

// ordered compares events position by position; wOff and gOff are the
// positions of want[0] and got[0] in their histories.
func (m *matcher) ordered(want, got []*value.Object, wOff, gOff int, ids bool) []Diff {
	var diffs []Diff
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(want):
			diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d (unexpected %s)", gOff+i+1, evType(got[i])), Want: "(none)", Got: value.String(got[i]), EventIndex: gOff + i + 1})
		case i >= len(got):
			diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d (missing %s)", wOff+i+1, evType(want[i])), Want: value.String(want[i]), Got: "(none)", EventIndex: wOff + i + 1})
		default:
			w, g := want[i], got[i]
			if !ids {
				w, g = withoutIDs(w), withoutIDs(g)
			}
			if p := m.diff(w, g, "$"); p != "" {
				diffs = append(diffs, Diff{Where: fmt.Sprintf("event %d (%s)", wOff+i+1, evType(want[i])), Path: p, Want: value.String(want[i]), Got: value.String(got[i]), EventIndex: wOff + i + 1, Leaves: m.leaves(w, g)})
			}
		}
		if len(diffs) >= maxDiffs {
			break
		}
	}
	return diffs
}

func isContainer(typ string) bool {
	return strings.HasPrefix(typ, "MapState") || strings.HasPrefix(typ, "ParallelState")
}

// segments returns the [first, last] event positions of each top-level
// Map or Parallel state, from its Entered event to its Exited event (or
// the end of the history).
func segments(h []*value.Object) [][2]int {
	var segs [][2]int
	depth, start := 0, 0
	for i, e := range h {
		t := evType(e)
		if !isContainer(t) {
			continue
		}
		switch {
		case strings.HasSuffix(t, "StateEntered"):
			if depth == 0 {
				start = i
			}
			depth++
		case strings.HasSuffix(t, "StateExited") && depth > 0:
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

// tolerant compares the events outside Map and Parallel states in order,
// with ids while the histories stay aligned, and each Map or Parallel
// state's events as a multiset without ids. With sortedParallel, ids are
// only compared before the first segment, since the recording lost an
// event inside each segment.
func (m *matcher) tolerant(want, got []*value.Object, sortedParallel bool) []Diff {
	ws, gs := segments(want), segments(got)
	if len(ws) == 0 || len(ws) != len(gs) {
		return m.ordered(want, got, 0, 0, !sortedParallel)
	}
	var diffs []Diff
	wi, gi := 0, 0
	ids := true
	for k := range ws {
		diffs = append(diffs, m.ordered(want[wi:ws[k][0]], got[gi:gs[k][0]], wi, gi, ids)...)
		w, g := want[ws[k][0]:ws[k][1]+1], got[gs[k][0]:gs[k][1]+1]
		diffs = append(diffs, m.multiset(w, g, ws[k][0], sortedParallel)...)
		if sortedParallel || ws[k][0] != gs[k][0] || len(w) != len(g) {
			ids = false
		}
		wi, gi = ws[k][1]+1, gs[k][1]+1
	}
	diffs = append(diffs, m.ordered(want[wi:], got[gi:], wi, gi, ids)...)
	if len(diffs) > maxDiffs {
		diffs = diffs[:maxDiffs]
	}
	return diffs
}

// multiset matches the events of one segment regardless of order and ids.
// <uuid:N> placeholders are plain wildcards here. With sortedParallel,
// unmatched ParallelStateSucceeded/Failed events of the engine are
// accepted: the sorted recordings lost them.
func (m *matcher) multiset(want, got []*value.Object, wOff int, sortedParallel bool) []Diff {
	saved := m.bind
	m.bind = nil
	defer func() { m.bind = saved }()
	where := fmt.Sprintf("%s segment, events %d-%d", strings.TrimSuffix(evType(want[0]), "StateEntered"), wOff+1, wOff+len(want))
	gotIDs := make([]*value.Object, len(got))
	byType := map[string][]int{}
	for j, g := range got {
		gotIDs[j] = withoutIDs(g)
		byType[evType(g)] = append(byType[evType(g)], j)
	}
	used := make([]bool, len(got))
	var diffs []Diff
	for i, w := range want {
		wd := withoutIDs(w)
		found := false
		for _, j := range byType[evType(w)] {
			if !used[j] && m.match(wd, gotIDs[j]) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			d := Diff{Where: where + fmt.Sprintf(" (no %s like event %d)", evType(w), wOff+i+1), Want: value.String(w), Got: "(no matching event)", Unordered: true, EventIndex: wOff + i + 1}
			// Show the closest candidate: the first unused event of the
			// same type.
			for _, j := range byType[evType(w)] {
				if !used[j] {
					d.Got, d.Path = value.String(got[j]), m.diff(wd, gotIDs[j], "$")
					d.Leaves = m.leaves(wd, gotIDs[j])
					break
				}
			}
			diffs = append(diffs, d)
		}
	}
	for j, g := range got {
		if used[j] {
			continue
		}
		if t := evType(g); sortedParallel && (t == "ParallelStateSucceeded" || t == "ParallelStateFailed") {
			continue
		}
		diffs = append(diffs, Diff{Where: where + fmt.Sprintf(" (unexpected %s)", evType(g)), Want: "(no matching event)", Got: value.String(g), Unordered: true})
	}
	return diffs
}
