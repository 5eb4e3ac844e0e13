package conformance

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// Outcome is what the engine produced for an execution case.
type Outcome struct {
	Status string
	Output any    // meaningful when Status is SUCCEEDED
	Error  string // empty when none
	Cause  string // the cause text, as the API returns it
	// History is the event list in GetExecutionHistory's shape: input,
	// output, parameters and assignedVariables values are JSON text, and
	// timestamps may be present (they are ignored). history.Values turns
	// []*history.Event into this form.
	History []any
	// Branches are the Choice rules, retriers and catchers taken, in
	// order (RunExecution records them; nil from other runners).
	Branches []interp.Branch
}

// Diff is one difference between expected and actual.
type Diff struct {
	// Where names what differs: "status", "output", "cause",
	// "event 5 (TaskScheduled)", "Map/Parallel segment, events 3-12" ...
	Where string
	// Path is the JSON path of the first differing member inside the
	// compared value ("$.taskScheduledEventDetails.parameters.Key"),
	// empty when the values are not JSON or differ as a whole.
	Path      string
	Want, Got string // JSON or plain text; "(none)" when absent
	// Unordered is set for differences found by a multiset comparison.
	Unordered bool
	// EventIndex is the 1-based position in the expected history (or in
	// the actual one when the expected history has no event there); 0
	// when the difference is not about one event.
	EventIndex int
	// Leaves are the differing values inside Want and Got at their JSON
	// paths (at most maxLeaves), when both are JSON values.
	Leaves []Leaf
}

// Leaf is one differing value inside two compared JSON values.
type Leaf struct {
	Path      string // "$.a.b[2]"
	Want, Got string // JSON text, shortened; Absent when the member or element is missing
}

// Absent stands for a member or element that one side does not have.
const Absent = "(absent)"

func (d Diff) String() string {
	where := d.Where
	if len(d.Leaves) > 0 {
		var b strings.Builder
		b.WriteString(where + ":")
		for _, l := range d.Leaves {
			b.WriteString("\n\t" + l.String())
		}
		return b.String()
	}
	if d.Path != "" && d.Path != "$" {
		where += " at " + d.Path
	}
	return fmt.Sprintf("%s:\n\twant %s\n\t got %s", where, d.Want, d.Got)
}

// String prints the leaf on one line: "$.a.b: want 1, got 2".
func (l Leaf) String() string {
	return fmt.Sprintf("%s: want %s, got %s", l.Path, l.Want, l.Got)
}

// matcher compares expected values (with placeholders) to actual ones.
type matcher struct {
	repl *strings.Replacer
	// bind records the value each <uuid:N> matched; nil while <uuid:N>
	// is a plain wildcard (inside unordered segments).
	bind map[string]string
}

func newMatcher(c *Case) *matcher {
	ph := make([][2]string, len(c.Placeholders))
	copy(ph, c.Placeholders)
	sort.SliceStable(ph, func(i, j int) bool { return len(ph[i][1]) > len(ph[j][1]) })
	var pairs []string
	for _, p := range ph {
		if p[1] != "" && p[1] != p[0] {
			pairs = append(pairs, p[1], p[0])
		}
	}
	pairs = append(pairs, "arn:aws:", "arn:<partition>:", ":us-east-1:", ":<region>:", ".us-east-1.", ".<region>.")
	return &matcher{repl: strings.NewReplacer(pairs...), bind: map[string]string{}}
}

var (
	wildcardRE = regexp.MustCompile(`<[^<>]*>`)
	uuidRE     = regexp.MustCompile(`^<uuid:[0-9]+>$`)
	regexCache sync.Map // expected string → *pattern
)

// pattern is an expected string with wildcards, compiled.
type pattern struct {
	re    *regexp.Regexp
	uuids []string // the <uuid:N> of each capture group, in order
}

func compile(want string) *pattern {
	if v, ok := regexCache.Load(want); ok {
		return v.(*pattern)
	}
	p := &pattern{}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	last := 0
	for _, loc := range wildcardRE.FindAllStringIndex(want, -1) {
		b.WriteString(regexp.QuoteMeta(want[last:loc[0]]))
		if w := want[loc[0]:loc[1]]; uuidRE.MatchString(w) {
			b.WriteString(`(.*?)`)
			p.uuids = append(p.uuids, w)
		} else {
			b.WriteString(`.*?`)
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(want[last:]) + `$`)
	p.re = regexp.MustCompile(b.String())
	regexCache.Store(want, p)
	return p
}

// isWildcard reports whether an expected string stands for any value.
func isWildcard(s string) bool {
	switch s {
	case "date", "datetime", "timestamp":
		return true
	}
	return len(s) > 2 && s[0] == '<' && s[len(s)-1] == '>' && !strings.ContainsAny(s[1:len(s)-1], "<>")
}

// bindUUID checks that a <uuid:N> placeholder stands for the same value
// everywhere and records it.
func (m *matcher) bindUUID(ph, got string) bool {
	if m.bind == nil {
		return true
	}
	if prev, ok := m.bind[ph]; ok {
		return prev == got
	}
	m.bind[ph] = got
	return true
}

// matchString compares an expected string (which may hold placeholders) to
// an actual one.
func (m *matcher) matchString(want, got string) bool {
	if uuidRE.MatchString(want) {
		return m.bindUUID(want, got)
	}
	if want == got || isWildcard(want) {
		return true
	}
	replaced := m.repl.Replace(got)
	if want == replaced {
		return true
	}
	if !strings.Contains(want, "<") {
		return false
	}
	// The recording may have kept a concrete value where the placeholder
	// could have been: try the engine's text as it is, then with
	// placeholders.
	p := compile(want)
	for _, s := range []string{got, replaced} {
		sub := p.re.FindStringSubmatch(s)
		if sub == nil {
			continue
		}
		saved := m.snapshot()
		ok := true
		for i, ph := range p.uuids {
			ok = ok && m.bindUUID(ph, sub[i+1])
		}
		if ok {
			return true
		}
		m.bind = saved
	}
	return false
}

// snapshot returns a copy of the <uuid:N> bindings.
func (m *matcher) snapshot() map[string]string {
	if m.bind == nil {
		return nil
	}
	c := make(map[string]string, len(m.bind))
	for k, v := range m.bind {
		c[k] = v
	}
	return c
}

// match compares JSON values: numbers by value, object members in any
// order, placeholders in expected strings.
func (m *matcher) match(want, got any) bool { return m.diff(want, got, "$") == "" }

// diff returns the JSON path of the first difference between want and
// got, or "" when they match.
func (m *matcher) diff(want, got any, path string) string {
	switch w := want.(type) {
	case string:
		if isWildcard(w) && !uuidRE.MatchString(w) {
			// A placeholder for a whole value matches any value.
			return ""
		}
		g, ok := got.(string)
		if !ok || !m.matchString(w, g) {
			return path
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path
		}
		for i := range min(len(w), len(g)) {
			if p := m.diff(w[i], g[i], path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
		if len(w) != len(g) {
			return path + "[" + strconv.Itoa(min(len(w), len(g))) + "]"
		}
		return ""
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok {
			return path
		}
		for k, wv := range w.All {
			gv, ok := g.Get(k)
			if !ok {
				return member(path, k)
			}
			if k == "SdkHttpMetadata" || k == "SdkResponseMetadata" {
				continue
			}
			if p := m.diff(wv, gv, member(path, k)); p != "" {
				return p
			}
		}
		if g.Len() != w.Len() {
			for _, k := range g.Keys() {
				if !w.Has(k) {
					return member(path, k)
				}
			}
		}
		return ""
	}
	if !value.Equal(want, got) {
		return path
	}
	return ""
}

// maxLeaves bounds the differing values reported per compared value, and
// maxLeafText the length of each value shown.
const (
	maxLeaves   = 10
	maxLeafText = 200
)

// leaves lists the differing values of want and got (at most maxLeaves),
// with the rules of diff, and restores the <uuid:N> bindings afterwards.
func (m *matcher) leaves(want, got any) []Leaf {
	saved := m.snapshot()
	defer func() { m.bind = saved }()
	var out []Leaf
	m.collect(want, got, "$", &out)
	return out
}

func leafText(v any) string {
	s := value.String(v)
	if len(s) > maxLeafText {
		s = s[:maxLeafText] + "…"
	}
	return s
}

func (m *matcher) collect(want, got any, path string, out *[]Leaf) {
	if len(*out) >= maxLeaves {
		return
	}
	add := func(p string, w, g string) {
		if len(*out) < maxLeaves {
			*out = append(*out, Leaf{Path: p, Want: w, Got: g})
		}
	}
	switch w := want.(type) {
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := range max(len(w), len(g)) {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(g):
				add(p, leafText(w[i]), Absent)
			case i >= len(w):
				add(p, Absent, leafText(g[i]))
			default:
				m.collect(w[i], g[i], p, out)
			}
		}
		return
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok {
			break
		}
		for k, wv := range w.All {
			gv, ok := g.Get(k)
			switch {
			case !ok:
				add(member(path, k), leafText(wv), Absent)
			case k == "SdkHttpMetadata" || k == "SdkResponseMetadata":
			default:
				m.collect(wv, gv, member(path, k), out)
			}
		}
		for k, gv := range g.All {
			if !w.Has(k) {
				add(member(path, k), Absent, leafText(gv))
			}
		}
		return
	}
	if m.diff(want, got, path) != "" {
		add(path, leafText(want), leafText(got))
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func member(path, key string) string {
	if identRE.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + value.String(key) + "]"
}

// matchCause compares an expected cause (a string, or the parsed value
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

// CompareOutcome compares status, output, error and cause. Only the
// members the case's expected object has are checked: a case without
// "status" accepts any status, one without "output" any output, and so on.
// The output is compared as a JSON value; a cause recorded as a JSON object
// is compared with the engine's cause text parsed.
func CompareOutcome(c *Case, got *Outcome) []Diff {
	m := newMatcher(c)
	var diffs []Diff
	if c.Status != "" && c.Status != got.Status {
		diffs = append(diffs, Diff{Where: "status", Want: c.Status, Got: got.Status})
	}
	if c.expects("output", c.Output) && (c.Status == "" || c.Status == "SUCCEEDED") {
		switch {
		case got.Status != "SUCCEEDED":
			if c.Status == "" {
				diffs = append(diffs, Diff{Where: "output", Want: value.String(c.Output), Got: "(none: the execution is " + got.Status + ")"})
			}
		default:
			if p := m.diff(c.Output, got.Output, "$"); p != "" {
				diffs = append(diffs, Diff{Where: "output", Path: p, Want: value.String(c.Output), Got: value.String(got.Output), Leaves: m.leaves(c.Output, got.Output)})
			}
		}
	}
	if c.Status != "SUCCEEDED" {
		we, _ := c.Error.(string)
		if c.Error != nil && !m.matchString(we, got.Error) {
			diffs = append(diffs, Diff{Where: "error", Want: we, Got: got.Error})
		}
		if c.Cause != nil && !m.matchCause(c.Cause, got.Cause) {
			d := Diff{Where: "cause", Want: showCause(c.Cause), Got: got.Cause}
			if _, isText := c.Cause.(string); !isText {
				if v, err := value.ParseString(got.Cause); err == nil {
					d.Leaves = m.leaves(c.Cause, v)
				}
			}
			diffs = append(diffs, d)
		}
	}
	return diffs
}

// expects reports whether the case's expected object has member key (v is
// its value, for cases built without an expected object).
func (c *Case) expects(key string, v any) bool {
	if c.Expected == nil {
		return v != nil
	}
	return c.Expected.Has(key)
}

func showCause(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return value.String(v)
}
