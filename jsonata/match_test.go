package jsonata

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`$match("xAbcab", /a(b)?/i)`, `[{"match":"Ab","index":1,"groups":["b"]},{"match":"ab","index":4,"groups":["b"]}]`},
		{`$match("xAbcab", /a(b)?/i, 1)`, `{"match":"Ab","index":1,"groups":["b"]}`},
		{`$match("ac", /a(b)?/)`, `{"match":"a","index":0,"groups":[""]}`},
		{`$match("😀é a", "a")`, `{"match":"a","index":4,"groups":[]}`}, // UTF-16 code units, as JavaScript counts
		{`$match("a\nb", /^b/m).index`, `2`},
		{`$match("a.b", ".").index`, `1`},
		{`$match("x", /a/)`, `undefined`},
		{`$match($nope, /a/)`, `undefined`},
		{`$match("aaa", /a/, 0)`, `undefined`},
		{`$map(["ab c", "de f"], $match(?, /^(\w*)\s/)).groups`, `["ab","de"]`},
		{`$match("abc", function($s){ {"match": "b", "start": 1, "end": 2, "groups": []} }).match`, `"b"`},
		{`($match := function($s, $p){"mine"}; $match("a", /a/))`, `"mine"`},
		{`$string($match("ab", /b/))`, `"{\"match\":\"b\",\"index\":1,\"groups\":[]}"`},
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
		{`$match(1, /a/)`, "T0410"},
		{`$match("a", 1)`, "T0410"},
		{`$match("a", /a/, "x")`, "T0410"},
		{`$match("a")`, "D3006"},
	} {
		_, _, err := mustCompile(tt.expr).Eval(context.Background(), nil, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("Eval(%s) error %v, want %s", tt.expr, err, tt.code)
		}
	}
}

// $match over a long string consults the evaluation's context as it goes
// (gnata's counted the characters before each match from the start:
// quadratic, without asking it anything).
func TestMatchInterruptible(t *testing.T) {
	t.Parallel()
	x := mustCompile(`$count($match($, /./))`)
	shallow := &stopAfter{Context: context.Background()}
	shallow.n.Store(1 << 62)
	if _, _, err := x.Eval(shallow, "ab", nil); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("ab", 16_384)
	ctx := &stopAfter{Context: context.Background()}
	ctx.n.Store(shallow.calls.Load() + 3)
	if _, _, err := x.Eval(ctx, long, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("$match of 32,768 characters: error %v after %d calls of Err (%d for two), want it interrupted", err, ctx.calls.Load(), shallow.calls.Load())
	}
	got, _, err := x.Eval(context.Background(), long, nil)
	if err != nil || value.String(got) != "32768" {
		t.Errorf("$count($match(32,768 characters, /./)) = %v, %v", got, err)
	}
}
