package jsonata

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stepd/stepd/value"
)

// $string and & as jsonata-js writes values (the official suite covers
// most; these are the cases it does not: input numbers, nesting, escapes,
// shadowing, & where gnata's tree puts it).
func TestStringify(t *testing.T) {
	t.Parallel()
	input := parse(t, `{"big":12345678901234567890,"one":1.0,"e":1e2,"tiny":1e-7,"o":{"z":[1,{"y":null}],"a":"q\"\\\n\u0001<&>\u2028"},"f":0.30000000000000004}`)
	tests := []struct{ expr, want string }{
		{`$string(one)`, `"1"`},
		{`one & ''`, `"1"`},
		{`$string(e)`, `"100"`},
		{`$string(tiny)`, `"1e-7"`},
		{`$string(big)`, `"12345678901234600000"`},
		{`$string(f)`, `"0.3"`},
		{`$string({"a": 0.1 + 0.2, "b": 1e21, "c": -0, "d": 0.000001})`, `"{\"a\":0.3,\"b\":1e+21,\"c\":0,\"d\":0.000001}"`},
		{`$string(o)`, `"{\"z\":[1,{\"y\":null}],\"a\":\"q\\\"\\\\\\n\\u0001<&>` + "\u2028" + `\"}"`},
		{`$string(o, true)`, `"{\n  \"z\": [\n    1,\n    {\n      \"y\": null\n    }\n  ],\n  \"a\": \"q\\\"\\\\\\n\\u0001<&>` + "\u2028" + `\"\n}"`},
		{`$string([[], {}], true)`, `"[\n  [],\n  {}\n]"`},
		{`o.z & "|" & $nope & o.z[1]`, `"[1,{\"y\":null}]|{\"y\":null}"`},
		{`$string({"f": function(){1}, "s": $sum, "u": $nope})`, `"{\"f\":\"\",\"s\":\"\"}"`},
		{`$string([1, $nope, 2])`, `"[1,2]"`},
		{`$string(o.z.y)`, `"null"`},
		{`($string := function($x){"mine"}; $string(1) & 1)`, `"mine1"`},
		{`($f := function($n, $s){ $n = 0 ? $s : $f($n - 1, $s & "x") }; $f(3, ""))`, `"xxx"`},
		{`o.z[$string($) & "" = "1"]`, `1`},
		{`$map([1, 2], $string)`, `["1","2"]`},
		{`1 & 2 & "3"`, `"123"`},
		{`o.z[1].$string()`, `"{\"y\":null}"`},
	}
	for _, tt := range tests {
		x, err := compile(tt.expr)
		if err != nil {
			t.Errorf("compile(%s): %v", tt.expr, err)
			continue
		}
		got, ok, err := x.Eval(context.Background(), input, nil)
		if err != nil {
			t.Errorf("Eval(%s): %v", tt.expr, err)
			continue
		}
		s := "undefined"
		if ok {
			s = value.String(got)
		}
		if s != tt.want {
			t.Errorf("Eval(%s) = %s\nwant %s", tt.expr, s, tt.want)
		}
	}
	for _, tt := range []struct{ expr, code string }{
		{`$string(1/0)`, "D3001"},
		{`$string({"a": 1/0})`, "D1001"},
		{`$string(1, 2)`, "T0410"},
		{`$string(1, true, 3)`, "T0410"},
	} {
		_, _, err := mustCompile(tt.expr).Eval(context.Background(), nil, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("Eval(%s) error %v, want %s", tt.expr, err, tt.code)
		}
	}
}

// deepObject is {"a":{"a":...1...}} nested depth levels.
func deepObject(t testing.TB, depth int) any {
	return parse(t, strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
}

// stopAfter is a context whose Err reports Canceled from its n-th call on.
type stopAfter struct {
	context.Context
	n, calls atomic.Int64
}

func (c *stopAfter) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// Serialising a value consults the evaluation's context as the output
// grows, so a deep or huge value can be interrupted: gnata's own $string
// and & asked it nothing between the call and the result (a 10,000-deep
// input held a core for 5 s).
func TestStringifyInterruptible(t *testing.T) {
	t.Parallel()
	deep := deepObject(t, 10_000)
	for _, src := range []string{`$string($)`, `$ & ""`, `"" & $`, `$string($, true)`} {
		x := mustCompile(src)
		// The calls a shallow input makes: the evaluation's own.
		shallow := &stopAfter{Context: context.Background()}
		shallow.n.Store(1 << 62)
		if _, _, err := x.Eval(shallow, parse(t, `{"a":1}`), nil); err != nil {
			t.Fatal(err)
		}
		ctx := &stopAfter{Context: context.Background()}
		ctx.n.Store(shallow.calls.Load() + 3)
		_, _, err := x.Eval(ctx, deep, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s over a 10,000-deep object: error %v after %d calls of Err (%d for a shallow one), want it interrupted",
				src, err, ctx.calls.Load(), shallow.calls.Load())
		}
	}
}

// Without interruption the deep value serialises, with the same text as
// the shallow rule gives.
func TestStringifyDeep(t *testing.T) {
	t.Parallel()
	const depth = 10_000
	want := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	got, _, err := mustCompile(`$string($) & $`).Eval(context.Background(), deepObject(t, depth), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != want+want {
		t.Errorf("$string of a deep object: %.60s… (%d bytes), want %d bytes", got, len(got.(string)), 2*len(want))
	}
}

func BenchmarkStringifyDeep(b *testing.B) {
	deep := deepObject(b, 10_000)
	x := mustCompile(`$string($)`)
	for b.Loop() {
		if _, _, err := x.Eval(context.Background(), deep, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzStringify checks that $string of any JSON value is JSON, compact and
// pretty alike.
func FuzzStringify(f *testing.F) {
	f.Add(`{"a":[1,2.5,{"b":null}],"c":"\u0001\"x"}`)
	f.Add(`[[[[]]],{}]`)
	f.Add(`1e400`)
	compact, pretty := mustCompile(`$string($)`), mustCompile(`$string($, true)`)
	f.Fuzz(func(t *testing.T, src string) {
		v, err := value.ParseString(src)
		if err != nil || v == nil { // nil: no input, for Eval
			return
		}
		for _, x := range []*expression{compact, pretty} {
			r, ok, err := x.Eval(context.Background(), v, nil)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Code != "D1001" && e.Code != "D3001" {
					t.Fatalf("%s of %s: %v", x.src, src, err)
				}
				continue
			}
			s, isString := r.(string)
			if !ok || !isString {
				t.Fatalf("%s of %s = %v", x.src, src, r)
			}
			if _, isString := v.(string); isString {
				continue
			}
			if _, err := value.ParseString(s); err != nil {
				t.Fatalf("%s of %s = %s: not JSON: %v", x.src, src, s, err)
			}
		}
	})
}

// BenchmarkConcatSmall is a typical field with &: the adapter binds its
// serialisers to each evaluation.
func BenchmarkConcatSmall(b *testing.B) {
	tp, err := ParseTemplate(`{% 'order-' & $x & '-' & $string($y) %}`)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"x": value.Int(41), "y": parse(b, `{"a":[1,2]}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.EvalWith(context.Background(), Map(vars), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
