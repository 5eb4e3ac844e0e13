package asl

import (
	"iter"
	"strings"
)

// Nearest returns the candidate nearest to name in edit distance
// (ignoring case), when it is near enough to be a likely misspelling: at
// most one edit for short names, a third of the name's length for longer
// ones. Ties go to the alphabetically first candidate; "" when none is
// near.
func Nearest(name string, candidates iter.Seq[string]) string {
	if len(name) > maxSuggested {
		return "" // no field or state name is that long; and the distance costs its length
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

// maxSuggested bounds the length of a name Nearest looks at: AWS's
// longest state name.
const maxSuggested = 80

// distance is the edit distance between a and b in runes, counting a
// swap of two neighbours as one edit (optimal string alignment), since
// "Strat" for "Start" is as likely a slip as one wrong letter.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1) // row i-2
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
