// Package jsonata evaluates JSONata 2.0 expressions as AWS Step Functions
// does, over stepd's JSON values. It is a thin adapter over
// github.com/recolabs/gnata and the only package in stepd that imports it.
//
// AWS's environment differs from plain JSONata: $eval is disabled, and
// $partition, $range, $hash, $random, $uuid and $parse are added.
// Values cross the boundary without a JSON round trip:
// objects keep their key order, numbers keep their text until arithmetic
// turns them into doubles, and results come back as stepd values with
// JSONata's "undefined" reported apart from null. Templates take their
// variables from a Vars, which may keep each variable's converted form in
// a Slot: a variable is then converted once while it holds the same value,
// not at every evaluation, and an object an expression returned keeps the
// form it came from (Keeper).
//
// The simplest expressions (variables and member paths on them, literals,
// arithmetic, comparisons, and/or, & and $string over scalars, object
// constructors of those) have a fast form that the adapter evaluates
// itself over stepd's values, without gnata and without converting
// anything (fast.go); whenever it meets a value it does not handle, and for
// every error or undefined result, the expression is evaluated by gnata.
//
// Fields of JSONata-mode states are Templates: JSON values in which every
// string "{% expression %}" is evaluated (ParseTemplate). Errors are *Error
// values carrying JSONata's error code; the Cause helpers build the
// expression-dependent text of AWS's States.QueryEvaluationError causes.
//
// It must not import interp or validate, which build on it, nor anything
// above them; like every pure package it reaches no I/O package
// (internal/layer).
package jsonata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/recolabs/gnata"
)

// expression is a compiled expression. It is safe for concurrent use.
type expression struct {
	src   string
	e     *gnata.Expression
	funcs []string // AWS's functions src names, bound for each evaluation
	// concat: the expression has & (rewritten to $&); str: it names
	// $string; distinct, match, split: it names $distinct, $match, $split.
	// Each is bound for each evaluation to the adapter's own, which
	// consult the evaluation's context (stringify.go, distinct.go,
	// match.go, split.go).
	concat, str, distinct, match, split bool
	// fast is the expression's fast form, nil if it has none (fast.go).
	fast *fnode
}

// Error is a JSONata compile or evaluation error.
type Error struct {
	// Code is JSONata's error code, such as "S0201" (syntax), "T2001"
	// (type) or "D3030" (dynamic); empty when the error has none.
	Code string
	// Token is the operator or function the error is about, when known.
	Token string
	// Message is jsonata-js's wording where the adapter knows it, gnata's
	// otherwise.
	Message string
}

// Error returns "CODE: message", the form AWS puts in causes.
func (e *Error) Error() string {
	if e.Code != "" {
		return e.Code + ": " + e.Message
	}
	return e.Message
}

// compile compiles an expression.
func compile(src string) (x *expression, err error) {
	defer func() {
		// gnata recovers evaluation panics but not parser ones.
		if p := recover(); p != nil {
			x, err = nil, &Error{Code: "S0201", Message: fmt.Sprintf("Syntax error: %v", p)}
		}
	}()
	if err := checkNesting(src); err != nil {
		return nil, err
	}
	e, err := gnata.Compile(src)
	if err != nil {
		return nil, wrapErr(err)
	}
	return &expression{src: src, e: e, funcs: usedFuncs(func(name string) bool { return mentions(src, name) }),
		concat: rewriteConcat(e), str: mentions(src, stringName), distinct: mentions(src, distinctName),
		match: gnataMatch.IsValid() && mentions(src, matchName), split: gnataSplit != nil && mentions(src, splitName),
		fast: parseFast(src)}, nil
}

// eval evaluates with an explicit input (hasInput false: undefined) in
// AWS's environment (aws) or plain JSONata's.
func (x *expression) eval(ctx context.Context, input any, hasInput bool, vars map[string]any, aws bool, o Options) (any, bool, error) {
	if x.fast != nil && ctx.Err() == nil {
		if v, ok := fastEval(x.fast, Map(vars)); ok {
			return v.toValue(), true, nil
		}
	}
	var c converter
	used := func(name string) bool { return mentions(x.src, name) }
	var gvars map[string]any
	if aws {
		gvars = make(map[string]any)
		c.bind(gvars, Map(vars), varNames(x.src), x.funcs, o)
	} else {
		gvars = make(map[string]any, len(vars))
		for k, v := range vars {
			if used(k) {
				gvars[k] = c.toGnata(v)
			}
		}
	}
	var data any
	if hasInput {
		data = c.toGnata(input)
	}
	defer c.release()
	return x.run(ctx, &c, data, gvars)
}

// boundFuncs is a serialiser with the adapter's functions bound to it,
// each made at its first use and kept: the serialisers are recycled
// (adapterFuncs), each serving one evaluation at a time with its context.
type boundFuncs struct {
	s                                   serialiser
	concat, str, distinct, match, split any
}

func (b *boundFuncs) get(f *any, mk func() any) any {
	if *f == nil {
		*f = mk()
	}
	return *f
}

var boundPool = sync.Pool{New: func() any { return new(boundFuncs) }}

// adapterFuncs returns the adapter's functions for this evaluation, bound
// to ctx.
func (c *converter) adapterFuncs(ctx context.Context) *boundFuncs {
	if c.funcs == nil {
		c.funcs = boundPool.Get().(*boundFuncs)
		c.funcs.s.ctx = ctx
	}
	return c.funcs
}

// release ends the evaluation: its serialiser goes back to the pool.
func (c *converter) release() {
	if c.funcs != nil {
		c.funcs.s.ctx = nil
		boundPool.Put(c.funcs)
		c.funcs = nil
	}
}

// run evaluates with gnata values and converts the result back.
func (x *expression) run(ctx context.Context, c *converter, data any, gvars map[string]any) (any, bool, error) {
	if x.concat || x.str || x.distinct || x.match || x.split {
		b := c.adapterFuncs(ctx)
		if x.concat {
			gvars[concatName] = b.get(&b.concat, func() any { return native(b.s.fnConcat) })
		}
		// A variable named like one of them hides the adapter's, as it
		// hides the builtin.
		if _, bound := gvars[stringName]; x.str && !bound {
			gvars[stringName] = b.get(&b.str, func() any { return native(b.s.fnString) })
		}
		if _, bound := gvars[distinctName]; x.distinct && !bound {
			gvars[distinctName] = b.get(&b.distinct, func() any { return native(b.s.fnDistinct) })
		}
		if _, bound := gvars[matchName]; x.match && !bound {
			gvars[matchName] = b.get(&b.match, b.s.matchFunc)
		}
		if _, bound := gvars[splitName]; x.split && !bound {
			gvars[splitName] = b.get(&b.split, func() any { return native(b.s.fnSplit) })
		}
	}
	r, err := x.e.EvalWithVars(ctx, data, gvars)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, false, fmt.Errorf("jsonata: evaluation stopped: %w", err)
		}
		return nil, false, wrapErr(err)
	}
	c.last = r
	return c.fromGnata(r)
}

// usedFuncs returns the names of AWS's functions that used reports, found
// once when an expression or template is compiled.
func usedFuncs(used func(name string) bool) []string {
	var out []string
	for _, k := range awsFuncNames {
		if used(k) {
			out = append(out, k)
		}
	}
	return out
}

// awsFuncNames lists the names in awsFuncs, sorted.
var awsFuncNames = slices.Sorted(maps.Keys(awsFuncs))

// mentions reports whether src contains "$"+name (without building that
// string).
func mentions(src, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return false
		}
		if i+j > 0 && src[i+j-1] == '$' {
			return true
		}
		i += j + 1
	}
}

// gnataBuiltin returns one of gnata's functions, as a sample of its native
// function type.
func gnataBuiltin(name string) (any, bool) {
	env := gnata.NewCustomEnv(map[string]gnata.CustomFunc{
		name: func([]any, any) (any, error) { return nil, nil },
	})
	return env.Lookup(name)
}

// wrapErr turns a gnata error into an *Error with jsonata-js's code and,
// where known, wording.
func wrapErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	e = &Error{Message: err.Error()}
	// Evaluation errors have exported Code, Token and Message fields.
	if code, token, msg, ok := jsonataFields(err); ok {
		e.Code, e.Token, e.Message = code, token, msg
	} else if rest, found := strings.CutPrefix(e.Message, "JSONata error "); found {
		// Compile errors read "JSONata error S0201 at token \"x\": text"
		// or "JSONata error S0101: text".
		code, rest, _ := strings.Cut(rest, ":")
		if c, tok, found := strings.Cut(code, " at token "); found {
			code = c
			if t, err := unquote(tok); err == nil {
				e.Token = t
			}
		}
		if isCode(code) {
			e.Code, e.Message = code, strings.TrimSpace(rest)
		}
	} else if c, rest, found := strings.Cut(e.Message, ": "); found && isCode(c) {
		e.Code, e.Message = c, rest
	}
	fixup(e)
	return e
}

func unquote(s string) (string, error) {
	var out string
	_, err := fmt.Sscanf(s, "%q", &out)
	return out, err
}

func isCode(s string) bool {
	if len(s) != 5 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// messages are jsonata-js's texts for codes whose text has no parameters
// the adapter cannot fill (AWS reports jsonata-js's wording).
var messages = map[string]string{
	"T1006": "Attempted to invoke a non-function",
	"S0101": "String literal must be terminated by a matching quote",
	"S0102": "Number out of range",
	"S0103": "Unsupported escape sequence",
	"S0104": "The escape sequence \\u must be followed by 4 hex digits",
	"S0211": "The symbol %% cannot be used as a unary operator",
	"S0217": "The object representing the 'parent' cannot be derived from this expression",
	"T1003": "Key in object structure must evaluate to a string",
	"T2003": "The left side of the range operator (..) must evaluate to an integer",
	"T2004": "The right side of the range operator (..) must evaluate to an integer",
	"D1001": "Number out of range",
	"D3030": "Unable to cast value to a number",
}

// fixup corrects the codes gnata assigns differently from jsonata-js and
// replaces gnata's wording with jsonata-js's where it is known.
func fixup(e *Error) {
	switch e.Code {
	case "T2001", "T2002":
		// jsonata-js: T2001 for the left operand, T2002 for the right;
		// gnata picks by whether the operand is null.
		side := ""
		switch {
		case strings.HasPrefix(e.Message, "the left operand"):
			e.Code, side = "T2001", "left"
		case strings.HasPrefix(e.Message, "the right operand"):
			e.Code, side = "T2002", "right"
		}
		if side != "" {
			op := between(e.Message, "the "+side+" operand of the ", " operator")
			if t, err := unquote(op); err == nil {
				op = t
			}
			if op != "" {
				e.Token = op
				e.Message = fmt.Sprintf("The %s side of the %s operator must evaluate to a number", side, op)
			}
		}
		return
	case "D3137":
		if strings.HasPrefix(e.Message, "$decodeUrl") {
			e.Code = "D3140" // a malformed URL, as jsonata-js reports it
		}
		return
	}
	if m, ok := messages[e.Code]; ok {
		e.Message = m
	}
}

// jsonataFields reads gnata's evaluation error type (an internal struct
// with exported Code, Token and Message fields) anywhere in err's chain.
func jsonataFields(err error) (code, token, msg string, ok bool) {
	for ; err != nil; err = errors.Unwrap(err) {
		rv := reflect.ValueOf(err)
		if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
			continue
		}
		s := rv.Elem()
		c, t, m := s.FieldByName("Code"), s.FieldByName("Token"), s.FieldByName("Message")
		if c.Kind() != reflect.String || m.Kind() != reflect.String {
			continue
		}
		if t.Kind() == reflect.String {
			token = t.String()
		}
		return c.String(), token, m.String(), true
	}
	return "", "", "", false
}

func between(s, prefix, suffix string) string {
	_, rest, ok := strings.Cut(s, prefix)
	if !ok {
		return ""
	}
	out, _, ok := strings.Cut(rest, suffix)
	if !ok {
		return ""
	}
	return out
}
