package conformance

import (
	"strings"

	"github.com/stepd/stepd/value"
)

// Format prints differences for people: for each, where it is, and
// the differing values at their JSON paths when they are known (Leaves),
// else a line diff of the two values pretty-printed ("-" expected, "+"
// actual, as in a unified diff) when both are JSON objects or arrays, or
// the two values on lines of their own.
func Format(diffs []Diff) string {
	var b strings.Builder
	for _, d := range diffs {
		b.WriteString(d.Where)
		if len(d.Leaves) > 0 {
			// The differing values at their paths, not both documents.
			b.WriteString(":\n")
			for _, l := range d.Leaves {
				b.WriteString("  " + l.String() + "\n")
			}
			continue
		}
		if d.Path != "" && d.Path != "$" {
			b.WriteString(" at " + d.Path)
		}
		b.WriteString(":\n")
		wv, wok := structured(d.Want)
		gv, gok := structured(d.Got)
		if !wok || !gok {
			b.WriteString("  want " + d.Want + "\n")
			b.WriteString("   got " + d.Got + "\n")
			continue
		}
		for _, l := range lineDiff(strings.Split(value.Indent(wv), "\n"), strings.Split(value.Indent(gv), "\n")) {
			b.WriteString("  " + l + "\n")
		}
	}
	return b.String()
}

// structured parses s when it is a JSON object or array.
func structured(s string) (any, bool) {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return nil, false
	}
	v, err := value.ParseString(s)
	return v, err == nil
}

// lineDiff returns the lines of a and b marked " " (both), "-" (only a)
// or "+" (only b), aligned on a longest common subsequence.
func lineDiff(a, b []string) []string {
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, "+ "+b[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return out
}
