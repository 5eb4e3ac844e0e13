package jsonata

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/recolabs/gnata"
	"github.com/stepd/stepd/value"
)

func TestDistinct(t *testing.T) {
	t.Parallel()
	input := parse(t, `{"objs":[{"a":1,"b":[1,2]},{"b":[1,2.0],"a":1.0},{"a":1,"b":[2,1]},{"a":1}],"nums":[1,1.0,"1",-0,0,null,null,true,true]}`)
	tests := []struct{ expr, want string }{
		{`$distinct(objs)`, `[{"a":1,"b":[1,2]},{"a":1,"b":[2,1]},{"a":1}]`},
		{`$distinct(nums)`, `[1,"1",-0,null,true]`},
		{`$distinct([[1], [1], {"x": []}, {"x": []}])`, `[[1],{"x":[]}]`},
		{`$distinct(objs[[0,1]])`, `{"a":1,"b":[1,2]}`}, // a sequence of one item is that item
		{`$distinct(objs.a)`, `1`},
		{`$count($distinct([1..5].{"f": function(){1}}))`, `5`}, // functions are equal to nothing
		{`$distinct([1])`, `[1]`},
		{`$distinct("x")`, `"x"`},
		{`$distinct($nope)`, `undefined`},
		{`($distinct := function($x){"mine"}; $distinct([1,1]))`, `"mine"`},
	}
	for _, tt := range tests {
		got, ok, err := mustCompile(tt.expr).Eval(context.Background(), input, nil)
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

// $distinct over many distinct objects consults the evaluation's context
// as it goes (gnata's compared each with every other, 8.6 s for 20,000,
// without asking it anything).
func TestDistinctInterruptible(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[")
	for i := range 20_000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d}`, i)
	}
	b.WriteString("]")
	many, small := parse(t, b.String()), parse(t, `[{"id":1},{"id":2}]`)
	x := mustCompile(`$count($distinct($))`)
	shallow := &stopAfter{Context: context.Background()}
	shallow.n.Store(1 << 62)
	if _, _, err := x.Eval(shallow, small, nil); err != nil {
		t.Fatal(err)
	}
	ctx := &stopAfter{Context: context.Background()}
	ctx.n.Store(shallow.calls.Load() + 3)
	if _, _, err := x.Eval(ctx, many, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("$distinct of 20,000 objects: error %v after %d calls of Err (%d for two), want it interrupted", err, ctx.calls.Load(), shallow.calls.Load())
	}
	got, _, err := x.Eval(context.Background(), many, nil)
	if err != nil || value.String(got) != "20000" {
		t.Errorf("$count($distinct(20,000 objects)) = %v, %v", got, err)
	}
}

// FuzzDistinct checks the canonical keys against gnata's deep equality:
// $distinct keeps the items no earlier item is deep-equal to.
func FuzzDistinct(f *testing.F) {
	f.Add(`[{"a":1,"b":[1,2]},{"b":[1,2.0],"a":1.0},{"a":1,"b":[2,1]},1,1.0,"1",-0,0,null,[],{}]`)
	f.Add(`[[null],[null,null],{"a":null},{"a":{}}]`)
	f.Fuzz(func(t *testing.T, src string) {
		v, err := value.ParseString(src)
		items, isArray := v.([]any)
		if err != nil || !isArray || len(items) > 50 {
			return
		}
		var c converter
		g := c.toGnata(items).([]any)
		var want []any
		for _, item := range g {
			dup := false
			for _, kept := range want {
				if gnata.DeepEqual(item, kept) {
					dup = true
					break
				}
			}
			if !dup {
				want = append(want, item)
			}
		}
		r, err := (&serialiser{}).fnDistinct([]any{g}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := r.([]any)
		if vals, _, ok := sequence(r); ok {
			got = vals
		}
		if len(got) != len(want) {
			t.Fatalf("$distinct(%s) keeps %d items, deep equality %d", src, len(got), len(want))
		}
	})
}
