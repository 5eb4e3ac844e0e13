package jsonata

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/recolabs/gnata"
)

// distinctName is the variable the adapter binds to its $distinct. gnata's
// compares every item that is an object or an array with every distinct
// one kept so far, in one call that never looks at the context: 20,000
// distinct objects took 8.6 s. The adapter's keys each such item by a
// canonical text instead (object members sorted, numbers by value), so
// the work is linear, and consults the context as it goes.
const distinctName = "distinct"

// seqType is gnata's sequence type (a pointer to a struct with Values),
// read from what its $distinct returns; nil when that is not a sequence.
var seqType = func() reflect.Type {
	defer func() { _ = recover() }()
	f, ok := gnata.NewCustomEnv(nil).Lookup(distinctName)
	if !ok {
		return nil
	}
	fn := reflect.ValueOf(f)
	if fn.Kind() == reflect.Pointer && fn.Elem().Kind() == reflect.Struct {
		fn = fn.Elem().FieldByName("Fn") // a builtin with a signature
	}
	if fn.Kind() != reflect.Func || !fn.Type().ConvertibleTo(reflect.TypeOf(rawFunc(nil))) {
		return nil
	}
	r, err := fn.Convert(reflect.TypeOf(rawFunc(nil))).Interface().(rawFunc)([]any{[]any{1.0, 2.0}}, nil)
	if err != nil {
		return nil
	}
	if _, _, ok := sequence(r); !ok {
		return nil
	}
	return reflect.TypeOf(r)
}()

// newSequence returns a gnata sequence of vals (an array when the
// sequence type is unknown).
func newSequence(vals []any) any {
	if seqType == nil {
		return vals
	}
	p := reflect.New(seqType.Elem())
	p.Elem().FieldByName("Values").Set(reflect.ValueOf(vals))
	return p.Interface()
}

// fnDistinct is JSONata's $distinct(array): the array without the items
// equal to an earlier one (deep equality: objects whatever the order of
// their members, numbers by value), as a sequence like gnata's (so one
// distinct item is that item; jsonata-js keeps an array literal an array,
// but gnata hands path results over as arrays too, so they cannot be told
// apart here). Anything but an array of two or more items comes back as
// it is.
func (s *serialiser) fnDistinct(args []any, _ any) (any, error) {
	if len(args) != 1 {
		return nil, arityError(distinctName)
	}
	v := args[0]
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		if gnata.IsNull(v) {
			return v, nil
		}
		vals, _, isSeq := sequence(v)
		if !isSeq {
			return v, nil
		}
		items = vals
	}
	if len(items) <= 1 {
		return items, nil
	}
	seen := make(map[string]bool, len(items))
	out := make([]any, 0, len(items))
	k := keyer{ctx: s.ctx}
	for _, item := range items {
		k.buf = k.buf[:0]
		ok, err := k.key(item)
		if err != nil {
			return nil, err
		}
		if !ok { // holds a function or NaN: equal to nothing
			out = append(out, item)
			continue
		}
		if !seen[string(k.buf)] {
			seen[string(k.buf)] = true
			out = append(out, item)
		}
	}
	return newSequence(out), nil
}

// keyer writes the canonical text of a value: two values have the same
// text when JSONata's deep equality holds between them.
type keyer struct {
	ctx context.Context
	buf []byte
	n   int
}

// key appends v's text; ok is false when v holds something deep equality
// never holds for (a function, NaN).
func (k *keyer) key(v any) (ok bool, err error) {
	if k.n++; k.n%checkEvery == 0 && k.ctx != nil {
		if err := k.ctx.Err(); err != nil {
			return false, err
		}
	}
	switch x := v.(type) {
	case nil:
		k.buf = append(k.buf, 'u')
	case string:
		k.buf = strconv.AppendQuote(append(k.buf, 's'), x)
	case bool:
		k.buf = strconv.AppendBool(append(k.buf, 'b'), x)
	case float64:
		return k.number(x), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !math.IsInf(f, 0) {
			return false, nil
		}
		return k.number(f), nil
	case []any:
		k.buf = append(k.buf, '[')
		for _, e := range x {
			if ok, err := k.key(e); !ok || err != nil {
				return ok, err
			}
			k.buf = append(k.buf, ',')
		}
		k.buf = append(k.buf, ']')
	case orderedMap:
		keys := slices.Clone(x.Keys())
		slices.Sort(keys)
		return k.object(keys, func(name string) any { e, _ := x.Get(name); return e })
	case map[string]any:
		keys := make([]string, 0, len(x))
		for name := range x {
			keys = append(keys, name)
		}
		slices.Sort(keys)
		return k.object(keys, func(name string) any { return x[name] })
	default:
		if gnata.IsNull(v) {
			k.buf = append(k.buf, 'z')
			return true, nil
		}
		return false, nil
	}
	return true, nil
}

func (k *keyer) number(f float64) bool {
	if math.IsNaN(f) {
		return false
	}
	if f == 0 {
		f = 0 // -0 equals 0
	}
	k.buf = strconv.AppendFloat(append(k.buf, 'n'), f, 'g', -1, 64)
	return true
}

func (k *keyer) object(keys []string, get func(string) any) (bool, error) {
	k.buf = append(k.buf, '{')
	for _, name := range keys {
		k.buf = strconv.AppendQuote(k.buf, name)
		k.buf = append(k.buf, ':')
		if ok, err := k.key(get(name)); !ok || err != nil {
			return ok, err
		}
		k.buf = append(k.buf, ',')
	}
	k.buf = append(k.buf, '}')
	return true, nil
}
