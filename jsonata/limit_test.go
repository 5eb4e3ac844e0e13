package jsonata

import (
	"errors"
	"strings"
	"testing"
)

func TestNestingLimit(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, src := range []string{deep("(", ")", maxNesting), deep("[", "]", maxNesting), `"` + strings.Repeat("(", 5000) + `"`,
		`'` + strings.Repeat("[", 5000) + `'`, "/* " + strings.Repeat("{", 5000) + " */ 1", `"\"` + strings.Repeat("(", 300) + `"`} {
		if _, err := compile(src); err != nil {
			t.Errorf("compile(%.40q…): %v", src, err)
		}
	}
	for _, src := range []string{deep("(", ")", maxNesting+1), deep("[", "]", 100000), deep("{'a':", "}", maxNesting+1), deep("$f(", ")", 5000)} {
		_, err := compile(src)
		var e *Error
		if !errors.As(err, &e) || e.Code != "S0201" || !strings.Contains(e.Message, "nests more than") {
			t.Errorf("compile(%.40q…) = %v, want S0201 naming the nesting limit", src, err)
		}
	}
}

func FuzzNesting(f *testing.F) {
	f.Add(`(("a)")`)
	f.Add(`/* ( */ [1]`)
	f.Fuzz(func(t *testing.T, src string) {
		_ = checkNesting(src) // must not panic or loop
	})
}
