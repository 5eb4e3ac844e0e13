package jsonata

import (
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"reflect"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/value"
)

// The functions AWS Step Functions adds to JSONata. They are bound as
// variables of every evaluation (a binding named like a builtin hides it,
// which is how $random is replaced and $eval disabled).
//
// gnata's public hook for custom functions converts every argument to plain
// Go maps, losing key order; the functions here are registered with gnata's
// native function type instead (converted with reflect), so they see gnata's
// values as they are and must check their arguments themselves: gnata does
// no signature validation for them.

// rawFunc is the shape of gnata's native functions.
type rawFunc func(args []any, focus any) (any, error)

// nativeType is gnata's native function type (any builtin has it).
var nativeType = func() reflect.Type {
	sample, ok := gnataBuiltin("string")
	if !ok {
		panic("jsonata: gnata has no $string builtin")
	}
	return reflect.TypeOf(sample)
}()

func native(fn rawFunc) any { return reflect.ValueOf(fn).Convert(nativeType).Interface() }

// awsFuncs maps each function name (without $) to its gnata value, except
// the functions that draw random values, which are bound per evaluation to
// its source (randomFuncs).
var awsFuncs = func() map[string]any {
	fns := map[string]rawFunc{
		"partition": fnPartition,
		"range":     fnRange,
		"hash":      fnHash,
		"parse":     fnParse,
		"eval":      fnEval,
	}
	out := make(map[string]any, len(fns)+len(randomFuncs))
	for name, fn := range fns {
		out[name] = native(fn)
	}
	for name := range randomFuncs {
		out[name] = nil // bound per evaluation
	}
	return out
}()

// randomFuncs make the functions that draw random values from a source.
var randomFuncs = map[string]func(src Rand) rawFunc{
	"random": fnRandom,
	"uuid":   fnUUID,
}

// Rand is a source of random bits (interp.Rand and math/rand/v2's Source
// satisfy it).
type Rand interface {
	Uint64() uint64
}

// Options are the settings of one evaluation.
type Options struct {
	// Rand is the source of $random() and $uuid(). Nil means a source with
	// a fixed seed, new for each evaluation: deterministic, never a global
	// source.
	Rand Rand
}

func sigError(fn string, i int) error {
	return &Error{Code: "T0410", Token: fn, Message: fmt.Sprintf("Argument %d of function %q does not match function signature", i+1, fn)}
}

func arityError(fn string) error {
	return &Error{Code: "T0410", Token: fn, Message: fmt.Sprintf("Argument count of function %q does not match function signature", fn)}
}

// arg returns argument i with gnata's sequences collapsed; nil is undefined
// (absent or undefined).
func arg(args []any, i int) any {
	if i >= len(args) {
		return nil
	}
	v := args[i]
	if vals, keep, ok := sequence(v); ok {
		switch {
		case len(vals) == 0:
			return nil
		case len(vals) == 1 && !keep:
			return vals[0]
		}
		return vals
	}
	return v
}

// numberArg reads a numeric argument; ok is false when it is undefined.
func numberArg(args []any, i int, fn string) (f float64, ok bool, err error) {
	switch x := arg(args, i).(type) {
	case nil:
		return 0, false, nil
	case float64:
		return x, true, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, false, sigError(fn, i)
		}
		return f, true, nil
	case int:
		return float64(x), true, nil
	}
	return 0, false, sigError(fn, i)
}

// intArg reads a numeric argument and floors it, as AWS does with integer
// parameters.
func intArg(args []any, i int, fn string) (n int64, ok bool, err error) {
	f, ok, err := numberArg(args, i, fn)
	if !ok || err != nil {
		return 0, ok, err
	}
	f = math.Floor(f)
	if f > 1<<53 || f < -(1<<53) {
		return 0, false, &Error{Code: "D3001", Token: fn, Message: fmt.Sprintf("Argument %d of function %q is out of range", i+1, fn)}
	}
	return int64(f), true, nil
}

func stringArg(args []any, i int, fn string) (s string, ok bool, err error) {
	switch x := arg(args, i).(type) {
	case nil:
		return "", false, nil
	case string:
		return x, true, nil
	}
	return "", false, sigError(fn, i)
}

// $partition(array, size): the array in chunks of size items; the last
// chunk may be shorter. A single value is an array of one.
func fnPartition(args []any, _ any) (any, error) {
	if len(args) != 2 {
		return nil, arityError("partition")
	}
	a := arg(args, 0)
	if a == nil {
		return nil, nil
	}
	arr, isArr := a.([]any)
	if !isArr {
		arr = []any{a}
	}
	size, ok, err := intArg(args, 1, "partition")
	if err != nil || !ok {
		return nil, err
	}
	if size <= 0 {
		return nil, &Error{Code: "D3001", Token: "partition", Message: fmt.Sprintf("The size argument of function \"partition\" must be a positive integer, but was %d", size)}
	}
	out := make([]any, 0, (len(arr)+int(size)-1)/int(size))
	for i := 0; i < len(arr); i += int(size) {
		out = append(out, slicesClone(arr[i:min(i+int(size), len(arr))]))
	}
	return out, nil
}

func slicesClone(s []any) []any { return append(make([]any, 0, len(s)), s...) }

// maxRange is the most items $range produces (States.ArrayRange's limit).
const maxRange = 1000

// $range(start, end, step): the integers from start towards end (included
// when a step lands on it). As a JSONata sequence, one item is returned as
// itself and none as undefined.
func fnRange(args []any, _ any) (any, error) {
	if len(args) != 3 {
		return nil, arityError("range")
	}
	var v [3]int64
	for i := range v {
		n, ok, err := intArg(args, i, "range")
		if err != nil || !ok {
			return nil, err
		}
		v[i] = n
	}
	start, end, step := v[0], v[1], v[2]
	if step == 0 {
		return nil, &Error{Code: "D3001", Token: "range", Message: "The step argument of function \"range\" must not be 0"}
	}
	var out []any
	for x := start; (step > 0 && x <= end) || (step < 0 && x >= end); x += step {
		if len(out) == maxRange {
			return nil, &Error{Code: "D3001", Token: "range", Message: fmt.Sprintf("Function \"range\" would return more than %d items", maxRange)}
		}
		out = append(out, float64(x))
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 1:
		return out[0], nil
	}
	return out, nil
}

// $hash(value, algorithm): the hex digest of a string with MD5, SHA-1,
// SHA-256, SHA-384 or SHA-512.
func fnHash(args []any, _ any) (any, error) {
	if len(args) != 2 {
		return nil, arityError("hash")
	}
	s, ok, err := stringArg(args, 0, "hash")
	if err != nil || !ok {
		return nil, err
	}
	alg, ok, err := stringArg(args, 1, "hash")
	if err != nil || !ok {
		return nil, err
	}
	sum, ok := intrinsic.Hash(s, alg)
	if !ok {
		return nil, &Error{Code: "D3001", Token: "hash", Message: fmt.Sprintf("The hash algorithm %q is not supported; use MD5, SHA-1, SHA-256, SHA-384 or SHA-512", alg)}
	}
	return sum, nil
}

// $random([seed]): a number in [0, 1). With a seed it is the first
// nextDouble() of java.util.Random seeded with the (floored) seed, which is
// what AWS returns.
func fnRandom(src Rand) rawFunc {
	return func(args []any, _ any) (any, error) { return random(src, args) }
}

func random(src Rand, args []any) (any, error) {
	if len(args) > 1 {
		return nil, arityError("random")
	}
	seed, ok, err := intArg(args, 0, "random")
	if err != nil {
		return nil, err
	}
	if !ok {
		return mrand.New(src).Float64(), nil
	}
	return javaRandomDouble(seed), nil
}

// javaRandomDouble is java.util.Random(seed).nextDouble(): a 48-bit linear
// congruential generator, two draws of 26 and 27 bits.
func javaRandomDouble(seed int64) float64 {
	const (
		mult = 0x5DEECE66D
		mask = 1<<48 - 1
	)
	s := (uint64(seed) ^ mult) & mask
	next := func(bits uint) uint64 {
		s = (s*mult + 0xB) & mask
		return s >> (48 - bits)
	}
	hi := next(26)
	lo := next(27)
	return float64(hi<<27+lo) / (1 << 53)
}

// $uuid(): a random version 4 UUID.
func fnUUID(src Rand) rawFunc {
	return func(args []any, _ any) (any, error) {
		if len(args) != 0 {
			return nil, arityError("uuid")
		}
		return uuid.FromSource(src), nil
	}
}

// $parse(jsonString): the JSON value a string holds.
func fnParse(args []any, _ any) (any, error) {
	if len(args) != 1 {
		return nil, arityError("parse")
	}
	s, ok, err := stringArg(args, 0, "parse")
	if err != nil || !ok {
		return nil, err
	}
	v, err := value.ParseString(s)
	if err != nil {
		return nil, &Error{Code: "D3001", Token: "parse", Message: fmt.Sprintf("The argument of function \"parse\" is not valid JSON: %v", err)}
	}
	var c converter
	return c.toGnata(canonical(v)), nil
}

// canonical rewrites the numbers of a freshly parsed value as JavaScript
// prints them.
func canonical(v any) any {
	switch x := v.(type) {
	case value.Number:
		return jsNumber(string(x))
	case []any:
		for i, e := range x {
			x[i] = canonical(e)
		}
	case *value.Object:
		for i := range x.Len() {
			k, e := x.At(i)
			x.Set(k, canonical(e))
		}
	}
	return v
}

// fnEval stands in for $eval, which AWS does not provide: calling it fails
// as calling any undefined function does.
func fnEval(_ []any, _ any) (any, error) {
	return nil, &Error{Code: "T1006", Token: "eval", Message: messages["T1006"]}
}
