package jsonata

import (
	"context"
	"slices"
	"testing"

	"github.com/stepd/stepd/value"
)

// slotVars is a Vars that keeps a slot per variable, as interp does, and
// never clears one: each slot must notice by itself that it is stale.
type slotVars struct {
	vals  map[string]any
	slots map[string]*Slot
}

func newSlotVars() *slotVars {
	return &slotVars{vals: map[string]any{}, slots: map[string]*Slot{}}
}

func (v *slotVars) Var(name string) (any, *Slot, bool) {
	x, ok := v.vals[name]
	if !ok {
		return nil, nil, false
	}
	s := v.slots[name]
	if s == nil {
		s = &Slot{ByMember: name == "states"}
		v.slots[name] = s
	}
	return x, s, true
}

func evalText(t *testing.T, src string, vars Vars) string {
	t.Helper()
	tp, err := ParseTemplate("{% " + src + " %}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tp.EvalWith(context.Background(), vars, Options{})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return value.String(got)
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSlotReassigned: a variable given a new value (object, array or
// scalar) is read with that value although its slot holds the old one's
// form.
func TestSlotReassigned(t *testing.T) {
	vars := newSlotVars()
	for i, c := range []struct{ val, want string }{
		{`{"a":1}`, `1`},
		{`{"a":2}`, `2`}, // a new object with other contents
		{`[{"a":3}]`, `3`},
		{`[{"a":4}]`, `4`}, // a new array
		{`{"a":"s"}`, `"s"`},
	} {
		vars.vals["x"] = mustParse(t, c.val)
		if got := evalText(t, "$x.a", vars); got != c.want {
			t.Fatalf("step %d: $x.a = %s, want %s", i, got, c.want)
		}
	}
	for i, n := range []string{"1", "2", "2.5", "-7"} {
		vars.vals["n"] = value.Number(n)
		if got := evalText(t, "$n * 2", vars); got != value.String(value.Float(2*value.Number(n).Float64())) {
			t.Fatalf("step %d: $n * 2 = %s for $n = %s", i, got, n)
		}
	}
	// The same array grown in place (a longer slice over the same
	// backing array) is another value.
	arr := make([]any, 1, 4)
	arr[0] = value.Int(1)
	vars.vals["arr"] = arr
	if got := evalText(t, "$count($arr)", vars); got != "1" {
		t.Fatalf("$count($arr) = %s, want 1", got)
	}
	vars.vals["arr"] = append(arr, value.Int(2))
	if got := evalText(t, "$count($arr)", vars); got != "2" {
		t.Fatalf("$count($arr) = %s after append, want 2", got)
	}
}

// TestSlotMutated: an object changed by Set after its form was cached, at
// the top or deep inside (even inside an array), is read as changed.
func TestSlotMutated(t *testing.T) {
	vars := newSlotVars()
	o := mustParse(t, `{"a":1,"in":{"b":1},"list":[{"c":1}]}`).(*value.Object)
	vars.vals["x"] = o
	if got := evalText(t, "[$x.a, $x.in.b, $x.list[0].c]", vars); got != "[1,1,1]" {
		t.Fatalf("got %s", got)
	}
	o.Set("a", value.Int(2))
	if got := evalText(t, "$x.a", vars); got != "2" {
		t.Fatalf("after Set on the object: $x.a = %s, want 2", got)
	}
	in, _ := o.Get("in")
	in.(*value.Object).Set("b", value.Int(3))
	if got := evalText(t, "$x.in.b", vars); got != "3" {
		t.Fatalf("after Set on a member object: $x.in.b = %s, want 3", got)
	}
	list, _ := o.Get("list")
	list.([]any)[0].(*value.Object).Set("c", value.Int(4))
	if got := evalText(t, "$x.list[0].c", vars); got != "4" {
		t.Fatalf("after Set on an object in an array: $x.list[0].c = %s, want 4", got)
	}
	o.Set("new", "n")
	if got := evalText(t, "$keys($x)", vars); got != `["a","in","list","new"]` {
		t.Fatalf("after a new member: $keys($x) = %s", got)
	}
}

// TestSlotByMember: $states, a new object around members that may or may
// not be the last ones, is read with its current members.
func TestSlotByMember(t *testing.T) {
	vars := newSlotVars()
	in1 := mustParse(t, `{"n":1}`)
	in2 := mustParse(t, `{"n":2}`)
	for i, c := range []struct {
		states *value.Object
		src    string
		want   string
	}{
		{value.ObjectOf("input", in1), "$states.input.n", "1"},
		{value.ObjectOf("input", in1), "$states.input.n", "1"},                        // same member
		{value.ObjectOf("input", in2), "$states.input.n", "2"},                        // another input
		{value.ObjectOf("input", in2, "result", value.Int(5)), "$states.result", "5"}, // a member more
		{value.ObjectOf("input", in2), "$exists($states.result)", "false"},            // and gone again
		{value.ObjectOf("input", in1, "result", value.Int(6)), "$states.input.n + $states.result", "7"},
		{value.ObjectOf("result", value.Int(6), "input", in1), "$keys($states)", `["result","input"]`}, // order
	} {
		vars.vals["states"] = c.states
		if got := evalText(t, c.src, vars); got != c.want {
			t.Fatalf("step %d: %s = %s, want %s", i, c.src, got, c.want)
		}
	}
	// A member changed in place is seen.
	in1.(*value.Object).Set("n", value.Int(9))
	vars.vals["states"] = value.ObjectOf("input", in1)
	if got := evalText(t, "$states.input.n", vars); got != "9" {
		t.Fatalf("after Set on the input: %s, want 9", got)
	}
}

// TestSlotPassThrough: an object read from a cached variable and returned
// unchanged is the very object, also on later evaluations and for a
// member object.
func TestSlotPassThrough(t *testing.T) {
	vars := newSlotVars()
	o := mustParse(t, `{"a":{"b":1.50}}`).(*value.Object)
	inner, _ := o.Get("a")
	vars.vals["x"] = o
	for i := range 3 {
		for _, c := range []struct {
			src  string
			want any
		}{{"$x", o}, {"$x.a", inner}} {
			tp, err := ParseTemplate("{% " + c.src + " %}")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tp.EvalWith(context.Background(), vars, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("round %d: %s returned a copy", i, c.src)
			}
		}
	}
}

func TestVarNames(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"$i + 1", []string{"i"}},
		{"$states.input.n > $i_2 and $x[0]", []string{"states", "i_2", "x"}},
		{"$string($i) & $i", []string{"string", "i"}},
		{"$a$b", []string{"a$b", "b"}},
		{"$", nil},
		{"$x\x00$y", []string{"x", "y"}},
		{"$partition($x, 2) ~> $uuid()", []string{"x"}},
		{"$élan+1", []string{"élan"}},
	} {
		if got := varNames(c.src); !slices.Equal(got, c.want) {
			t.Errorf("varNames(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// TestManyVariables: a template asks for the names it mentions only, not
// for every variable in scope.
func TestManyVariables(t *testing.T) {
	vars := &countingVars{slotVars: newSlotVars()}
	for i := range 1000 {
		vars.vals[string(rune('a'+i%26))+value.String(value.Int(int64(i)))] = value.Int(int64(i))
	}
	vars.vals["x"] = value.Int(41)
	if got := evalText(t, "$x + 1", vars); got != "42" {
		t.Fatalf("got %s", got)
	}
	if vars.asked != 1 {
		t.Fatalf("asked for %d variables, want 1", vars.asked)
	}
}

type countingVars struct {
	*slotVars
	asked int
}

func (v *countingVars) Var(name string) (any, *Slot, bool) {
	v.asked++
	return v.slotVars.Var(name)
}

// keeperVars is a slotVars that keeps the last object result (Keeper).
type keeperVars struct {
	*slotVars
	recent Slot
}

func (v *keeperVars) Recent() *Slot { return &v.recent }

// TestKeeper: an object an expression returned is kept with its form, in
// which computed numbers are text; read back as a variable, it is read as
// converting it would read it, also once changed by Set.
func TestKeeper(t *testing.T) {
	vars := &keeperVars{slotVars: newSlotVars()}
	vars.vals["n"] = value.Int(3)
	for i, c := range []struct{ make, read, want string }{
		{"{'a': $n + 0.5, 'b': [1.5 * 2, 'x', null, {'c': 0.1 + 0.2}], 'd': true}",
			"[$x.a, $x.b, $string($x.b[3].c), $keys($x)]",
			`[3.5,3,"x",null,{"c":0.30000000000000004},"0.3","a","b","d"]`},
		{"{'a': $n, 'u': $nothing}", "$keys($x)", `"a"`},
		{"{'s': [1,2,3].($ * $n)}", "$x.s", `[3,6,9]`},
		// Not a fast form (fast.go), which keeps nothing.
		{"{'big': 1e300 * 10, 'neg': -$number('0.0')}", "$string($x)", `"{\"big\":1e+301,\"neg\":0}"`},
	} {
		tp, err := ParseTemplate("{% " + c.make + " %}")
		if err != nil {
			t.Fatal(err)
		}
		got, err := tp.EvalWith(context.Background(), vars, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if vars.recent.src != got {
			t.Fatalf("case %d: the result's form was not kept", i)
		}
		if hasComputed(vars.recent.conv) {
			t.Fatalf("case %d: the kept form holds a computed number", i)
		}
		vars.vals["x"] = got
		want := evalText(t, c.read, Map{"x": mustParse(t, value.String(got))})
		if r := evalText(t, c.read, vars); r != want || want != c.want {
			t.Fatalf("case %d: %s over the result = %s, over its copy %s, want %s", i, c.read, r, want, c.want)
		}
	}
	// The kept form goes stale with a Set on the result.
	tp, _ := ParseTemplate("{% {'a': $n * 2} %}")
	got, _ := tp.EvalWith(context.Background(), vars, Options{})
	vars.vals["x"] = got
	got.(*value.Object).Set("a", value.Int(7))
	if r := evalText(t, "$x.a", vars); r != "7" {
		t.Fatalf("after Set on a kept result: %s, want 7", r)
	}
}

// hasComputed reports whether a gnata value holds a number gnata computed
// (which toGnata never gives).
func hasComputed(g any) bool {
	switch x := g.(type) {
	case []any:
		return slices.ContainsFunc(x, hasComputed)
	case orderedMap:
		for _, k := range x.Keys() {
			if e, _ := x.Get(k); hasComputed(e) {
				return true
			}
		}
		return false
	}
	return isComputed(g)
}
