package jsonata

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/recolabs/gnata"

	"github.com/stepd/stepd/value"
)

// $string and the & operator serialise whole values. gnata does it with
// encoding/json and a MarshalJSON method on its ordered map, and
// encoding/json re-reads what each nested MarshalJSON returns: the time
// grows with the nesting depth times the size (a 60 KB input nested 10,000
// levels deep took 5 s), inside one call that never looks at the
// evaluation's context, so neither the time budget nor a stop could
// interrupt it. The adapter therefore binds its own $string, and rewrites
// every & of a compiled expression into a call of its own concatenation
// (rewriteConcat): both serialise through encoder, in one pass, and
// consult the context as the output grows.

// stringName is the variable the adapter binds to its $string; concatName
// the one its & calls. No expression can name "&": only the rewritten
// nodes reach it.
const (
	stringName = "string"
	concatName = "&"
)

// serialiser binds the serialising functions to an evaluation's context.
type serialiser struct{ ctx context.Context }

// fnString is JSONata's $string(arg, prettify): undefined stays
// undefined, a string is unchanged, a function is "", a number is written
// as JavaScript writes it once rounded to 15 significant digits (an
// infinite one is error D3001), anything else is JSON.stringify's text,
// indented by two spaces when prettify is true. Without arguments it
// stringifies the context value.
func (s *serialiser) fnString(args []any, focus any) (any, error) {
	if len(args) > 2 {
		return nil, sigError("string", 2)
	}
	v := focus
	if len(args) > 0 {
		v = arg(args, 0)
	} else if isFunction(v) {
		return nil, nil // the context is not a value to stringify
	}
	prettify := false
	switch p := arg(args, 1).(type) {
	case nil:
	case bool:
		prettify = p
	default:
		return nil, sigError("string", 1)
	}
	if v == nil {
		return nil, nil
	}
	return s.stringify(v, prettify)
}

// fnConcat is the & operator: each operand $string'ed, undefined as "".
func (s *serialiser) fnConcat(args []any, _ any) (any, error) {
	if len(args) != 2 {
		return nil, arityError("&")
	}
	var out string
	for i := range args {
		v := arg(args, i)
		if v == nil {
			continue
		}
		str, err := s.stringify(v, false)
		if err != nil {
			return nil, err
		}
		out += str
	}
	return out, nil
}

// stringify is $string of a defined value.
func (s *serialiser) stringify(v any, prettify bool) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", &Error{Code: "D3001", Token: "string", Message: "Attempting to invoke string function on Infinity or NaN"}
		}
	}
	if isFunction(v) {
		return "", nil
	}
	e := encoder{ctx: s.ctx, pretty: prettify}
	if err := e.value(v, 0); err != nil {
		return "", err
	}
	return string(e.buf), nil
}

// encoder writes gnata values as JSON.stringify writes JavaScript's, with
// JSONata's replacer (numbers to 15 significant digits, functions as "").
// It asks ctx for an error every checkEvery values and every checkBytes
// of output, so a huge or deeply nested value can be interrupted.
type encoder struct {
	ctx     context.Context
	pretty  bool
	buf     []byte
	n       int // values written since the last check
	checked int // len(buf) at the last check
}

const (
	checkEvery = 1024
	checkBytes = 64 << 10
)

func (e *encoder) check() error {
	e.n++
	if e.n < checkEvery && len(e.buf)-e.checked < checkBytes {
		return nil
	}
	e.n, e.checked = 0, len(e.buf)
	if e.ctx == nil {
		return nil
	}
	return e.ctx.Err()
}

// value writes v at the given depth; v is defined (not nil).
func (e *encoder) value(v any, depth int) error {
	if err := e.check(); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		e.buf = value.AppendString(e.buf, x)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case float64:
		return e.number(x)
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64) // out of range: infinite
		return e.number(f)
	case int:
		e.buf = appendNumber(e.buf, float64(x))
	case int64:
		e.buf = appendNumber(e.buf, float64(x))
	case []any:
		return e.array(x, depth)
	case orderedMap:
		keys := x.Keys()
		return e.object(len(keys), func(i int) (string, any) {
			v, _ := x.Get(keys[i])
			return keys[i], v
		}, depth)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return e.object(len(keys), func(i int) (string, any) { return keys[i], x[keys[i]] }, depth)
	default:
		switch {
		case gnata.IsNull(v):
			e.buf = append(e.buf, "null"...)
		case isFunction(v):
			e.buf = append(e.buf, `""`...)
		default:
			if vals, keep, ok := sequence(v); ok {
				switch {
				case len(vals) == 0:
					e.buf = append(e.buf, "null"...) // undefined where a value must be
				case len(vals) == 1 && !keep:
					return e.value(vals[0], depth)
				default:
					return e.array(vals, depth)
				}
				return nil
			}
			return errUnsupported
		}
	}
	return nil
}

// array writes an array; undefined items are written as null.
func (e *encoder) array(items []any, depth int) error {
	if len(items) == 0 {
		e.buf = append(e.buf, "[]"...)
		return nil
	}
	e.buf = append(e.buf, '[')
	for i, item := range items {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		if item == nil {
			e.buf = append(e.buf, "null"...)
			continue
		}
		if err := e.value(item, depth+1); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf = append(e.buf, ']')
	return nil
}

// object writes n members given by member; undefined members are left out.
func (e *encoder) object(n int, member func(int) (string, any), depth int) error {
	e.buf = append(e.buf, '{')
	written := 0
	for i := range n {
		k, v := member(i)
		if v == nil {
			continue
		}
		if written > 0 {
			e.buf = append(e.buf, ',')
		}
		written++
		e.newline(depth + 1)
		e.buf = value.AppendString(e.buf, k)
		e.buf = append(e.buf, ':')
		if e.pretty {
			e.buf = append(e.buf, ' ')
		}
		if err := e.value(v, depth+1); err != nil {
			return err
		}
	}
	if written > 0 {
		e.newline(depth)
	}
	e.buf = append(e.buf, '}')
	return nil
}

// number writes a number inside a value; JSONata refuses infinite ones
// there with D1001 (and at the top with D3001, in stringify).
func (e *encoder) number(f float64) error {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return &Error{Code: "D1001", Token: "string", Message: "Number out of range"}
	}
	e.buf = appendNumber(e.buf, f)
	return nil
}

func (e *encoder) newline(depth int) {
	if !e.pretty {
		return
	}
	e.buf = append(e.buf, '\n')
	for range depth {
		e.buf = append(e.buf, "  "...)
	}
}

// appendNumber writes f as JSONata's $string does: rounded to 15
// significant digits, then as JavaScript's Number#toString (decimal from
// 1e-6 up to 1e21, exponent form outside). f is finite.
func appendNumber(b []byte, f float64) []byte {
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	abs := math.Abs(f)
	switch {
	case abs == 0:
		return append(b, '0') // -0 too
	case abs >= 1e21 || abs < 1e-6:
		s := strconv.AppendFloat(nil, f, 'e', -1, 64)
		// Go writes e+21 and e-07; JavaScript e+21 and e-7.
		i := slices.Index(s, 'e')
		b = append(b, s[:i+2]...)
		exp := s[i+2:]
		for len(exp) > 1 && exp[0] == '0' {
			exp = exp[1:]
		}
		return append(b, exp...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// funcTypes are the types of gnata's function values that are not Go
// functions (lambdas, builtins with a signature, partial applications).
var funcTypes = func() map[reflect.Type]bool {
	out := make(map[reflect.Type]bool)
	for _, src := range []string{"function(){1}", "$sum", "$map", "$string", "$sum(?)"} {
		e, err := gnata.Compile(src)
		if err != nil {
			continue
		}
		v, err := e.EvalWithVars(context.Background(), nil, nil)
		if err != nil || v == nil {
			continue
		}
		if t := reflect.TypeOf(v); t.Kind() != reflect.Func {
			out[t] = true
		}
	}
	return out
}()

// isFunction reports whether v is a function value.
func isFunction(v any) bool {
	if v == nil {
		return false
	}
	t := reflect.TypeOf(v)
	return t.Kind() == reflect.Func || funcTypes[t]
}
