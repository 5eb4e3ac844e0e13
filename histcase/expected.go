package histcase

import (
	"regexp"
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
	w := want
	if a := rc.scope.Account; a != "" && a != caseAccount {
		w = strings.ReplaceAll(w, ":"+a+":", ":"+caseAccount+":")
	}
	if r := rc.scope.Region; r != "" && r != caseRegion {
		w = strings.ReplaceAll(w, ":"+r+":", ":"+caseRegion+":")
	}
	if w == got {
		rc.n.add("%s: an ARN of the recording's account and region; the case expects stepd test's (%s)", at, w)
		return w
	}
	drawn := uuidText.ReplaceAllString(w, "<random-uuid>")
	drawn = timeText.ReplaceAllString(drawn, "<time>")
	if drawn != w && patternOf(drawn).MatchString(got) {
		rc.n.add("%s: %q in the recording holds a UUID or a time the replay draws anew: the case expects %q", at, shorten(want), drawn)
		return drawn
	}
	return want
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

func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func memberPath(path, key string) string {
	if identRE.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + value.String(key) + "]"
}

func itoa(i int) string { return value.String(value.Int(int64(i))) }
