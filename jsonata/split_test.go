package jsonata

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`$split("a,b,,c", ",")`, `["a","b","","c"]`},
		{`$split("a,b,,c", ",", 2)`, `["a","b"]`},
		{`$split("a,b", ",", 0)`, `[]`},
		{`$split("a,b", ",", 9)`, `["a","b"]`},
		{`$split("aé😀", "")`, `["a","é","😀"]`},
		{`$split("", "")`, `[]`},
		{`$split("", ",")`, `[""]`},
		{`$split("abc", "abc")`, `["",""]`},
		{`$split("a1b22c", /\d+/)`, `["a","b","c"]`}, // gnata's, for a regular expression
		{`$split($nope, ",")`, `undefined`},
		{`"a b" ~> $split(" ")`, `["a","b"]`},
		{`($split := function($s, $p){"mine"}; $split("a", ","))`, `"mine"`},
	}
	for _, tt := range tests {
		got, ok, err := mustCompile(tt.expr).Eval(context.Background(), nil, nil)
		if err != nil {
			t.Errorf("Eval(%s): %v", tt.expr, err)
			continue
		}
		s := "undefined"
		if ok {
			s = value.String(got)
		}
		if s != tt.want {
			t.Errorf("Eval(%s) = %s, want %s", tt.expr, s, tt.want)
		}
	}
	for _, tt := range []struct{ expr, code string }{
		{`$split(1, ",")`, "T0410"},
		{`$split("a", ",", -1)`, "D3020"},
		{`$split("a", ",", "x")`, "T0410"},
	} {
		_, _, err := mustCompile(tt.expr).Eval(context.Background(), nil, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("Eval(%s) error %v, want %s", tt.expr, err, tt.code)
		}
	}
}

// $split of a long string consults the evaluation's context as it makes
// the parts (gnata's made them all in one call).
func TestSplitInterruptible(t *testing.T) {
	t.Parallel()
	x := mustCompile(`$count($split($, ""))`)
	shallow := &stopAfter{Context: context.Background()}
	shallow.n.Store(1 << 62)
	if _, _, err := x.Eval(shallow, "ab", nil); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("ab", 16_384)
	ctx := &stopAfter{Context: context.Background()}
	ctx.n.Store(shallow.calls.Load() + 3)
	if _, _, err := x.Eval(ctx, long, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("$split of 32,768 characters: error %v after %d calls of Err (%d for two), want it interrupted", err, ctx.calls.Load(), shallow.calls.Load())
	}
}
