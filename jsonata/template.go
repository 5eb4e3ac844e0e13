package jsonata

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// IsExpression reports whether s is a JSONata expression string: it starts
// with "{%" and ends with "%}".
func IsExpression(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}")
}

// Template is a JSON value in which every string of the form
// "{% expression %}", at any depth, is a JSONata expression; everything else
// is literal. Fields of JSONata-mode states (Arguments, Output, Assign,
// Items, ...) are templates.
type Template struct {
	kind  tkind
	lit   any
	expr  *Expr
	keys  []string
	subs  []*Template
	whole string // the source of a whole-field expression
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
	if e.Undefined {
		return fmt.Sprintf("the JSONata expression '%s' returned nothing (undefined)", e.Expr)
	}
	return fmt.Sprintf("the JSONata expression '%s' failed: %v", e.Expr, e.Err)
}

// Message returns the JSONata error text ("T1006: Attempted to invoke a
// non-function").
func (e *TemplateError) Message() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *TemplateError) Unwrap() error { return e.Err }

// ParseTemplate compiles a template. Errors name the member that holds the
// bad expression.
func ParseTemplate(v any) (*Template, error) {
	return parseTemplate(v, "")
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
		if !IsExpression(x) {
			return &Template{kind: tLiteral, lit: x}, nil
		}
		src := strings.TrimSpace(x[2 : len(x)-2])
		e, err := Compile(src)
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

// Eval evaluates the template with the given variables. An expression that
// returns nothing is an error, as in AWS Step Functions.
func (t *Template) Eval(ctx context.Context, vars map[string]any) (any, error) {
	return t.eval(ctx, vars, "")
}

func (t *Template) eval(ctx context.Context, vars map[string]any, path string) (any, error) {
	switch t.kind {
	case tLiteral:
		return t.lit, nil
	case tExpr:
		v, ok, err := t.expr.Eval(ctx, nil, vars)
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
			v, err := s.eval(ctx, vars, join(path, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	o := value.NewObject(len(t.keys))
	for i, s := range t.subs {
		v, err := s.eval(ctx, vars, join(path, t.keys[i]))
		if err != nil {
			return nil, err
		}
		o.Set(t.keys[i], v)
	}
	return o, nil
}
