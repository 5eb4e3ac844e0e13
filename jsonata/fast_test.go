package jsonata

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

// TestFastForms: the shapes the fast form takes, and some it must leave
// to gnata.
func TestFastForms(t *testing.T) {
	for _, src := range []string{
		"$i < $states.input.n", "$i + 1", "$sum + $i",
		"{'n': $states.input.n, 'i': $i + 1, 'sq': $i * $i, 'tag': 'it-' & $string($i)}",
		"{'i': $i, 'sum': $sum}", "{}", "-$x * 2", "($a + $b) / 2 % 3", "1.5e3 >= $x and $y != null or false",
		`"double" & 'single'`, "$a.b.c = true", "$string( $x )", "0", "0.25", "1E-2",
	} {
		x := mustCompile(src)
		if x.fast == nil {
			t.Errorf("%s: no fast form", src)
		}
	}
	for _, src := range []string{
		"$x[0]", "$x.y[0]", `'a\nb'`, "$sum($x)", "$x ~> $f", "/* c */ 1", "$string()", "$string(1, true)",
		"{'a': 1, 'a': 2}", "$partition", "$x.and", "$x.`y`", "1..2", "$", "$$", "a", "$x.y.z()", "$x in [1]",
		"$x ? 1 : 2", "$x ?: 1", "$x ?? 1", "{'a': 1}.a", "($x; $y)", "$x{'a': 1}", "-", "1 +", "{'a' 1}", "{$x: 1}",
		"2 ** 3", "$x.1", "$x.true",
	} {
		x, err := compile(src)
		if err == nil && x.fast != nil {
			t.Errorf("%s: has a fast form", src)
		}
	}
}

// TestFastShadowed: a variable named string hides the function, and the
// fast form gives up; unbound variables and paths to nothing make it give
// up too, so that gnata reports them, and so does an object of the input
// in a new one (gnata's result is kept with its form).
func TestFastShadowed(t *testing.T) {
	vars := Map{"string": value.Int(1), "x": value.Int(2)}
	if _, ok := fastEval(mustCompile("$string($x)").fast, vars); ok {
		t.Error("$string($x) with a variable string: evaluated")
	}
	vars["o"] = value.ObjectOf("k", value.Int(1))
	for _, src := range []string{"$nothing", "$x.a", "$x + $nothing", "{'a': $nothing}", "{'a': $o}"} {
		if _, ok := fastEval(mustCompile(src).fast, vars); ok {
			t.Errorf("%s: evaluated", src)
		}
	}
}

// TestFastMatchesGnata compares the fast form with gnata on generated
// expressions (FuzzFast, for a fixed set of seeds).
func TestFastMatchesGnata(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	handled := 0
	for seed := range n {
		if checkFast(t, uint64(seed)) {
			handled++
		}
	}
	t.Logf("the fast form evaluated %d of %d expressions", handled, n)
	// Most generated expressions meet a value the fast form hands to
	// gnata (an array, an unbound variable...), but not all.
	if handled < n/10 {
		t.Fatalf("the fast form evaluated %d of %d expressions", handled, n)
	}
}

// FuzzFast compares the fast form's results with gnata's on expressions
// generated from the seed: where the fast form gives a result, gnata
// must give the very same (type, number text, key order).
func FuzzFast(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkFast(t, seed)
	})
}

// checkFast generates an expression and variables from seed, and checks
// the fast form against gnata; it reports whether the fast form gave a
// result.
func checkFast(t *testing.T, seed uint64) bool {
	t.Helper()
	g := &exprGen{r: mrand.New(mrand.NewPCG(seed, seed>>32|1))}
	src := g.expr(3)
	vars := g.vars()
	tp, err := ParseTemplate("{% " + src + " %}")
	if err != nil {
		return false // out of range literals and the like
	}
	if !tp.fast {
		t.Fatalf("%s: no fast form", src)
	}
	fv, ok := tp.evalFast(vars)
	slow := *tp
	slow.fast = false
	gv, gerr := slow.EvalWith(context.Background(), vars, Options{})
	if !ok {
		return false
	}
	if gerr != nil {
		t.Fatalf("%s with %v: fast %s, gnata fails: %v", src, vars, describe(fv), gerr)
	}
	if describe(fv) != describe(gv) {
		t.Fatalf("%s with %v: fast %s, gnata %s", src, vars, describe(fv), describe(gv))
	}
	// Through EvalWith, with slots as the interpreter keeps them.
	sv := newSlotVars()
	for k, v := range vars {
		sv.vals[k] = v
	}
	if v, err := tp.EvalWith(context.Background(), sv, Options{}); err != nil || describe(v) != describe(gv) {
		t.Fatalf("%s with %v: EvalWith %s, %v; gnata %s", src, vars, describe(v), err, describe(gv))
	}
	return true
}

// describe writes a value with its Go types, so that a number and a
// string of the same text differ.
func describe(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case *value.Object:
			b.WriteString("{")
			for k, e := range x.All {
				fmt.Fprintf(&b, "%q:", k)
				walk(e)
				b.WriteString(",")
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for _, e := range x {
				walk(e)
				b.WriteString(",")
			}
			b.WriteString("]")
		default:
			fmt.Fprintf(&b, "%T(%v)", v, v)
		}
	}
	walk(v)
	return b.String()
}

// exprGen generates expressions of the fast shapes and variables of all
// kinds for them.
type exprGen struct{ r *mrand.Rand }

func (g *exprGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

var (
	genNumbers = []string{"0", "1", "2", "3", "10", "2.5", "0.1", "0.2", "1e3", "1E2", "1e300", "1e-7", "0.000001",
		"100000000000000000000000", "9007199254740993", "123456789.125", "7"}
	genStrings = []string{"''", "'a'", `"b"`, "'it-'", "'10'", "'x y'", "'é'", `"ü€"`, "'0'"}
	genVars    = []string{"$a", "$b", "$c", "$d", "$o.n", "$o.s", "$o.o", "$o.o.k", "$o.z", "$o.a", "$u", "$states.input.n",
		"$string"}
	genOps = []string{"+", "-", "*", "/", "%", "&", "=", "!=", "<", "<=", ">", ">=", "and", "or"}
)

func (g *exprGen) expr(depth int) string {
	if depth > 0 && g.r.IntN(3) > 0 {
		switch g.r.IntN(9) {
		case 0:
			return "-" + g.expr(depth-1)
		case 1:
			return "(" + g.expr(depth-1) + ")"
		case 2:
			return "$string(" + g.expr(depth-1) + ")"
		case 3:
			n := g.r.IntN(4)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = fmt.Sprintf("'k%d': %s", i, g.expr(depth-1))
			}
			return "{" + strings.Join(parts, ", ") + "}"
		case 4:
			// The same operand on both sides: equal values.
			x := g.expr(depth - 1)
			return x + " " + g.pick(genOps) + " " + x
		}
		return g.expr(depth-1) + " " + g.pick(genOps) + " " + g.expr(depth-1)
	}
	switch g.r.IntN(4) {
	case 0:
		return g.pick(genNumbers)
	case 1:
		return g.pick(genStrings)
	case 2:
		return g.pick([]string{"true", "false", "null"})
	}
	return g.pick(genVars)
}

var genValues = []string{"0", "-0", "1", "-1", "1.50", "1e2", "2.5e-7", "123456789012345678901", "0.1", "9007199254740993",
	"1e400", "-7", "3", "3", "12", `""`, `"a"`, `"10"`, `"é"`, "true", "false", "null", "[1]", "[1,2]", `{}`, `{"k":2}`}

func (g *exprGen) vars() Map {
	m := Map{}
	for _, k := range []string{"a", "b", "c", "d"} {
		m[k] = mustValue(g.pick(genValues))
	}
	o := value.NewObject(5)
	o.Set("n", mustValue(g.pick(genValues)))
	o.Set("s", mustValue(g.pick(genValues)))
	in := value.NewObject(1)
	in.Set("k", mustValue(g.pick(genValues)))
	o.Set("o", in)
	o.Set("a", mustValue("[1,2]"))
	m["o"] = o
	states := value.NewObject(1)
	input := value.NewObject(1)
	input.Set("n", mustValue(g.pick(genValues)))
	states.Set("input", input)
	m["states"] = states
	if g.r.IntN(8) == 0 {
		m["string"] = mustValue(g.pick(genValues))
	}
	return m
}

func mustValue(s string) any {
	v, err := value.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}
