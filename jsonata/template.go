package jsonata

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// isExpression reports whether s is a JSONata expression string: it starts
// with "{%" and ends with "%}".
func isExpression(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}")
}

// Template is a JSON value in which every string of the form
// "{% expression %}", at any depth, is a JSONata expression; everything else
// is literal. Fields of JSONata-mode states (Arguments, Output, Assign,
// Items, ...) are templates.
type Template struct {
	kind  tkind
	lit   any
	expr  *expression
	keys  []string
	subs  []*Template
	whole string   // the source of a whole-field expression
	srcs  string   // the sources of all expressions, for Template.uses
	funcs []string // AWS's functions the expressions name
	names []string // the names after a $ in srcs (varNames)
	fast  bool     // every expression has a fast form (fast.go)
}

type tkind uint8

const (
	tLiteral tkind = iota
	tExpr
	tObject
	tArray
)

// TemplateError is a failure evaluating a template, located by the path of
// the member that failed (e.g. "FunctionName" or "a/0/b"; empty for the
// whole field).
type TemplateError struct {
	Path      string
	Expr      string // the expression's source, without the {% %}
	Undefined bool   // the expression returned nothing
	Err       error
}

func (e *TemplateError) Error() string {
	where := ""
	if e.Path != "" {
		where = " at " + e.Path
	}
	switch {
	case e.Undefined:
		return fmt.Sprintf("jsonata: the expression '%s'%s returned nothing (undefined)", e.Expr, where)
	case errors.Is(e.Err, errUnsupported):
		return fmt.Sprintf("jsonata: the expression '%s'%s returned an unsupported result type", e.Expr, where)
	}
	return fmt.Sprintf("jsonata: the expression '%s'%s failed: %v", e.Expr, where, e.Err)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// ParseTemplate compiles a template. Errors name the member that holds the
// bad expression.
func ParseTemplate(v any) (*Template, error) {
	t, err := parseTemplate(v, "")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	t.walk(func(x *Template) {
		b.WriteString(x.whole)
		b.WriteByte(0)
	})
	t.srcs = b.String()
	t.funcs = usedFuncs(t.uses)
	t.names = varNames(t.srcs)
	t.fast = true
	t.walk(func(x *Template) { t.fast = t.fast && x.expr.fast != nil })
	return t, nil
}

// walk calls fn for each expression of the template.
func (t *Template) walk(fn func(*Template)) {
	if t.kind == tExpr {
		fn(t)
	}
	for _, s := range t.subs {
		s.walk(fn)
	}
}

// Expressions returns the sources of the template's expressions, in
// document order.
func (t *Template) Expressions() []string {
	var out []string
	t.walk(func(x *Template) { out = append(out, x.whole) })
	return out
}

// SyntaxError is an expression that does not compile.
type SyntaxError struct {
	Path string
	Expr string
	Err  error
}

func (e *SyntaxError) Error() string {
	where := ""
	if e.Path != "" {
		where = " at " + e.Path
	}
	return fmt.Sprintf("invalid JSONata expression '%s'%s: %v", e.Expr, where, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

func parseTemplate(v any, path string) (*Template, error) {
	switch x := v.(type) {
	case string:
		if !isExpression(x) {
			return &Template{kind: tLiteral, lit: x}, nil
		}
		src := strings.TrimSpace(x[2 : len(x)-2])
		e, err := compile(src)
		if err != nil {
			return nil, &SyntaxError{Path: path, Expr: src, Err: err}
		}
		return &Template{kind: tExpr, expr: e, whole: src}, nil
	case *value.Object:
		t := &Template{kind: tObject}
		dynamic := false
		for k, e := range x.All {
			sub, err := parseTemplate(e, join(path, k))
			if err != nil {
				return nil, err
			}
			dynamic = dynamic || sub.kind != tLiteral
			t.keys = append(t.keys, k)
			t.subs = append(t.subs, sub)
		}
		if !dynamic {
			return &Template{kind: tLiteral, lit: v}, nil
		}
		return t, nil
	case []any:
		t := &Template{kind: tArray}
		dynamic := false
		for i, e := range x {
			sub, err := parseTemplate(e, join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			dynamic = dynamic || sub.kind != tLiteral
			t.subs = append(t.subs, sub)
		}
		if !dynamic {
			return &Template{kind: tLiteral, lit: v}, nil
		}
		return t, nil
	}
	return &Template{kind: tLiteral, lit: v}, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "/" + k
}

// Source returns the expression of a whole-field expression template, or
// the template's JSON text.
func (t *Template) Source() string {
	if t.kind == tExpr {
		return t.whole
	}
	return value.String(t.lit)
}

// EvalWith evaluates the template with the given variables (nil: none;
// Step Functions binds "states" and the workflow variables) and options
// (the source of random values). Expressions see no context value ($ is
// undefined). An expression that returns nothing is an error, as in AWS
// Step Functions, also inside an object or array.
func (t *Template) EvalWith(ctx context.Context, vars Vars, o Options) (any, error) {
	if t.kind == tLiteral {
		return t.lit, nil
	}
	if t.fast && ctx.Err() == nil {
		if v, ok := t.evalFast(vars); ok {
			return v, nil
		}
	}
	var c converter
	gvars := bindings.Get().(map[string]any)
	defer func() {
		clear(gvars)
		bindings.Put(gvars)
		c.release()
	}()
	c.bind(gvars, vars, t.names, t.funcs, o)
	v, err := t.eval(ctx, &c, gvars, "")
	if err == nil && t.kind == tExpr {
		c.keep(c.last, v)
	}
	return v, err
}

// evalFast evaluates a template whose expressions all have a fast form;
// ok is false when one of them gives up, and the template is then
// evaluated with gnata.
func (t *Template) evalFast(vars Vars) (any, bool) {
	switch t.kind {
	case tLiteral:
		return t.lit, true
	case tExpr:
		v, ok := fastEval(t.expr.fast, vars)
		if !ok {
			return nil, false
		}
		return v.toValue(), true
	case tArray:
		out := make([]any, len(t.subs))
		for i, s := range t.subs {
			v, ok := s.evalFast(vars)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	}
	o := value.NewObject(len(t.keys))
	for i, s := range t.subs {
		v, ok := s.evalFast(vars)
		if !ok {
			return nil, false
		}
		o.Set(t.keys[i], v)
	}
	return o, true
}

// uses reports whether an expression of the template may refer to the
// variable: variables are only reachable as $name.
func (t *Template) uses(name string) bool {
	return mentions(t.srcs, name)
}

func (t *Template) eval(ctx context.Context, c *converter, gvars map[string]any, path string) (any, error) {
	switch t.kind {
	case tLiteral:
		return t.lit, nil
	case tExpr:
		v, ok, err := t.expr.run(ctx, c, nil, gvars)
		if err != nil {
			return nil, &TemplateError{Path: path, Expr: t.whole, Err: err}
		}
		if !ok {
			return nil, &TemplateError{Path: path, Expr: t.whole, Undefined: true}
		}
		return v, nil
	case tArray:
		out := make([]any, len(t.subs))
		for i, s := range t.subs {
			v, err := s.eval(ctx, c, gvars, join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	o := value.NewObject(len(t.keys))
	for i, s := range t.subs {
		v, err := s.eval(ctx, c, gvars, join(path, t.keys[i]))
		if err != nil {
			return nil, err
		}
		o.Set(t.keys[i], v)
	}
	return o, nil
}
