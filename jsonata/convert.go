package jsonata

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/recolabs/gnata"
	"github.com/stepd/stepd/value"
)

// gnata keeps objects in an ordered map type that lives in an internal
// package: the only public constructors are DecodeJSON and UnmarshalJSON,
// which go through encoding/json's token reader (about 25 MB/s). Building
// the maps directly is 10-20 times faster, so the adapter does that when the
// type's layout is the one it knows (checked field by field at start-up)
// and falls back to the public, slower route otherwise.

// gnataNull is gnata's JSON null (Go nil is JSONata's undefined).
var gnataNull = mustDecode("null")

// omType is gnata's ordered map type (a struct; values are pointers to it).
var omType = reflect.TypeOf(mustDecode("{}")).Elem()

// omLayout mirrors gnata's ordered map.
type omLayout struct {
	keys []string
	data map[string]any
}

// directMaps reports whether omLayout matches gnata's type exactly.
var directMaps = func() bool {
	want := reflect.TypeOf(omLayout{})
	if omType.Kind() != reflect.Struct || omType.NumField() != want.NumField() || omType.Size() != want.Size() {
		return false
	}
	for i := range want.NumField() {
		f, w := omType.Field(i), want.Field(i)
		if f.Name != w.Name || f.Type != w.Type || f.Offset != w.Offset {
			return false
		}
	}
	return true
}()

func mustDecode(s string) any {
	v, err := gnata.DecodeJSON(json.RawMessage(s))
	if err != nil {
		panic(fmt.Sprintf("jsonata: gnata cannot decode %s: %v", s, err))
	}
	return v
}

// orderedMap is the method set of gnata's ordered map that the adapter uses.
type orderedMap interface {
	Keys() []string
	Get(string) (any, bool)
	Set(string, any)
	Len() int
}

// newOrderedMap returns a gnata ordered map with the given keys (shared,
// not copied: gnata never changes an input map) and values.
func newOrderedMap(keys []string, data map[string]any) any {
	p := reflect.New(omType)
	if directMaps {
		l := (*omLayout)(p.UnsafePointer())
		l.keys, l.data = keys, data
		return p.Interface()
	}
	m := p.Interface()
	if err := m.(json.Unmarshaler).UnmarshalJSON([]byte("{}")); err != nil {
		panic(fmt.Sprintf("jsonata: gnata cannot decode {}: %v", err))
	}
	om := m.(orderedMap)
	for _, k := range keys {
		om.Set(k, data[k])
	}
	return m
}

// converter turns stepd values into gnata values and back. It remembers
// which gnata map came from which stepd object, so that a result that
// returns part of the input unchanged comes back as the very same value,
// without copying and with its numbers as written: the maps it converted
// itself (origin), and those of the slots it took forms from (slots).
type converter struct {
	origin map[any]*value.Object
	slots  [6]map[any]*value.Object
	more   []map[any]*value.Object // beyond len(slots)
	nslots int
	// watch marks each object converted (value.Object.Watch): the form
	// is kept in a Slot.
	watch bool
	// recent is the slot for the object result (Keeper), nil if none;
	// last is the gnata result of the last expression run.
	recent *Slot
	last   any
	// funcs are the adapter's functions bound to the evaluation's
	// context, taken from a pool at the first expression that names one.
	funcs *boundFuncs
}

// addOrigins adds a slot's record of the stepd object behind each of its
// gnata maps.
func (c *converter) addOrigins(m map[any]*value.Object) {
	switch {
	case len(m) == 0:
	case c.nslots < len(c.slots):
		c.slots[c.nslots] = m
		c.nslots++
	default:
		c.more = append(c.more, m)
	}
}

// originOf returns the stepd object a gnata map was converted from.
func (c *converter) originOf(m any) (*value.Object, bool) {
	if o, ok := c.origin[m]; ok {
		return o, true
	}
	for _, s := range c.slots[:c.nslots] {
		if o, ok := s[m]; ok {
			return o, true
		}
	}
	for _, s := range c.more {
		if o, ok := s[m]; ok {
			return o, true
		}
	}
	return nil, false
}

func (c *converter) toGnata(v any) any {
	switch x := v.(type) {
	case nil:
		return gnataNull
	case bool, string:
		return x
	case value.Number:
		return json.Number(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.toGnata(e)
		}
		return out
	case *value.Object:
		if c.watch {
			x.Watch()
		}
		keys := x.Keys()
		data := make(map[string]any, len(keys))
		for i, k := range keys {
			_, e := x.At(i)
			data[k] = c.toGnata(e)
		}
		m := newOrderedMap(slices.Clip(keys), data)
		if c.origin == nil {
			c.origin = make(map[any]*value.Object)
		}
		c.origin[m] = x
		return m
	}
	// Not a stepd value: let gnata see it as JSON.
	return c.toGnata(value.FromGo(v))
}

// errUnsupported is a result that has no JSON form (a function).
var errUnsupported = &Error{Message: "unsupported result type"}

// fromGnata converts a gnata value into a stepd value; ok is false for
// undefined.
func (c *converter) fromGnata(v any) (any, bool, error) {
	switch x := v.(type) {
	case nil:
		return nil, false, nil
	case bool, string:
		return x, true, nil
	case json.Number:
		// A number no arithmetic touched keeps its text (lossless
		// pass-through, as for whole objects returned unchanged).
		return value.Number(x), true, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false, &Error{Code: "D1001", Message: fmt.Sprintf("Number out of range: %v", x)}
		}
		return value.Float(x), true, nil
	case int:
		return value.Int(int64(x)), true, nil
	case int64:
		return value.Int(x), true, nil
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			ev, ok, err := c.fromGnata(e)
			if err != nil {
				return nil, false, err
			}
			if ok { // undefined inside an array is dropped
				out = append(out, ev)
			}
		}
		return out, true, nil
	case map[string]any:
		// Custom functions and a few builtins return plain maps; JSONata
		// orders their keys as gnata does.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := value.NewObject(len(keys))
		for _, k := range keys {
			ev, ok, err := c.fromGnata(x[k])
			if err != nil {
				return nil, false, err
			}
			if ok {
				o.Set(k, ev)
			}
		}
		return o, true, nil
	case orderedMap:
		if orig, ok := c.originOf(v); ok {
			return orig, true, nil
		}
		keys := x.Keys()
		o := value.NewObject(len(keys))
		for _, k := range keys {
			e, _ := x.Get(k)
			ev, ok, err := c.fromGnata(e)
			if err != nil {
				return nil, false, err
			}
			if ok {
				o.Set(k, ev)
			}
		}
		return o, true, nil
	}
	if gnata.IsNull(v) {
		return nil, true, nil
	}
	if vals, keep, ok := sequence(v); ok {
		switch {
		case len(vals) == 0:
			return nil, false, nil
		case len(vals) == 1 && !keep:
			return c.fromGnata(vals[0])
		}
		return c.fromGnata(vals)
	}
	return nil, false, errUnsupported
}

// sequence reads gnata's sequence type (a struct with Values and
// KeepSingleton) when v is one.
func sequence(v any) (vals []any, keep, ok bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, false, false
	}
	s := rv.Elem()
	f := s.FieldByName("Values")
	if !f.IsValid() || f.Type() != reflect.TypeOf([]any(nil)) {
		return nil, false, false
	}
	vals = f.Interface().([]any)
	if k := s.FieldByName("KeepSingleton"); k.IsValid() && k.Kind() == reflect.Bool {
		keep = k.Bool()
	}
	return vals, keep, true
}

// jsNumber returns a number as JavaScript (and so AWS's $parse) prints it:
// integers that a double holds exactly keep their text, others are
// reformatted ("1.0" is 1, "1e2" is 100, "-0" is 0, 2^53+1 loses its last
// digit).
func jsNumber(s string) value.Number {
	if len(s) < 16 && !strings.ContainsAny(s, ".eE") && s != "-0" {
		return value.Number(s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return value.Number(s)
	}
	return value.Float(f)
}
