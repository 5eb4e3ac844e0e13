package interp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/jsonpath"
	"github.com/stepd/stepd/value"
)

// A ref is a compiled JSONPath-mode reference: a path into the state input
// ($...), the Context object ($$...), or a workflow variable ($name...).
type ref struct {
	call     *intrinsic.Call // set when the field holds an intrinsic function
	text     string
	path     *jsonpath.Path
	context  bool
	variable string // non-empty for $name references
}

func compileRef(text string) (*ref, error) {
	r := &ref{text: text}
	if len(text) > 1 && text[0] == '$' && text[1] != '$' && text[1] != '.' && text[1] != '[' {
		// A variable: $name, $name.field, $name[0].
		end := 1
		for end < len(text) && text[end] != '.' && text[end] != '[' {
			end++
		}
		r.variable = text[1:end]
		text = "$" + text[end:]
	}
	p, err := jsonpath.Compile(text)
	if err != nil {
		return nil, err
	}
	r.path = p
	r.context = p.Context()
	return r, nil
}

// env is what a JSONPath-mode expression can see. The Context object is
// built on first use: most paths read only the input.
type env struct {
	input any
	vars  *scope
	rand  Rand
	// budget bounds what paths and functions produce
	budget Budget

	th      *thread // whose state's Context object $$ is
	item    *thread // a Map iteration whose $$.Map.Item $$ has (ItemSelector)
	context any     // $$, once built
}

// contextObject returns $$.
func (e *env) contextObject() any {
	if e.context == nil {
		if e.item != nil {
			e.context = e.item.contextObjectFor(e.th)
		} else {
			e.context = e.th.contextObject()
		}
	}
	return e.context
}

// Rand implements intrinsic.RandResolver: States.UUID and States.MathRandom
// draw from the execution's source.
func (e *env) Rand() intrinsic.Rand { return e.rand }

func (r *ref) get(e *env) (any, error) {
	if r.call != nil {
		v, err := r.call.Eval(e)
		if err != nil {
			return nil, err
		}
		return v, e.within(v, r.text)
	}
	root := e.input
	switch {
	case r.context:
		root = e.contextObject()
	case r.variable != "":
		v, ok := e.vars.lookup(r.variable)
		if !ok {
			return nil, &undefinedVariable{name: r.variable}
		}
		root = v
	}
	if r.path.Definite() {
		return r.path.Get(root) // a part of root, which is within bounds
	}
	v, err := r.path.GetWithin(root, e.budget.pathNodes())
	if err != nil {
		var le *jsonpath.LimitError
		if errors.As(err, &le) {
			return nil, &budgetError{msg: fmt.Sprintf("The JSONPath '%s' collected more than its budget of %s values.", r.text, thousands(int64(le.Limit)))}
		}
		return nil, err
	}
	return v, e.within(v, r.text)
}

// budgetError reports a JSONPath path or intrinsic function whose value
// exceeded the execution's Budget: the state fails with States.Runtime.
type budgetError struct{ msg string }

func (b *budgetError) Error() string { return b.msg }

// within checks the size of the value of a path or function (expr)
// against the budget.
func (e *env) within(v any, expr string) error {
	switch v.(type) {
	case []any, *value.Object, string:
	default:
		return nil
	}
	limit := e.budget.valueBytes()
	if value.EncodedLen(v, limit) > limit {
		return &budgetError{msg: fmt.Sprintf("The value of '%s' exceeded its budget of %s bytes.", expr, thousands(int64(limit)))}
	}
	return nil
}

// thousands formats n with commas: 10,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// budgetFailure is the States.Runtime failure of a path or function that
// exceeded the budget, or nil when err is something else.
func (s site) budgetFailure(err error) *Failure {
	var be *budgetError
	if !errors.As(err, &be) {
		return nil
	}
	return runtimeFailure(s.state, s.entered, "%s", be.msg)
}

type undefinedVariable struct{ name string }

func (u *undefinedVariable) Error() string {
	return fmt.Sprintf("Invalid path '$%s': The variable '$%s' is not defined", u.name, u.name)
}

// Resolve implements intrinsic.Resolver.
func (e *env) Resolve(path string) (any, error) {
	r, err := compileRef(path)
	if err != nil {
		return nil, err
	}
	return r.get(e)
}

// A payload is a compiled payload template (Parameters, ResultSelector,
// ItemSelector, Assign in JSONPath mode): a JSON value whose object members
// named "x.$" take their value from a path or an intrinsic function.
type payload struct {
	lit  any // for literal leaves
	kind payloadKind
	ref  *ref
	call *intrinsic.Call
	expr string // the source of ref or call
	keys []string
	subs []*payload
	// field is the "x.$" member name, for error messages.
	field string
}

type payloadKind uint8

const (
	plLiteral payloadKind = iota
	plObject
	plArray
	plPath
	plCall
)

func compilePayload(v any) (*payload, error) {
	switch x := v.(type) {
	case *value.Object:
		p := &payload{kind: plObject, keys: make([]string, 0, x.Len()), subs: make([]*payload, 0, x.Len())}
		dynamic := false
		for k, v := range x.All {
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				s, isStr := v.(string)
				if !isStr {
					return nil, fmt.Errorf("the value of %q must be a string holding a path or an intrinsic function", k)
				}
				sub := &payload{expr: s, field: k}
				if intrinsic.IsCall(s) {
					c, err := intrinsic.Parse(s)
					if err != nil {
						return nil, fmt.Errorf("field %q: %w", k, err)
					}
					sub.kind, sub.call = plCall, c
				} else {
					r, err := compileRef(s)
					if err != nil {
						return nil, fmt.Errorf("field %q: %w", k, err)
					}
					sub.kind, sub.ref = plPath, r
				}
				p.keys = append(p.keys, name)
				p.subs = append(p.subs, sub)
				dynamic = true
				continue
			}
			sub, err := compilePayload(v)
			if err != nil {
				return nil, err
			}
			if sub.kind != plLiteral {
				dynamic = true
			}
			p.keys = append(p.keys, k)
			p.subs = append(p.subs, sub)
		}
		if !dynamic {
			return &payload{kind: plLiteral, lit: v}, nil
		}
		return p, nil
	case []any:
		p := &payload{kind: plArray, subs: make([]*payload, len(x))}
		dynamic := false
		for i, e := range x {
			sub, err := compilePayload(e)
			if err != nil {
				return nil, err
			}
			if sub.kind != plLiteral {
				dynamic = true
			}
			p.subs[i] = sub
		}
		if !dynamic {
			return &payload{kind: plLiteral, lit: v}, nil
		}
		return p, nil
	}
	return &payload{kind: plLiteral, lit: v}, nil
}

// payloadError is a failure while evaluating a payload template.
type payloadError struct {
	field string
	expr  string
	err   error
	// intrinsic failures carry their own error name.
	name string
}

func (p *payloadError) Error() string { return p.err.Error() }

func (p *payloadError) Unwrap() error { return p.err }

func (p *payload) eval(e *env) (any, error) {
	switch p.kind {
	case plLiteral:
		return p.lit, nil
	case plPath:
		v, err := p.ref.get(e)
		if err != nil {
			return nil, &payloadError{field: p.field, expr: p.expr, err: err}
		}
		return v, nil
	case plCall:
		v, err := p.call.Eval(e)
		if err == nil {
			err = e.within(v, p.expr)
		}
		if err != nil {
			var be *budgetError
			if errors.As(err, &be) {
				return nil, be
			}
			return nil, &payloadError{field: p.field, expr: p.expr, err: err, name: ErrIntrinsicFailure}
		}
		return v, nil
	case plArray:
		out := make([]any, len(p.subs))
		for i, s := range p.subs {
			v, err := s.eval(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	o := value.NewObject(len(p.keys))
	for i, s := range p.subs {
		v, err := s.eval(e)
		if err != nil {
			return nil, err
		}
		o.Set(p.keys[i], v)
	}
	return o, nil
}
