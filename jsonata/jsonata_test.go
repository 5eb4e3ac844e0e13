package jsonata

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/value"
)

// mustCompile is compile for expressions known to be valid; it panics on
// an error.
func mustCompile(src string) *expression {
	x, err := compile(src)
	if err != nil {
		panic(fmt.Sprintf("jsonata: %q: %v", src, err))
	}
	return x
}

// Eval evaluates the expression with the given input (the context value $)
// and variables (keyed by name without the $), all stepd values, in AWS's
// function environment, as a field does. A nil input is no input ($ is
// undefined). ok is false when the result is JSONata's undefined.
func (x *expression) Eval(ctx context.Context, input any, vars map[string]any) (result any, ok bool, err error) {
	return x.eval(ctx, input, input != nil, vars, true, Options{})
}

func parse(t testing.TB, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const testInput = `{"items":[{"n":"a","p":2,"q":3},{"n":"b","p":1.5,"q":2}],"z":"x","order":{"zeta":1,"alpha":2,"mid":3},
"big":12345678901234567890,"one":1.0,"nil":null,"json":"{\"b\":1,\"a\":[2,1.0,-0]}"}`

func TestEval(t *testing.T) {
	t.Parallel()
	input := parse(t, testInput)
	vars := map[string]any{"count": value.Int(41), "obj": parse(t, `{"y":1,"x":2}`)}
	tests := []struct {
		expr string
		want string // "undefined" for no result
	}{
		{`z`, `"x"`},
		{`$count + 1`, `42`},
		{`items.{"n": n, "t": p * q}`, `[{"n":"a","t":6},{"n":"b","t":3}]`},
		{`$sum(items.(p * q))`, `9`},
		{`0.1 + 0.2`, `0.30000000000000004`},
		{`1e21 * 10`, `1e+22`},
		{`10 / 4`, `2.5`},
		{`missing`, `undefined`},
		{`$nope`, `undefined`},
		{`nil`, `null`},
		{`[1, $nope, 2]`, `[1,2]`},
		{`{"a": $nope, "b": 1}`, `{"b":1}`},
		// key order of input objects, variables and constructed objects
		{`$keys(order)`, `["zeta","alpha","mid"]`},
		{`order`, `{"zeta":1,"alpha":2,"mid":3}`},
		{`$each(order, function($v, $k){$k})`, `["zeta","alpha","mid"]`},
		{`$keys($obj)`, `["y","x"]`},
		{`{"z": 1, "a": 2}`, `{"z":1,"a":2}`},
		{`$string(order)`, `"{\"zeta\":1,\"alpha\":2,\"mid\":3}"`},
		{`order ~> |$|{"alpha": 20}|`, `{"zeta":1,"alpha":20,"mid":3}`},
		// numbers no arithmetic touched keep their text
		{`big`, `12345678901234567890`},
		{`one`, `1.0`},
		{`one + 0`, `1`},
		{`big + 0`, `12345678901234567000`},
		// AWS's functions
		{`$partition([1,2,3,4,5], 2)`, `[[1,2],[3,4],[5]]`},
		{`$partition([1,2,3], 10)`, `[[1,2,3]]`},
		{`$partition([], 2)`, `[]`},
		{`$partition(order, 1)`, `[[{"zeta":1,"alpha":2,"mid":3}]]`},
		{`$partition([1,2,3], 2.9)`, `[[1,2],[3]]`},
		{`$partition($nope, 2)`, `undefined`},
		{`$range(0, 10, 2)`, `[0,2,4,6,8,10]`},
		{`$range(0, 10, 3)`, `[0,3,6,9]`},
		{`$range(10, 0, -5)`, `[10,5,0]`},
		{`$range(1, 9, 9)`, `1`},
		{`$range(5, 0, 1)`, `undefined`},
		{`$range(0.5, 3.7, 1.2)`, `[0,1,2,3]`},
		{`$hash('input data', 'MD5')`, `"812f45842bc6d66ee14572ce20db8e86"`},
		{`$hash('input data', 'SHA-1')`, `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{`$hash('', 'SHA-256')`, `"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`},
		{`$parse(json)`, `{"b":1,"a":[2,1,0]}`},
		{`$parse('"s"')`, `"s"`},
		{`$parse('null')`, `null`},
		{`$keys($parse('{"z":1,"a":2}'))`, `["z","a"]`},
		{`$random(42)`, `0.7275636800328681`},
		{`$random(0)`, `0.730967787376657`},
		{`$random(42.9)`, `0.7275636800328681`},
		{`$random(-7) = $random(-7)`, `true`},
		{`$random() >= 0 and $random() < 1`, `true`},
		{`$length($uuid())`, `36`},
		{`$uuid() != $uuid()`, `true`},
		// standard functions still there
		{`$uppercase(z)`, `"X"`},
		{`$map([1,2], function($v){$v * 2})`, `[2,4]`},
	}
	for _, tt := range tests {
		x, err := compile(tt.expr)
		if err != nil {
			t.Errorf("compile(%s): %v", tt.expr, err)
			continue
		}
		got, ok, err := x.Eval(context.Background(), input, vars)
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
}

func TestUUIDFormat(t *testing.T) {
	t.Parallel()
	x := mustCompile(`$uuid()`)
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 20 {
		v, _, err := x.Eval(context.Background(), nil, nil)
		if s, _ := v.(string); err != nil || !re.MatchString(s) {
			t.Fatalf("$uuid() = %v, %v; not a v4 UUID", v, err)
		}
	}
}

// TestInputIdentity checks that an object returned unchanged comes back as
// the caller's own value, not a copy.
func TestInputIdentity(t *testing.T) {
	t.Parallel()
	in := parse(t, testInput).(*value.Object)
	got, _, err := mustCompile(`$`).Eval(context.Background(), in, nil)
	if err != nil || got != any(in) {
		t.Errorf("$ returned %p (%v), want the input %p", got, err, in)
	}
	order, _ := in.Get("order")
	got, _, err = mustCompile(`$x.order`).Eval(context.Background(), nil, map[string]any{"x": in})
	if err != nil || got != order {
		t.Errorf("$x.order returned a copy (%v)", err)
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, code, msg string
	}{
		{`$nope()`, "T1006", "T1006: Attempted to invoke a non-function"},
		{`$eval('1 + 1')`, "T1006", "T1006: Attempted to invoke a non-function"},
		{`1 + 'x'`, "T2002", "T2002: The right side of the + operator must evaluate to a number"},
		{`'x' * 2`, "T2001", "T2001: The left side of the * operator must evaluate to a number"},
		{`null - 1`, "T2001", ""},
		{`$number('x')`, "D3030", ""},
		{`$partition('a')`, "T0410", ""},
		{`$partition([1], 'x')`, "T0410", ""},
		{`$partition([1], 0)`, "D3001", ""},
		{`$range(1, 2)`, "T0410", ""},
		{`$range(0, 1, 0)`, "D3001", ""},
		{`$range(0, 5000, 1)`, "D3001", ""},
		{`$hash(1, 'MD5')`, "T0410", ""},
		{`$hash('a', 'SHA-3')`, "D3001", ""},
		{`$random('x')`, "T0410", ""},
		{`$random(1, 2)`, "T0410", ""},
		{`$uuid(1)`, "T0410", ""},
		{`$parse(1)`, "T0410", ""},
		{`$parse('{')`, "D3001", ""},
		{`$error('boom')`, "D3137", "D3137: boom"},
	}
	for _, tt := range tests {
		x, err := compile(tt.expr)
		if err != nil {
			t.Errorf("compile(%s): %v", tt.expr, err)
			continue
		}
		_, _, err = x.Eval(context.Background(), nil, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("Eval(%s) error = %v, want code %s", tt.expr, err, tt.code)
			continue
		}
		if tt.msg != "" && err.Error() != tt.msg {
			t.Errorf("Eval(%s) error = %q, want %q", tt.expr, err, tt.msg)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, code, token string }{
		{`1 +`, "S0201", "EOF"},
		{`foo(`, "S0203", "EOF"},
		{`"abc`, "S0101", ""},
		{`$x.[`, "S0202", "EOF"},
		{`{`, "", ""}, // some code; gnata's choice
	}
	for _, tt := range tests {
		_, err := compile(tt.expr)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("compile(%s) error = %v, want an *Error", tt.expr, err)
			continue
		}
		if tt.code == "" {
			if !isCode(e.Code) {
				t.Errorf("compile(%s) error %v has no code", tt.expr, err)
			}
			continue
		}
		if e.Code != tt.code || e.Token != tt.token {
			t.Errorf("compile(%s) = code %q token %q (%v), want %q %q", tt.expr, e.Code, e.Token, err, tt.code, tt.token)
		}
	}
}

func TestUnsupportedResult(t *testing.T) {
	t.Parallel()
	tp, err := ParseTemplate(`{% function($x){$x} %}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tp.EvalWith(context.Background(), nil, Options{})
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v, want a TemplateError", err)
	}
	want := "The JSONata expression 'function($x){$x}' specified for the field 'Output' returned an unsupported result type."
	if got := te.Cause("Output"); got != want {
		t.Errorf("Cause = %q, want %q", got, want)
	}
}

// TestContextCancel: a runaway evaluation stops when its context ends,
// with the context's error. (The wait's deadline only bounds a failure,
// an evaluation that does not look at its context.)
func TestContextCancel(t *testing.T) {
	t.Parallel()
	x := mustCompile(`($f := function($n){$n > 1e12 ? $n : $f($n + 1)}; $f(0))`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := x.Eval(ctx, nil, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a runaway expression whose context ended: %v, want the context's error", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a runaway expression went on after its context ended")
	}
}

// TestConcurrent evaluates one compiled template from many goroutines (run
// with -race).
func TestConcurrent(t *testing.T) {
	t.Parallel()
	tp, err := ParseTemplate(parse(t, `{"k":"{% $keys($states.input.order) %}","s":"{% $sum($states.input.items.p) + $i %}"}`))
	if err != nil {
		t.Fatal(err)
	}
	states := value.ObjectOf("input", parse(t, testInput))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				v, err := tp.EvalWith(context.Background(), Map{"states": states, "i": value.Int(int64(g*100 + i))}, Options{})
				if err != nil {
					errs <- err
					return
				}
				want := fmt.Sprintf(`{"k":["zeta","alpha","mid"],"s":%v}`, value.Float(3.5+float64(g*100+i)))
				if s := value.String(v); s != want {
					errs <- fmt.Errorf("got %s, want %s", s, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestIsExpression(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want bool
	}{
		{"{% $x %}", true},
		{"{%$x%}", true},
		{"{%%}", true},
		{" {% $x %}", false},
		{"{% $x %} ", false},
		{"{% $x", false},
		{"$x %}", false},
		{"{%}", false},
		{"plain", false},
	}
	for _, tt := range tests {
		if got := isExpression(tt.s); got != tt.want {
			t.Errorf("isExpression(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
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
		{`["{% $count %}", 2, {"x": "{% null %}"}]`, `[41,2,{"x":null}]`},
		{`"{% $states.input.items.{'n': n, 't': p * q} %}"`, `[{"n":"a","t":6},{"n":"b","t":3}]`},
		{`"not an expression {% x %"`, `"not an expression {% x %"`},
		{`" {% $count %}"`, `" {% $count %}"`},
		{`{"plain":{"deep":[true,null,1.50]}}`, `{"plain":{"deep":[true,null,1.50]}}`},
		{`"{% {'z': 1, 'a': 2} %}"`, `{"z":1,"a":2}`},
		{`"{%$count%}"`, `41`},
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(parse(t, tt.tmpl))
		if err != nil {
			t.Errorf("ParseTemplate(%s): %v", tt.tmpl, err)
			continue
		}
		got, err := tp.EvalWith(context.Background(), Map(vars), Options{})
		if err != nil {
			t.Errorf("Eval(%s): %v", tt.tmpl, err)
			continue
		}
		if s := value.String(got); s != tt.want {
			t.Errorf("Eval(%s) = %s, want %s", tt.tmpl, s, tt.want)
		}
	}
}

func TestTemplateLiteralShared(t *testing.T) {
	t.Parallel()
	lit := parse(t, `{"a":[1,{"b":"c"}]}`)
	tp, err := ParseTemplate(lit)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.EvalWith(context.Background(), nil, Options{})
	if err != nil || got != lit {
		t.Errorf("a template without expressions should evaluate to itself: %v", err)
	}
	if n := len(tp.Expressions()); n != 0 {
		t.Errorf("Expressions() has %d items, want 0", n)
	}
	tp, _ = ParseTemplate(parse(t, `{"a":"{% 1 %}","b":["{% 2 %}",{"c":"{%3%}"}]}`))
	if got := strings.Join(tp.Expressions(), ","); got != "1,2,3" {
		t.Errorf("Expressions() = %s, want 1,2,3", got)
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl, field, cause string
	}{
		{`{"FunctionName":"{% $doesNotExist %}"}`, "Arguments",
			"The JSONata expression '$doesNotExist' specified for the field 'Arguments/FunctionName' returned nothing (undefined)."},
		{`"{% $doesNotExist %}"`, "Output",
			"The JSONata expression '$doesNotExist' specified for the field 'Output' returned nothing (undefined)."},
		{`{"FunctionResult":"{% $randomSeeded($states.input.FunctionInput.fst) %}"}`, "Output",
			"The JSONata expression '$randomSeeded($states.input.FunctionInput.fst)' specified for the field 'Output/FunctionResult' threw an error during evaluation. T1006: Attempted to invoke a non-function"},
		{`"{% $eval('1') %}"`, "Output",
			"The JSONata expression '$eval('1')' specified for the field 'Output' threw an error during evaluation. T1006: Attempted to invoke a non-function"},
		{`{"a":[0,{"b":"{% 1 + 'x' %}"}]}`, "Assign",
			"The JSONata expression '1 + 'x'' specified for the field 'Assign/a/1/b' threw an error during evaluation. T2002: The right side of the + operator must evaluate to a number"},
	}
	vars := map[string]any{"states": parse(t, `{"input":{"FunctionInput":"fst"}}`)}
	for _, tt := range tests {
		tp, err := ParseTemplate(parse(t, tt.tmpl))
		if err != nil {
			t.Fatalf("ParseTemplate(%s): %v", tt.tmpl, err)
		}
		_, err = tp.EvalWith(context.Background(), Map(vars), Options{})
		var te *TemplateError
		if !errors.As(err, &te) {
			t.Errorf("Eval(%s) error = %v, want a TemplateError", tt.tmpl, err)
			continue
		}
		if got := te.Cause(tt.field); got != tt.cause {
			t.Errorf("Eval(%s) cause\n got %q\nwant %q", tt.tmpl, got, tt.cause)
		}
	}
	_, err := ParseTemplate(parse(t, `{"x":{"y":"{% 1 + %}"}}`))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Path != "x/y" || se.Expr != "1 +" {
		t.Errorf("syntax error should name its member and expression: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != "S0201" {
		t.Errorf("syntax error should carry code S0201: %v", err)
	}
}

func TestTypeCause(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		want string
	}{
		{"string", `Expected 'array', but was 'string' for value: "string"`},
		{nil, `Expected 'array', but was 'null' for value: null`},
		{true, `Expected 'array', but was 'boolean' for value: true`},
		{value.Int(1), `Expected 'array', but was 'number' for value: 1`},
		{value.ObjectOf("a", value.Int(1)), `Expected 'array', but was 'object' for value: {"a":1}`},
	}
	for _, tt := range tests {
		got := TypeCause("$ItemsVar", "Items", "array", tt.v)
		want := "The JSONata expression '$ItemsVar' specified for the field 'Items' returned an unexpected result type. " + tt.want
		if got != want {
			t.Errorf("TypeCause(%v)\n got %q\nwant %q", tt.v, got, want)
		}
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		`"{% $states.input.a %}"`, `{"a":"{% $x + 1 %}","b":["{% $y %}"]}`, `"{% ( %}"`,
		`"{% $map([1,2], function($v){$v*2}) %}"`, `"{% $partition($states.input, 1) %}"`,
		`"{% $range(1, $x, 1) %}"`, `"{% $parse($y) %}"`, `"{% $keys($states) ~> $sort() %}"`,
	} {
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
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _ = tp.EvalWith(ctx, Map(vars), Options{})
	})
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{`a.b[0]`, `$x + 1`, `(`, `{"a": [1..3]}`, `$$.%`, `/re/i`, `$hash('a', 'MD5')`, `"\u`} {
		f.Add(s)
	}
	input := value.ObjectOf("a", value.ObjectOf("b", []any{value.Int(1)}))
	f.Fuzz(func(t *testing.T, src string) {
		x, err := compile(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("compile(%q) error %T is not an *Error", src, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _, _ = x.Eval(ctx, input, map[string]any{"x": value.Int(1)})
	})
}

func items(n int) any {
	arr := make([]any, n)
	for i := range arr {
		arr[i] = value.ObjectOf("name", fmt.Sprintf("item%d", i), "price", value.Float(float64(i)+0.5), "qty", value.Int(3))
	}
	return value.ObjectOf("items", arr)
}

// BenchmarkTransform1000 maps a 1000-item input, the input bound as
// $states as Step Functions binds it.
func BenchmarkTransform1000(b *testing.B) {
	tp, err := ParseTemplate(`{% $states.input.items.{"n": name, "t": price * qty} %}`)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"states": value.ObjectOf("input", items(1000))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.EvalWith(context.Background(), Map(vars), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSmallExpr is a typical small field, with a large $states bound
// that the expression does not use.
func BenchmarkSmallExpr(b *testing.B) {
	tp, err := ParseTemplate(`{% $x + 1 %}`)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"x": value.Int(41), "states": value.ObjectOf("input", items(1000))}
	for k, v := range workflowVars(20) {
		vars[k] = v
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.EvalWith(context.Background(), Map(vars), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvert compares building gnata's values directly with the
// public route (encode to JSON, gnata.DecodeJSON) for the 1000-item input.
func BenchmarkConvert(b *testing.B) {
	in := items(1000)
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c converter
			_ = c.toGnata(in)
		}
	})
	b.Run("decodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = mustDecode(value.String(in))
		}
	})
}

// workflowVars returns n small workflow variables.
func workflowVars(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("var%d", i)] = value.ObjectOf("id", value.Int(int64(i)), "name", "v")
	}
	return m
}

// TestRandomSource checks that $random() and $uuid() draw from the source
// given in Options: the same source state gives the same values, another
// state other values.
func TestRandomSource(t *testing.T) {
	t.Parallel()
	tpl, err := ParseTemplate(`{% [$random(), $uuid(), $random()] %}`)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(src Rand) string {
		t.Helper()
		v, err := tpl.EvalWith(context.Background(), nil, Options{Rand: src})
		if err != nil {
			t.Fatal(err)
		}
		return value.String(v)
	}
	a := eval(mrand.NewPCG(3, 4))
	if b := eval(mrand.NewPCG(3, 4)); a != b {
		t.Errorf("the same source gave %s then %s", a, b)
	}
	if b := eval(mrand.NewPCG(5, 6)); a == b {
		t.Errorf("different sources both gave %s", a)
	}
	if x, y := eval(nil), eval(nil); x != y {
		t.Errorf("without a source: %s then %s, want the fixed-seed values", x, y)
	}
}
