package jsonata

import (
	"context"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func parse(t testing.TB, s string) any {
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	vars := map[string]any{
		"states": parse(t, `{"input":{"items":[{"n":"a","p":2,"q":3},{"n":"b","p":1.5,"q":2}],"z":"x"}}`),
		"count":  value.Int(41),
	}
	tests := []struct{ tmpl, want string }{
		{`"{% $states.input.z %}"`, `"x"`},
		{`{"a":"{% $count + 1 %}","lit":[1,"two"],"nested":{"s":"{% $uppercase($states.input.z) %}"}}`, `{"a":42,"lit":[1,"two"],"nested":{"s":"X"}}`},
		{`"{% $states.input.items.{'n': n, 't': p * q} %}"`, `[{"n":"a","t":6},{"n":"b","t":3}]`},
		{`"{% $partition([1,2,3], 2) %}"`, `[[1,2],[3]]`},
		{`"{% $range(0, 10, 5) %}"`, `[0,5,10]`},
		{`"{% $hash('input data', 'MD5') %}"`, `"812f45842bc6d66ee14572ce20db8e86"`},
		{`"{% $parse('{\"b\":1,\"a\":[2]}') %}"`, `{"b":1,"a":[2]}`},
		{`"not an expression {% x %"`, `"not an expression {% x %"`},
		{`"{% {'z': 1, 'a': 2} %}"`, `{"z":1,"a":2}`},
		{`"{% 0.1 + 0.2 %}"`, `0.30000000000000004`},
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(parse(t, tt.tmpl))
		if err != nil {
			t.Errorf("ParseTemplate(%s): %v", tt.tmpl, err)
			continue
		}
		got, err := tp.Eval(context.Background(), vars)
		if err != nil {
			t.Errorf("Eval(%s): %v", tt.tmpl, err)
			continue
		}
		if s := value.String(got); s != tt.want {
			t.Errorf("Eval(%s) = %s, want %s", tt.tmpl, s, tt.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl, want string
		undefined  bool
		path       string
	}{
		{tmpl: `{"FunctionName":"{% $doesNotExist %}"}`, undefined: true, path: "FunctionName"},
		{tmpl: `"{% $nope() %}"`, want: "T1006"},
		{tmpl: `"{% $eval('1') %}"`, want: "T1006"},
		{tmpl: `{"a":[0,{"b":"{% 1 + 'x' %}"}]}`, want: "T200", path: "a/1/b"},
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(parse(t, tt.tmpl))
		if err != nil {
			t.Fatalf("ParseTemplate(%s): %v", tt.tmpl, err)
		}
		_, err = tp.Eval(context.Background(), nil)
		te, ok := err.(*TemplateError)
		if !ok {
			t.Errorf("Eval(%s) error = %v, want a TemplateError", tt.tmpl, err)
			continue
		}
		if te.Undefined != tt.undefined || te.Path != tt.path || !strings.Contains(te.Message(), tt.want) {
			t.Errorf("Eval(%s): undefined=%v path=%q message=%q", tt.tmpl, te.Undefined, te.Path, te.Message())
		}
	}
	if _, err := ParseTemplate(parse(t, `{"x":{"y":"{% 1 + %}"}}`)); err == nil || !strings.Contains(err.Error(), "x/y") {
		t.Errorf("syntax error should name its member: %v", err)
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{`"{% $states.input.a %}"`, `{"a":"{% $x + 1 %}","b":["{% $y %}"]}`, `"{% ( %}"`, `"{% $map([1,2], function($v){$v*2}) %}"`} {
		f.Add(s)
	}
	vars := map[string]any{"x": value.Int(1), "y": "s", "states": value.ObjectOf("input", value.ObjectOf("a", true))}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := value.ParseString(text)
		if err != nil {
			return
		}
		tp, err := ParseTemplate(v)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200_000_000)
		defer cancel()
		_, _ = tp.Eval(ctx, vars)
	})
}

func items(n int) any {
	arr := make([]any, n)
	for i := range arr {
		arr[i] = value.ObjectOf("name", "item", "price", value.Int(int64(i)), "qty", value.Int(3))
	}
	return value.ObjectOf("items", arr)
}

func BenchmarkTransform1000(b *testing.B) {
	tp, err := ParseTemplate(`{% $states.input.items.{"n": name, "t": price * qty} %}`)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"states": value.ObjectOf("input", items(1000))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Eval(context.Background(), vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSmallExpr(b *testing.B) {
	tp, err := ParseTemplate(`{% $x + 1 %}`)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"x": value.Int(41)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Eval(context.Background(), vars); err != nil {
			b.Fatal(err)
		}
	}
}
