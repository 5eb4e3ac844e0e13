package jsonata

import (
	"encoding/json"

	"github.com/recolabs/gnata"
	"github.com/stepd/stepd/value"
)

// Keeper is a Vars that keeps the evaluator form of the object an
// evaluation returned, so that a later evaluation given that object (a
// state's output is the next state's input) finds its form instead of
// converting it.
type Keeper interface {
	Vars
	// Recent returns the slot for the last object result.
	Recent() *Slot
}

// keep leaves in c.recent the evaluator form of v, the object that a
// whole-field expression returned as r, when r is exactly what converting
// v would give: the same members in the same order (none undefined), and
// numbers as text (a computed number is rewritten in r as the text v
// holds, as toGnata would write it). An object v that came from a form
// already cached (a pass-through) is not kept again.
func (c *converter) keep(r, v any) {
	o, isObj := v.(*value.Object)
	if !isObj || c.recent == nil {
		return
	}
	if _, known := c.originOf(r); known {
		return
	}
	origin := make(map[any]*value.Object, 1)
	if _, exact := c.canon(r, v, origin); !exact {
		return
	}
	*c.recent = Slot{set: true, src: o, conv: r, origin: origin, epoch: value.Changes()}
}

// canon checks that g, a result of gnata, is the form toGnata would give
// v, which fromGnata made from g, and makes it so where only numbers
// differ: gnata's computed numbers (float64, int) are replaced, in the
// maps and arrays of g, by v's text. It returns g's canonical form (g
// itself, or for a number its text) and whether there is one.
//
// Changing g in place is safe: a container holding a computed number was
// built by this evaluation (gnata shares no such value between
// evaluations, and every cached form holds numbers as text only).
func (c *converter) canon(g, v any, origin map[any]*value.Object) (any, bool) {
	switch x := g.(type) {
	case bool, string, json.Number:
		return g, true
	case float64, int, int64:
		n, ok := v.(value.Number)
		return json.Number(n), ok
	case []any:
		y, ok := v.([]any)
		if !ok || len(y) != len(x) {
			return nil, false
		}
		for i, e := range x {
			f, ok := c.canon(e, y[i], origin)
			if !ok {
				return nil, false
			}
			if isComputed(e) {
				x[i] = f
			}
		}
		return g, true
	case orderedMap:
		y, ok := v.(*value.Object)
		if !ok {
			return nil, false
		}
		if o, known := c.originOf(g); known {
			return g, o == y
		}
		keys := x.Keys()
		if len(keys) != y.Len() {
			return nil, false // a member was undefined
		}
		for i, k := range keys {
			yk, ye := y.At(i)
			e, _ := x.Get(k)
			if yk != k {
				return nil, false
			}
			f, ok := c.canon(e, ye, origin)
			if !ok {
				return nil, false
			}
			if isComputed(e) {
				x.Set(k, f)
			}
		}
		y.Watch()
		origin[g] = y
		return g, true
	}
	if gnata.IsNull(g) {
		return g, v == nil
	}
	return nil, false // a sequence, a plain map, a function
}

func isComputed(g any) bool {
	switch g.(type) {
	case float64, int, int64:
		return true
	}
	return false
}
