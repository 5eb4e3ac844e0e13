package intrinsic

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

// paths returns the path arguments of c and its nested calls, in order, as
// written: "$.a", "$$.Execution.Id", "$var.field", "$".
func paths(c *Call) []string {
	var out []string
	for _, a := range c.Args {
		switch a.Kind {
		case ArgPath:
			out = append(out, a.Path)
		case ArgCall:
			out = append(out, paths(a.Call)...)
		}
	}
	return out
}

func TestIsCall(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"States.Format('x')", true},
		{"  States.UUID()", true},
		{"States.", true},
		{"$.States.Format", false},
		{"$", false},
		{"$$.Execution.Id", false},
		{"$var", false},
		{"states.Format('x')", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsCall(tt.in); got != tt.want {
			t.Errorf("IsCall(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// describe renders a parsed call as a compact tree, for comparisons:
// literals as JSON, paths as path<...>, calls as Name(args).
func describe(c *Call) string {
	var b strings.Builder
	b.WriteString(c.Name)
	b.WriteByte('(')
	for i, a := range c.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch a.Kind {
		case ArgLiteral:
			b.WriteString(value.String(a.Value))
		case ArgPath:
			b.WriteString("path<" + a.Path + ">")
		case ArgCall:
			b.WriteString(describe(a.Call))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		in    string
		want  string
		paths []string
	}{
		{"States.UUID()", "States.UUID()", nil},
		{"States.Array()", "States.Array()", nil},
		{" States.Array ( ) ", "States.Array()", nil},
		{"States.Format('Hello {} from {}', $.name, $$.Execution.Id)",
			`States.Format("Hello {} from {}" path<$.name> path<$$.Execution.Id>)`,
			[]string{"$.name", "$$.Execution.Id"}},
		{"States.StringToJson(States.Format('{}', $.x))",
			`States.StringToJson(States.Format("{}" path<$.x>))`, []string{"$.x"}},
		{"States.Array(1, -2, 3.5, -0.25, 1e3, true, false, null)",
			`States.Array(1 -2 3.5 -0.25 1e3 true false null)`, nil},
		{"States.Array('it\\'s', '\\{\\}', 'a\\\\b', '')",
			`States.Array("it's" "{}" "a\\b" "")`, nil},
		{"States.Array($, $$, $var, $var.a[0].b, $.a['x y'], $.a[?(@.b > 1)])",
			`States.Array(path<$> path<$$> path<$var> path<$var.a[0].b> path<$.a['x y']> path<$.a[?(@.b > 1)]>)`,
			[]string{"$", "$$", "$var", "$var.a[0].b", "$.a['x y']", "$.a[?(@.b > 1)]"}},
		{"States.Array($.a,$.b)", `States.Array(path<$.a> path<$.b>)`, []string{"$.a", "$.b"}},
		{"States.Array($.abc.['def, ghi)'])", `States.Array(path<$.abc.['def, ghi)']>)`, []string{"$.abc.['def, ghi)']"}},
		{"States.StringSplit('Hello\nWorld', '\n')", `States.StringSplit("Hello\nWorld" "\n")`, nil},
		{"States.MathRandom(1, 10, $.seed)", `States.MathRandom(1 10 path<$.seed>)`, []string{"$.seed"}},
		{"States.Format('{}', States.ArrayGetItem(States.StringSplit($.a, '/'), $.i))",
			`States.Format("{}" States.ArrayGetItem(States.StringSplit(path<$.a> "/") path<$.i>))`,
			[]string{"$.a", "$.i"}},
	}
	for _, tt := range tests {
		c, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := describe(c); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if got := paths(c); !slices.Equal(got, tt.paths) {
			t.Errorf("paths(Parse(%q)) = %q, want %q", tt.in, got, tt.paths)
		}
		if got, want := c.String(), strings.TrimSpace(tt.in); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, want)
		}
	}
}

func TestParseNested(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat("States.Array(", n) + strings.Repeat(")", n)
	}
	if _, err := Parse(nest(maxDepth)); err != nil {
		t.Errorf("%d nested calls: %v", maxDepth, err)
	}
	if _, err := Parse(nest(maxDepth + 1)); err == nil || !strings.Contains(err.Error(), "nest more than") {
		t.Errorf("%d nested calls: got %v, want a nesting error", maxDepth+1, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{"", 0, "expected an intrinsic function name"},
		{"$.a", 0, "expected an intrinsic function name"},
		{"States.Nope(1)", 0, "unknown intrinsic function 'States.Nope'"},
		{"States.format('x')", 0, "unknown intrinsic function 'States.format'"},
		{"States.Format", 13, "expected '(' after States.Format"},
		{"States.Format('x'", 17, "missing ')'"},
		{"States.Format('x' 'y')", 18, "expected ',' or ')'"},
		{"States.Format('x)", 14, "unterminated string literal"},
		{"States.Format('x\\')", 14, "unterminated string literal"},
		{"States.Array(1,)", 15, "expected an argument"},
		{"States.Array(,1)", 13, "expected an argument"},
		{"States.Array(1", 14, "missing ')'"},
		{"States.Array(1.)", 13, "invalid number"},
		{"States.Array(-)", 13, "invalid number"},
		{"States.Array(01)", 13, "invalid number"},
		{"States.Array(truex)", 13, "expected an argument"},
		{"States.Array(nul)", 13, "expected an argument"},
		{"States.Array(\"x\")", 13, "expected an argument"},
		{"States.Array($.a[0)", 13, "unterminated path"},
		{"States.Array($.a])", 16, "unbalanced ']'"},
		{"States.Array() x", 15, "unexpected text after the call"},
		{"States.UUID(1)", 0, "States.UUID takes exactly 0 arguments, got 1"},
		{"States.Format()", 0, "States.Format takes at least 1 argument, got 0"},
		{"States.MathRandom(1)", 0, "States.MathRandom takes 2 to 3 arguments, got 1"},
		{"States.JsonMerge($.a, $.b)", 0, "States.JsonMerge takes exactly 3 arguments, got 2"},
		{"States.Array(States.UUID(1))", 13, "States.UUID takes exactly 0 arguments"},
		{"States.Array(States.Foo())", 13, "unknown intrinsic function 'States.Foo'"},
	}
	for _, tt := range tests {
		c, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SyntaxError", tt.in, c, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(se.Msg, tt.msg) || se.Text != tt.in {
			t.Errorf("Parse(%q): error at %d %q (text %q), want at %d containing %q", tt.in, se.Offset, se.Msg, se.Text, tt.offset, tt.msg)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q): Error() = %q lacks %q", tt.in, err.Error(), tt.msg)
		}
	}
}

func TestArity(t *testing.T) {
	want := map[string][2]int{
		"States.Format": {1, -1}, "States.StringToJson": {1, 1}, "States.JsonToString": {1, 1},
		"States.Array": {0, -1}, "States.ArrayPartition": {2, 2}, "States.ArrayContains": {2, 2},
		"States.ArrayRange": {3, 3}, "States.ArrayGetItem": {2, 2}, "States.ArrayLength": {1, 1},
		"States.ArrayUnique": {1, 1}, "States.Base64Encode": {1, 1}, "States.Base64Decode": {1, 1},
		"States.Hash": {2, 2}, "States.JsonMerge": {3, 3}, "States.MathRandom": {2, 3},
		"States.MathAdd": {2, 2}, "States.StringSplit": {2, 2}, "States.UUID": {0, 0},
	}
	names := slices.Sorted(maps.Keys(functions))
	if len(names) != len(want) {
		t.Errorf("%d functions, want %d", len(names), len(want))
	}
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			t.Errorf("unexpected function %s", name)
			continue
		}
		call := func(n int) string {
			return name + "(" + strings.TrimSuffix(strings.Repeat("null, ", n), ", ") + ")"
		}
		for n := 0; n <= 5; n++ {
			_, err := Parse(call(n))
			ok := n >= w[0] && (w[1] < 0 || n <= w[1])
			if ok != (err == nil) {
				t.Errorf("Parse(%s): err = %v, want accepted = %v", call(n), err, ok)
			}
		}
	}
}
