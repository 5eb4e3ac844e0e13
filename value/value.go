// Package value holds stepd's JSON value model: an ordered object type, a
// number type that keeps its original text, and a fast parser and encoder.
//
// A JSON value is represented as a Go value of one of these dynamic types:
//
//	nil       JSON null
//	bool      true / false
//	Number    a number, kept as its source text (lossless pass-through)
//	string    a string
//	[]any     an array
//	*Object   an object whose keys keep their insertion order
//
// Values are immutable once built: code that needs a changed value builds a
// new one (Object.Clone, Object.With) and never mutates a value it did not
// create itself, nor one of its own once it may have been counted
// (EncodedLen remembers the lengths of objects, long strings and long
// arrays). This lets history events, state inputs and outputs share
// structure safely across goroutines.
//
// Arithmetic follows JavaScript (and AWS Step Functions): numbers are IEEE
// doubles when computed; Number.Float64 converts.
//
// It imports nothing of stepd's and must not: every other layer builds on
// it.
package value

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number is a JSON number kept as its source text.
type Number string

// Float64 returns the number as an IEEE double.
func (n Number) Float64() float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		// ParseFloat returns ±Inf with a range error; keep that.
		return f
	}
	return f
}

// Int64 returns the number as an int64 and whether it is an exact integer
// within range.
func (n Number) Int64() (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f := n.Float64()
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || f > 9.2e18 || f < -9.2e18 {
		return 0, false
	}
	return int64(f), true
}

// IsInteger reports whether the number has no fractional part.
func (n Number) IsInteger() bool {
	f := n.Float64()
	return f == math.Trunc(f) && !math.IsInf(f, 0)
}

// Float returns a Number for f, formatted as JavaScript's Number.prototype.toString
// formats it (shortest round-trip digits; exponent form below 1e-6 and from 1e21).
func Float(f float64) Number {
	return Number(formatFloat(f))
}

// Int returns a Number for i.
func Int(i int64) Number { return Number(strconv.FormatInt(i, 10)) }

// formatFloat formats f as JavaScript does.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if math.Abs(f) < 1e15 {
			// An integer this small is its shortest digits.
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	a := math.Abs(f)
	if a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + string(sign) + exp
}

// Kind names the JSON type of a value.
type Kind uint8

// The JSON kinds.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
	KindInvalid
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object", "invalid"}

func (k Kind) String() string { return kindNames[k] }

// Phrase names v's kind for a message: "an object", "an array", "a
// string", "a number", "a boolean", "null", or the Go type of a value
// that is none of them.
func Phrase(v any) string {
	switch k := KindOf(v); k {
	case KindNull:
		return "null"
	case KindInvalid:
		return fmt.Sprintf("a %T", v)
	case KindArray, KindObject:
		return "an " + k.String()
	default:
		return "a " + k.String()
	}
}

// KindOf returns the kind of v.
func KindOf(v any) Kind {
	switch v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case Number:
		return KindNumber
	case string:
		return KindString
	case []any:
		return KindArray
	case *Object:
		return KindObject
	}
	return KindInvalid
}

// Equal reports whether a and b are the same JSON value. Numbers compare by
// numeric value; object key order is ignored.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case Number:
		y, ok := b.(Number)
		return ok && (x == y || x.Float64() == y.Float64())
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			w, ok := y.Get(k)
			if !ok || !Equal(x.vals[i], w) {
				return false
			}
		}
		return true
	}
	return false
}

// Truthy-free helpers used across packages.

// AsObject returns v as an object, or nil.
func AsObject(v any) *Object { o, _ := v.(*Object); return o }
