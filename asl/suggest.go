package asl

import (
	"iter"
	"slices"
	"strings"
)

// nearest returns the candidate nearest to name in edit distance
// (ignoring case), when it is near enough to be a likely misspelling: at
// most one edit for short names, a third of the name's length for longer
// ones. Ties go to the alphabetically first candidate; "" when none is
// near.
func nearest(name string, candidates iter.Seq[string]) string {
	if len(name) > maxSuggested {
		return "" // no field is that long; and the distance costs its length
	}
	limit := max(1, len([]rune(name))/3)
	best, bestD := "", limit+1
	lower := strings.ToLower(name)
	for c := range candidates {
		if c == name {
			continue
		}
		d := distance(lower, strings.ToLower(c))
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

// Nearest returns the candidate nearest to name, when it is near enough
// to be a likely misspelling (see nearest); "" when none is.
func Nearest(name string, candidates []string) string {
	return nearest(name, slices.Values(candidates))
}

// maxSuggested bounds the length of a name nearest looks at.
const maxSuggested = 64

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
