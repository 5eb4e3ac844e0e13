package jsonpath

import (
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// Compile parses a JSONPath.
func Compile(path string) (*Path, error) {
	c := compiler{src: path}
	p, err := c.path()
	if err != nil {
		return nil, err
	}
	return p, nil
}

// CompileReference parses a reference path: "$" followed by member names
// and indexes only.
func CompileReference(path string) (*Path, error) {
	p, err := Compile(path)
	if err != nil {
		return nil, err
	}
	for _, s := range p.segs {
		if s.kind != segName && s.kind != segIndex {
			return nil, &SyntaxError{Path: path, Msg: "a reference path may only contain member names and array indexes"}
		}
	}
	if p.context {
		return nil, &SyntaxError{Path: path, Msg: "a reference path cannot address the Context object"}
	}
	return p, nil
}

type compiler struct {
	src string
	pos int
}

func (c *compiler) errf(msg string) error {
	return &SyntaxError{Path: c.src, Offset: c.pos, Msg: msg}
}

func (c *compiler) peek() byte {
	if c.pos < len(c.src) {
		return c.src[c.pos]
	}
	return 0
}

func (c *compiler) path() (*Path, error) {
	p := &Path{text: c.src, definite: true}
	if c.peek() != '$' {
		return nil, c.errf("a path must start with '$'")
	}
	c.pos++
	if c.peek() == '$' {
		c.pos++
		p.context = true
	}
	segs, err := c.segments(false)
	if err != nil {
		return nil, err
	}
	p.segs = segs
	for _, s := range segs {
		if s.kind != segName && s.kind != segIndex {
			p.definite = false
		}
	}
	return p, nil
}

// segments parses segments until the end of input, or (inFilter) until a
// character that cannot continue a path.
func (c *compiler) segments(inFilter bool) ([]segment, error) {
	var segs []segment
	for c.pos < len(c.src) {
		switch c.peek() {
		case '.':
			c.pos++
			if c.peek() == '.' {
				c.pos++
				var sub segment
				if c.peek() == '[' {
					s, err := c.bracket()
					if err != nil {
						return nil, err
					}
					sub = s
				} else {
					s, err := c.dotName(inFilter)
					if err != nil {
						return nil, err
					}
					sub = s
				}
				segs = append(segs, segment{kind: segDescend, sub: &sub})
				continue
			}
			s, err := c.dotName(inFilter)
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		case '[':
			s, err := c.bracket()
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		default:
			if inFilter {
				return segs, nil
			}
			return nil, c.errf("unexpected character '" + string(c.peek()) + "'")
		}
	}
	return segs, nil
}

func (c *compiler) dotName(inFilter bool) (segment, error) {
	if c.peek() == '*' {
		c.pos++
		return segment{kind: segWildcard}, nil
	}
	start := c.pos
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		if ch == '.' || ch == '[' {
			break
		}
		if inFilter && strings.IndexByte(" )=!<>&|", ch) >= 0 {
			break
		}
		c.pos++
	}
	name := c.src[start:c.pos]
	if name == "" {
		return segment{}, c.errf("expected a member name")
	}
	if c.peek() == '(' || strings.HasSuffix(name, "()") {
		return segment{}, c.errf("functions are not supported")
	}
	return segment{kind: segName, name: name}, nil
}

func (c *compiler) skipSpace() {
	for c.pos < len(c.src) && c.src[c.pos] == ' ' {
		c.pos++
	}
}

func (c *compiler) bracket() (segment, error) {
	c.pos++ // [
	c.skipSpace()
	var s segment
	switch ch := c.peek(); {
	case ch == '*':
		c.pos++
		s = segment{kind: segWildcard}
	case ch == '\'' || ch == '"':
		var names []string
		for {
			c.skipSpace()
			name, err := c.quoted()
			if err != nil {
				return s, err
			}
			names = append(names, name)
			c.skipSpace()
			if c.peek() != ',' {
				break
			}
			c.pos++
		}
		if len(names) == 1 {
			s = segment{kind: segName, name: names[0]}
		} else {
			s = segment{kind: segUnionNames, names: names}
		}
	case ch == '?':
		c.pos++
		if c.peek() != '(' {
			return s, c.errf("expected '(' after '?'")
		}
		c.pos++
		e, err := c.orExpr()
		if err != nil {
			return s, err
		}
		c.skipSpace()
		if c.peek() != ')' {
			return s, c.errf("expected ')' to close the filter")
		}
		c.pos++
		s = segment{kind: segFilter, filter: e}
	case ch == '-' || ch == ':' || (ch >= '0' && ch <= '9'):
		var err error
		s, err = c.indexes()
		if err != nil {
			return s, err
		}
	default:
		return s, c.errf("unexpected character in brackets")
	}
	c.skipSpace()
	if c.peek() != ']' {
		return s, c.errf("expected ']'")
	}
	c.pos++
	return s, nil
}

func (c *compiler) integer() (*int, error) {
	start := c.pos
	if c.peek() == '-' {
		c.pos++
	}
	for c.pos < len(c.src) && c.src[c.pos] >= '0' && c.src[c.pos] <= '9' {
		c.pos++
	}
	if c.pos == start {
		return nil, nil
	}
	n, err := strconv.Atoi(c.src[start:c.pos])
	if err != nil {
		return nil, c.errf("invalid integer")
	}
	return &n, nil
}

func (c *compiler) indexes() (segment, error) {
	first, err := c.integer()
	if err != nil {
		return segment{}, err
	}
	c.skipSpace()
	if c.peek() == ':' {
		s := segment{kind: segSlice, start: first, step: 1}
		c.pos++
		c.skipSpace()
		if s.end, err = c.integer(); err != nil {
			return s, err
		}
		c.skipSpace()
		if c.peek() == ':' {
			c.pos++
			c.skipSpace()
			st, err := c.integer()
			if err != nil {
				return s, err
			}
			if st != nil {
				if *st == 0 {
					return s, c.errf("slice step cannot be zero")
				}
				s.step = *st
			}
		}
		return s, nil
	}
	if first == nil {
		return segment{}, c.errf("expected an index")
	}
	idx := []int{*first}
	for c.peek() == ',' {
		c.pos++
		c.skipSpace()
		n, err := c.integer()
		if err != nil {
			return segment{}, err
		}
		if n == nil {
			return segment{}, c.errf("expected an index")
		}
		idx = append(idx, *n)
		c.skipSpace()
	}
	if len(idx) == 1 {
		return segment{kind: segIndex, index: idx[0]}, nil
	}
	return segment{kind: segUnionIndexes, indexes: idx}, nil
}

func (c *compiler) quoted() (string, error) {
	q := c.peek()
	if q != '\'' && q != '"' {
		return "", c.errf("expected a quoted name")
	}
	c.pos++
	var b strings.Builder
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		switch {
		case ch == q:
			c.pos++
			return b.String(), nil
		case ch == '\\' && c.pos+1 < len(c.src):
			c.pos++
			switch e := c.src[c.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(e)
			}
			c.pos++
		default:
			b.WriteByte(ch)
			c.pos++
		}
	}
	return "", c.errf("unterminated quoted name")
}

// --- filter expressions ---

type expr interface {
	eval(cur, root any) any
}

// missing marks a path operand that matched nothing.
type missingT struct{}

var missing = missingT{}

type orExpr struct{ l, r expr }
type andExpr struct{ l, r expr }
type notExpr struct{ e expr }
type cmpExpr struct {
	op   string
	l, r expr
}
type litExpr struct{ v any }
type pathExpr struct {
	rel  bool // @ (else $)
	segs []segment
	def  bool
}

func (e orExpr) eval(cur, root any) any {
	return truthy(e.l.eval(cur, root)) || truthy(e.r.eval(cur, root))
}
func (e andExpr) eval(cur, root any) any {
	return truthy(e.l.eval(cur, root)) && truthy(e.r.eval(cur, root))
}
func (e notExpr) eval(cur, root any) any { return !truthy(e.e.eval(cur, root)) }
func (e litExpr) eval(cur, root any) any { return e.v }

func (e pathExpr) eval(cur, root any) any {
	start := root
	if e.rel {
		start = cur
	}
	nodes := []any{start}
	for i := range e.segs {
		nodes = e.segs[i].apply(nodes, root)
	}
	if e.def {
		if len(nodes) == 0 {
			return missing
		}
		return nodes[0]
	}
	if nodes == nil {
		return []any{}
	}
	return nodes
}

func (e cmpExpr) eval(cur, root any) any {
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
	case ">=":
		return c >= 0
	}
	return false
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case missingT:
		return false
	case nil:
		return false
	}
	return true
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
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(c.src[c.pos:], op) {
			c.pos += len(op)
			c.skipSpace()
			r, err := c.operand()
			if err != nil {
				return nil, err
			}
			return cmpExpr{op: op, l: l, r: r}, nil
		}
	}
	if strings.HasPrefix(c.src[c.pos:], "=~") {
		return nil, c.errf("regular expressions are not supported in filters")
	}
	return l, nil
}

func (c *compiler) operand() (expr, error) {
	c.skipSpace()
	switch ch := c.peek(); {
	case ch == '@' || ch == '$':
		c.pos++
		segs, err := c.segments(true)
		if err != nil {
			return nil, err
		}
		def := true
		for _, s := range segs {
			if s.kind != segName && s.kind != segIndex {
				def = false
			}
		}
		return pathExpr{rel: ch == '@', segs: segs, def: def}, nil
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
			return nil, c.errf("invalid number")
		}
		return litExpr{v}, nil
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(c.src[c.pos:], w.word) {
			c.pos += len(w.word)
			return litExpr{w.v}, nil
		}
	}
	return nil, c.errf("expected a value in the filter")
}
