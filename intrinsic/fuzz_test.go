package intrinsic

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

// nullResolver resolves every path to a fixed value.
type nullResolver struct{ v any }

func (r nullResolver) Resolve(string) (any, error) { return r.v, nil }

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"States.Format('Hello {} from {}', $.name, $$.Execution.Id)",
		"States.StringToJson(States.Format('{}', $.x))",
		"States.Array(1, -2, 3.5, 1e3, true, false, null, 'a\\'b\\{\\}\\\\')",
		"States.Array($, $$, $var.a[0], $.a['x, y)'], $.a[?(@.b > 1)])",
		"States.ArrayRange(1, 9, 2)",
		"States.MathRandom(1, 10, 3)",
		"States.Hash('x', 'SHA-256')",
		"States.Base64Decode('RGF0YQ==')",
		"States.StringSplit('a,b', ',')",
		"States.JsonMerge($.a, $.b, false)",
		"States.UUID()",
		"States.Format('a\\nb')",
		"States.Array(States.Array(States.Array()))",
		"States.Nope(1)",
		"States.Array($.a[0)",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse(in)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T %v, want a *SyntaxError", in, err, err)
			}
			if se.Offset < 0 || se.Offset > len(in) || se.Text != in || se.Msg == "" {
				t.Fatalf("Parse(%q): bad error %+v", in, se)
			}
			return
		}
		if got, want := c.String(), strings.Trim(in, " \t\n\r"); got != want {
			t.Fatalf("Parse(%q).String() = %q, want %q", in, got, want)
		}
		c2, err := Parse(c.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q fails: %v", in, c.String(), err)
		}
		if describe(c) != describe(c2) || !slices.Equal(paths(c), paths(c2)) {
			t.Fatalf("Parse(%q) and Parse(String()) differ: %s / %s", in, describe(c), describe(c2))
		}
		for _, p := range paths(c) {
			if !strings.HasPrefix(p, "$") || !strings.Contains(in, p) {
				t.Fatalf("Parse(%q): bad path %q", in, p)
			}
		}
		// Evaluation may fail but must not panic, and failures of the
		// functions are *Error values.
		for _, v := range []any{nil, value.Int(2), "a,b", []any{value.Int(1)}, value.ObjectOf("k", "v")} {
			_, err := c.Eval(nullResolver{v})
			var ie *Error
			if err != nil && (!errors.As(err, &ie) || ie.Name != errorName || ie.Cause == "") {
				t.Fatalf("Eval(%q) with %s: %T %v, want an *Error", in, value.String(v), err, err)
			}
		}
	})
}
