package javahash

import (
	"slices"
	"testing"
)

// TestOrder checks orders AWS recorded: CSV columns ({"0","{}","True"} for
// the headers 0,True,{}; {"","H1"} for H1,"") and SQS's AllHttpHeaders.
func TestOrder(t *testing.T) {
	for _, c := range []struct{ keys, want []string }{
		{[]string{"0", "True", "{}"}, []string{"0", "{}", "True"}},
		{[]string{"H1", ""}, []string{"", "H1"}},
		{[]string{"connection", "Content-Length", "Content-Type", "Date", "x-amzn-RequestId"},
			[]string{"x-amzn-RequestId", "connection", "Content-Length", "Date", "Content-Type"}},
	} {
		var got []string
		for _, i := range Order(c.keys) {
			got = append(got, c.keys[i])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Order(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// TestHashCode checks Java's String.hashCode, a character beyond the BMP
// counted as its two UTF-16 units.
func TestHashCode(t *testing.T) {
	for s, want := range map[string]int32{"": 0, "a": 97, "Date": 2122702, "😀": 1772899} {
		if got := hashCode(s); got != want {
			t.Errorf("hashCode(%q) = %d, want %d", s, got, want)
		}
	}
}
