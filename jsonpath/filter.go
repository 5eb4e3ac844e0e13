package jsonpath

import (
	"strings"

	"github.com/stepd/stepd/value"
)

// expr is a filter expression.
type expr interface {
	// eval returns the expression's value, or missing.
	eval(cur, root any) any
	// test returns the expression as a condition.
	test(cur, root any) bool
}

// missingT marks a path operand that matched nothing.
type missingT struct{}

var missing any = missingT{}

type orExpr struct{ l, r expr }
type andExpr struct{ l, r expr }
type notExpr struct{ e expr }
type cmpExpr struct {
	op   string
	l, r expr
}
type litExpr struct{ v any }
type pathExpr struct {
	rel      bool // @ (else $)
	segs     []segment
	definite bool
	function bool
}

func (e orExpr) eval(cur, root any) any   { return e.test(cur, root) }
func (e andExpr) eval(cur, root any) any  { return e.test(cur, root) }
func (e notExpr) eval(cur, root any) any  { return e.test(cur, root) }
func (e cmpExpr) eval(cur, root any) any  { return e.test(cur, root) }
func (e litExpr) eval(_, _ any) any       { return e.v }
func (e orExpr) test(cur, root any) bool  { return e.l.test(cur, root) || e.r.test(cur, root) }
func (e andExpr) test(cur, root any) bool { return e.l.test(cur, root) && e.r.test(cur, root) }
func (e notExpr) test(cur, root any) bool { return !e.e.test(cur, root) }

func (e litExpr) test(_, _ any) bool {
	switch x := e.v.(type) {
	case bool:
		return x
	case nil:
		return false
	}
	return true
}

// eval evaluates the path: a definite path yields its value or missing, an
// indefinite one a []any of its matches.
func (e pathExpr) eval(cur, root any) any {
	if e.function {
		return missing
	}
	start := root
	if e.rel {
		// The AWS developer guide: "The @ operator ... does not match scalar
		// values. It only matches objects."
		switch cur.(type) {
		case *value.Object, []any:
		default:
			return missing
		}
		start = cur
	}
	if e.definite {
		v := start
		for i := range e.segs {
			s := &e.segs[i]
			switch s.kind {
			case segName:
				o, ok := v.(*value.Object)
				if !ok {
					return missing
				}
				if v, ok = o.Get(s.name); !ok {
					return missing
				}
			case segIndex:
				a, ok := v.([]any)
				if !ok {
					return missing
				}
				j := normIndex(s.index, len(a))
				if j < 0 {
					return missing
				}
				v = a[j]
			default:
				o, ok := v.(*value.Object)
				if !ok {
					return missing
				}
				v = merge(o, s.names)
			}
		}
		return v
	}
	nodes := []any{start}
	for i := range e.segs {
		var next []any
		for _, n := range nodes {
			next = e.segs[i].match(next, n, root)
		}
		nodes = next
	}
	if nodes == nil {
		return []any{}
	}
	return nodes
}

// test is Jayway's existence check: the path matches something (even null
// or false).
func (e pathExpr) test(cur, root any) bool {
	v := e.eval(cur, root)
	if v == missing {
		return false
	}
	if a, ok := v.([]any); ok && !e.definite {
		return len(a) > 0
	}
	return true
}

func (e cmpExpr) test(cur, root any) bool {
	a, b := e.l.eval(cur, root), e.r.eval(cur, root)
	if a == missing || b == missing {
		return e.op == "!="
	}
	switch e.op {
	case "==":
		return value.Equal(a, b)
	case "!=":
		return !value.Equal(a, b)
	}
	var c int
	switch x := a.(type) {
	case value.Number:
		y, ok := b.(value.Number)
		if !ok {
			return false
		}
		fx, fy := x.Float64(), y.Float64()
		switch {
		case fx < fy:
			c = -1
		case fx > fy:
			c = 1
		}
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		c = strings.Compare(x, y)
	default:
		return false
	}
	switch e.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0 // ">="
}

func (c *compiler) orExpr() (expr, error) {
	l, err := c.andExpr()
	if err != nil {
		return nil, err
	}
	for {
		c.skipSpace()
		if !strings.HasPrefix(c.src[c.pos:], "||") {
			return l, nil
		}
		c.pos += 2
		r, err := c.andExpr()
		if err != nil {
			return nil, err
		}
		l = orExpr{l, r}
	}
}

func (c *compiler) andExpr() (expr, error) {
	l, err := c.unary()
	if err != nil {
		return nil, err
	}
	for {
		c.skipSpace()
		if !strings.HasPrefix(c.src[c.pos:], "&&") {
			return l, nil
		}
		c.pos += 2
		r, err := c.unary()
		if err != nil {
			return nil, err
		}
		l = andExpr{l, r}
	}
}

var cmpOps = [...]string{"==", "!=", "<=", ">=", "<", ">"}

func (c *compiler) unary() (expr, error) {
	c.skipSpace()
	if c.peek() == '!' && !strings.HasPrefix(c.src[c.pos:], "!=") {
		c.pos++
		e, err := c.unary()
		if err != nil {
			return nil, err
		}
		return notExpr{e}, nil
	}
	if c.peek() == '(' {
		c.pos++
		e, err := c.orExpr()
		if err != nil {
			return nil, err
		}
		c.skipSpace()
		if c.peek() != ')' {
			return nil, c.errf("expected ')'")
		}
		c.pos++
		return e, nil
	}
	l, err := c.operand()
	if err != nil {
		return nil, err
	}
	c.skipSpace()
	rest := c.src[c.pos:]
	if strings.HasPrefix(rest, "=~") {
		return nil, c.errf("regular expressions are not supported in filters")
	}
	for _, op := range cmpOps {
		if strings.HasPrefix(rest, op) {
			c.pos += len(op)
			c.skipSpace()
			r, err := c.operand()
			if err != nil {
				return nil, err
			}
			return cmpExpr{op: op, l: l, r: r}, nil
		}
	}
	if isWordStart(c.peek()) {
		start := c.pos
		for c.pos < len(c.src) && isWordStart(c.src[c.pos]) {
			c.pos++
		}
		word := c.src[start:c.pos]
		c.pos = start
		return nil, c.errf("the filter operator '%s' is not supported", word)
	}
	return l, nil
}

func isWordStart(ch byte) bool { return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' }

func (c *compiler) operand() (expr, error) {
	c.skipSpace()
	switch ch := c.peek(); {
	case ch == '@' || ch == '$':
		c.pos++
		segs, err := c.segments(true)
		if err != nil {
			return nil, err
		}
		e := pathExpr{rel: ch == '@', segs: segs, definite: true}
		for i := range segs {
			switch segs[i].kind {
			case segName, segIndex:
			case segNames:
				if !segs[i].leaf {
					e.definite = false
				}
			case segFunction:
				e.function = true
			default:
				e.definite = false
			}
		}
		return e, nil
	case ch == '\'' || ch == '"':
		s, err := c.quoted()
		if err != nil {
			return nil, err
		}
		return litExpr{s}, nil
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := c.pos
		c.pos++
		for c.pos < len(c.src) && strings.IndexByte("0123456789.eE+-", c.src[c.pos]) >= 0 {
			c.pos++
		}
		v, err := value.ParseString(c.src[start:c.pos])
		if err != nil {
			c.pos = start
			return nil, c.errf("invalid number in filter")
		}
		return litExpr{v}, nil
	}
	for _, w := range [...]struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(c.src[c.pos:], w.word) {
			end := c.pos + len(w.word)
			if end < len(c.src) && isWordStart(c.src[end]) {
				break
			}
			c.pos = end
			return litExpr{w.v}, nil
		}
	}
	if c.pos >= len(c.src) {
		return nil, c.errf("unterminated filter")
	}
	return nil, c.errf("expected a value in the filter")
}
