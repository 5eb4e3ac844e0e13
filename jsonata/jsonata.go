// Package jsonata evaluates JSONata 2.0 expressions as AWS Step Functions
// does, over stepd's JSON values. It is a thin adapter over
// github.com/recolabs/gnata, the only package in stepd that imports it.
//
// AWS's environment differs from plain JSONata: $eval is disabled, and
// $partition, $range, $hash, $random, $uuid and $parse are added. Values
// cross the boundary as JSON (objects keep their key order); results come
// back as stepd values, with "undefined" reported separately from null.
package jsonata

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"

	"github.com/recolabs/gnata"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/value"
)

// Expr is a compiled expression. It is safe for concurrent use.
type Expr struct {
	src string
	e   *gnata.Expression
}

// Error is a JSONata compile or evaluation error.
type Error struct {
	Code    string // JSONata error code such as T1006, or ""
	Message string
}

func (e *Error) Error() string {
	if e.Code != "" {
		return e.Code + ": " + e.Message
	}
	return e.Message
}

// Compile compiles an expression.
func Compile(src string) (*Expr, error) {
	e, err := gnata.Compile(src)
	if err != nil {
		return nil, wrapErr(err)
	}
	return &Expr{src: src, e: e}, nil
}

// Source returns the expression text.
func (x *Expr) Source() string { return x.src }

// errUndefined marks a result that is JSONata's undefined.
var errUndefined = errors.New("undefined")

// Eval evaluates the expression with the given input ($) and variables
// (stepd values, keyed by name without the $). ok is false when the result
// is undefined.
func (x *Expr) Eval(ctx context.Context, input any, vars map[string]any) (result any, ok bool, err error) {
	return x.eval(ctx, input, input != nil, vars, true)
}

// eval evaluates with an explicit input (hasInput false: undefined) and,
// when aws is set, AWS's function environment.
func (x *Expr) eval(ctx context.Context, input any, hasInput bool, vars map[string]any, aws bool) (result any, ok bool, err error) {
	gvars := make(map[string]any, len(vars)+len(awsFuncs))
	if aws {
		for k, v := range awsFuncs {
			gvars[k] = v
		}
	}
	for k, v := range vars {
		gv, err := toGnata(v)
		if err != nil {
			return nil, false, err
		}
		gvars[k] = gv
	}
	var data any
	if hasInput {
		if data, err = toGnata(input); err != nil {
			return nil, false, err
		}
	}
	r, err := x.e.EvalWithVars(ctx, data, gvars)
	if err != nil {
		return nil, false, wrapErr(err)
	}
	if r == nil {
		return nil, false, nil
	}
	v, err := fromGnata(r)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func wrapErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	// gnata errors read "CODE: message".
	if i := strings.Index(msg, ": "); i > 0 && i <= 6 && isCode(msg[:i]) {
		e := &Error{Code: msg[:i], Message: msg[i+2:]}
		if text, ok := messages[e.Code]; ok {
			e.Message = text
		}
		return e
	}
	return &Error{Message: msg}
}

func isCode(s string) bool {
	if len(s) != 5 {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s[0] >= 'A' && s[0] <= 'Z'
}

// messages are jsonata-js's texts for error codes whose gnata wording
// differs (AWS reports jsonata-js's).
var messages = map[string]string{
	"T1006": "Attempted to invoke a non-function",
}

// toGnata converts a stepd value into gnata's representation, keeping key
// order.
func toGnata(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		if v == nil {
			return gnata.DecodeJSON(json.RawMessage("null"))
		}
		return x, nil
	case value.Number:
		return json.Number(x), nil
	}
	return gnata.DecodeJSON(json.RawMessage(value.String(v)))
}

// orderedMap is what gnata's ordered objects offer.
type orderedMap interface {
	Keys() []string
	Get(string) (any, bool)
}

// fromGnata converts a gnata result into a stepd value.
func fromGnata(v any) (any, error) {
	if v == nil || gnata.IsNull(v) {
		return nil, nil
	}
	switch x := v.(type) {
	case bool, string:
		return x, nil
	case json.Number:
		return normalizeNumber(string(x)), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, &Error{Code: "D1001", Message: "Number out of range"}
		}
		return value.Float(x), nil
	case int:
		return value.Int(int64(x)), nil
	case int64:
		return value.Int(x), nil
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if e == nil {
				continue // undefined inside an array is dropped
			}
			ev, err := fromGnata(e)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	case map[string]any:
		return value.FromGo(x), nil
	case orderedMap:
		keys := x.Keys()
		o := value.NewObject(len(keys))
		for _, k := range keys {
			e, _ := x.Get(k)
			if e == nil {
				continue
			}
			ev, err := fromGnata(e)
			if err != nil {
				return nil, err
			}
			o.Set(k, ev)
		}
		return o, nil
	}
	// A sequence or function: normalise through gnata.
	n := gnata.NormalizeValue(v)
	switch n.(type) {
	case nil, bool, string, float64, json.Number, []any, map[string]any:
		if fmt.Sprintf("%T", n) != fmt.Sprintf("%T", v) {
			return fromGnata(n)
		}
	}
	return nil, &Error{Message: fmt.Sprintf("unsupported result type %T", v)}
}

// normalizeNumber writes an input number as JavaScript would print it.
func normalizeNumber(s string) any {
	if !strings.ContainsAny(s, ".eE") && len(s) < 16 && s != "-0" {
		return value.Number(s)
	}
	var f float64
	if _, err := fmt.Sscan(s, &f); err != nil {
		return value.Number(s)
	}
	return value.Float(f)
}

// awsFuncs are the functions AWS Step Functions adds to JSONata, bound as
// variables of every evaluation.
var awsFuncs = func() map[string]any {
	fns := map[string]gnata.CustomFunc{
		"partition": fnPartition,
		"range":     fnRange,
		"hash":      fnHash,
		"random":    fnRandom,
		"uuid":      fnUUID,
		"parse":     fnParse,
		"eval": func(args []any, focus any) (any, error) {
			return nil, &Error{Code: "T1006", Message: "Attempted to invoke a non-function"}
		},
	}
	env := gnata.NewCustomEnv(fns)
	out := map[string]any{}
	for name := range fns {
		f, _ := env.Lookup(name)
		out[name] = f
	}
	return out
}()

func number(args []any, i int, fn string) (float64, error) {
	if i >= len(args) {
		return 0, &Error{Code: "T0410", Message: fmt.Sprintf("Argument %d of function %s is missing", i+1, fn)}
	}
	switch x := args[i].(type) {
	case float64:
		return x, nil
	case json.Number:
		return x.Float64()
	case int:
		return float64(x), nil
	}
	return 0, &Error{Code: "T0410", Message: fmt.Sprintf("Argument %d of function %s does not match function signature", i+1, fn)}
}

func fnPartition(args []any, _ any) (any, error) {
	arr, ok := args[0].([]any)
	if len(args) < 2 || !ok {
		return nil, &Error{Code: "T0410", Message: "Argument 1 of function $partition does not match function signature"}
	}
	n, err := number(args, 1, "$partition")
	if err != nil {
		return nil, err
	}
	size := int(n)
	if size <= 0 || float64(size) != n {
		return nil, &Error{Message: "The size argument of $partition must be a positive integer"}
	}
	out := make([]any, 0, (len(arr)+size-1)/size)
	for i := 0; i < len(arr); i += size {
		chunk := make([]any, 0, size)
		chunk = append(chunk, arr[i:min(i+size, len(arr))]...)
		out = append(out, chunk)
	}
	return out, nil
}

func fnRange(args []any, _ any) (any, error) {
	var v [3]float64
	for i := range v {
		n, err := number(args, i, "$range")
		if err != nil {
			return nil, err
		}
		v[i] = n
	}
	start, end, step := v[0], v[1], v[2]
	if step == 0 {
		return nil, &Error{Message: "The step argument of $range must not be 0"}
	}
	var out []any
	for x := start; (step > 0 && x <= end) || (step < 0 && x >= end); x += step {
		if len(out) == 1000 {
			return nil, &Error{Message: "$range produced more than 1000 items"}
		}
		out = append(out, x)
	}
	if len(out) == 1 {
		return out[0], nil // a singleton sequence is its item
	}
	return out, nil
}

func fnHash(args []any, _ any) (any, error) {
	if len(args) < 2 {
		return nil, &Error{Code: "T0410", Message: "Function $hash takes a value and an algorithm"}
	}
	s, ok := args[0].(string)
	if !ok {
		b, _ := json.Marshal(args[0])
		s = string(b)
	}
	alg, _ := args[1].(string)
	sum, ok := intrinsic.Hash(s, alg)
	if !ok {
		return nil, &Error{Message: fmt.Sprintf("Unsupported hash algorithm '%s' (supported: MD5, SHA-1, SHA-256, SHA-384, SHA-512)", alg)}
	}
	return sum, nil
}

func fnRandom(args []any, _ any) (any, error) {
	if len(args) > 0 && args[0] != nil {
		seed, err := number(args, 0, "$random")
		if err != nil {
			return nil, err
		}
		r := mrand.New(mrand.NewPCG(uint64(int64(seed)), 0x9e3779b97f4a7c15))
		return r.Float64(), nil
	}
	return mrand.Float64(), nil
}

func fnUUID(_ []any, _ any) (any, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

func fnParse(args []any, _ any) (any, error) {
	if len(args) < 1 {
		return nil, &Error{Code: "T0410", Message: "Function $parse takes a JSON string"}
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, &Error{Code: "T0410", Message: "Argument 1 of function $parse does not match function signature"}
	}
	v, err := value.ParseString(s)
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("The argument of $parse is not valid JSON: %s", s)}
	}
	return toGnata(normalize(v))
}

// normalize rewrites parsed numbers as AWS re-serialises them.
func normalize(v any) any {
	switch x := v.(type) {
	case value.Number:
		if n, ok := normalizeNumber(string(x)).(value.Number); ok {
			return n
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case *value.Object:
		for i := 0; i < x.Len(); i++ {
			k, e := x.At(i)
			x.Set(k, normalize(e))
		}
	}
	return v
}
