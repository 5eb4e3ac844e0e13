package histcase

import (
	"math/bits"
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/value"
)

// expectedOf is the case's expected object: the recorded status, output,
// error and cause, where a value the replay cannot reproduce (a random
// UUID, a time, an ARN of another account) is matched by a wildcard or
// the case's account, each noted.
func expectedOf(end *terminal, got *conformance.Outcome, scope arn.Scope, n *notes) *value.Object {
	e := value.NewObject(4)
	e.Set("status", end.status)
	rc := &reconciler{scope: scope, n: n}
	if end.status == "SUCCEEDED" {
		out := end.output
		if got.Status == "SUCCEEDED" {
			out = rc.value(end.output, got.Output, "output", "$")
		}
		e.Set("output", out)
		return e
	}
	if end.err != nil {
		e.Set("error", end.err)
	}
	if end.cause != nil {
		cause := end.cause
		if s, ok := cause.(string); ok && got.Status == end.status {
			cause = rc.str(s, got.Cause, "cause", "")
		}
		e.Set("cause", cause)
	}
	return e
}

// reconciler compares a recorded value with the replay's.
type reconciler struct {
	scope arn.Scope
	n     *notes
}

var (
	uuidText = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	timeText = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	wildText = regexp.MustCompile(`<[^<>]*>`)
	// eventIDText is how AWS's causes name a state's Entered event.
	eventIDText = regexp.MustCompile(`(event id #)\d+`)
)

// value returns the expected value for the recorded want where the replay
// got got.
func (rc *reconciler) value(want, got any, what, path string) any {
	if value.Equal(want, got) {
		return want
	}
	switch w := want.(type) {
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok {
			return want
		}
		out := value.NewObject(w.Len())
		for k, wv := range w.All {
			if gv, ok := g.Get(k); ok {
				wv = rc.value(wv, gv, what, memberPath(path, k))
			}
			out.Set(k, wv)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return want
		}
		out := make([]any, len(w))
		for i := range w {
			out[i] = rc.value(w[i], g[i], what, path+"["+itoa(i)+"]")
		}
		return out
	case string:
		if g, ok := got.(string); ok {
			return rc.str(w, g, what, path)
		}
	case value.Number:
		if _, ok := got.(value.Number); ok && rc.n.randomNumbers {
			rc.n.add("%s %s: %s in the recording, %s in the replay, which draws its own random number: the case expects any value there", what, path, string(w), value.String(got))
			return "<anything>"
		}
	}
	return want
}

// str returns the expected text for the recorded want where the replay
// got got.
func (rc *reconciler) str(want, got, what, path string) string {
	at := what
	if path != "" {
		at += " " + path
	}
	if want == got || wildText.MatchString(want) {
		return want // equal, or already a pattern (a recording's placeholder)
	}
	// The ways a replayed text may differ from the recorded one, tried
	// alone, then together: the fewest that explain the difference win.
	type change struct {
		apply func(string) string
		note  string
	}
	changes := []change{
		{func(s string) string { return eventIDText.ReplaceAllString(s, "${1}<event id>") },
			"names the id of a history event, and the replay records other events than AWS did before it (a mock records no TaskSubmitted for a .sync job, nor ActivityStarted for an activity): the case expects any id there"},
		{rc.caseScope, "holds an ARN the engine made in the recording's account or region: the case expects stepd test's (account " + caseAccount + ", region " + caseRegion + ")"},
		{func(s string) string {
			return timeText.ReplaceAllString(uuidText.ReplaceAllString(s, "<random-uuid>"), "<time>")
		}, "holds a UUID or a time the replay draws anew: the case expects any text there (<random-uuid>, <time>)"},
	}
	sets := make([]int, 0, 1<<len(changes)-1)
	for set := 1; set < 1<<len(changes); set++ {
		sets = append(sets, set)
	}
	slices.SortStableFunc(sets, func(a, b int) int { return bits.OnesCount(uint(a)) - bits.OnesCount(uint(b)) })
	for _, set := range sets {
		w, applied := want, []string(nil)
		for i, c := range changes {
			if set&(1<<i) == 0 {
				continue
			}
			next := c.apply(w)
			if next == w {
				applied = nil
				break
			}
			w, applied = next, append(applied, c.note)
		}
		if applied == nil || !patternOf(w).MatchString(got) {
			continue
		}
		for _, a := range applied {
			rc.n.add("%s %s", at, a)
		}
		return w
	}
	return want
}

// caseScope puts stepd test's account and region in the place of the
// recording's in the ARNs of s.
func (rc *reconciler) caseScope(s string) string {
	if a := rc.scope.Account; a != "" && a != caseAccount {
		s = strings.ReplaceAll(s, ":"+a+":", ":"+caseAccount+":")
	}
	if r := rc.scope.Region; r != "" && r != caseRegion {
		s = strings.ReplaceAll(s, ":"+r+":", ":"+caseRegion+":")
	}
	return s
}

// patternOf compiles an expected string whose <...> parts match any text.
func patternOf(s string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^`)
	last := 0
	for _, m := range wildText.FindAllStringIndex(s, -1) {
		b.WriteString(regexp.QuoteMeta(s[last:m[0]]))
		b.WriteString(`.*`)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(s[last:]))
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func memberPath(path, key string) string {
	if identRE.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + value.String(key) + "]"
}

func itoa(i int) string { return value.String(value.Int(int64(i))) }
