package jsonata

import "strconv"

// parseFast returns the fast form of an expression that gnata compiled,
// or nil when the expression is not made only of the shapes the fast form
// handles (fast.go). It refuses anything it is unsure of: comments,
// escapes in strings, quoted names, any operator or function beyond its
// own, names that are not plain identifiers.
func parseFast(src string) *fnode {
	p := fparser{src: src}
	p.advance()
	n := p.expr(0)
	if p.bad || p.tok.kind != ftEOF {
		return nil
	}
	return n
}

// ftkind is the kind of a token of the fast parser.
type ftkind uint8

const (
	ftEOF  ftkind = iota
	ftBad         // anything the fast form does not handle
	ftNum         // a number literal: num
	ftStr         // a string literal: text
	ftVar         // $name: text is the name
	ftName        // a bare name: text
	ftOp          // an operator or punctuation: op (l for <=, g for >=, ! for !=)
)

type ftoken struct {
	kind ftkind
	text string
	num  float64
	op   byte
}

// fparser is a precedence-climbing parser over the fast shapes, with
// jsonata-js's binding powers.
type fparser struct {
	src string
	pos int
	tok ftoken
	bad bool
}

// advance reads the next token into p.tok.
func (p *fparser) advance() {
	p.tok = p.lex()
	if p.tok.kind == ftBad {
		p.bad = true
	}
}

func (p *fparser) lex() ftoken {
	s := p.src
	for p.pos < len(s) && isSpace(s[p.pos]) {
		p.pos++
	}
	if p.pos >= len(s) {
		return ftoken{kind: ftEOF}
	}
	c := s[p.pos]
	switch {
	case c >= '0' && c <= '9':
		return p.lexNumber()
	case c == '\'' || c == '"':
		for j := p.pos + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				return ftoken{kind: ftBad}
			case c:
				t := ftoken{kind: ftStr, text: s[p.pos+1 : j]}
				p.pos = j + 1
				return t
			}
		}
		return ftoken{kind: ftBad}
	case c == '$':
		name := p.name(p.pos + 1)
		if !isIdent(name) {
			return ftoken{kind: ftBad}
		}
		return ftoken{kind: ftVar, text: name}
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		name := p.name(p.pos)
		if !identChars(name) {
			return ftoken{kind: ftBad}
		}
		return ftoken{kind: ftName, text: name}
	}
	p.pos++
	if p.pos < len(s) && s[p.pos] == '=' {
		switch c {
		case '<':
			p.pos++
			return ftoken{kind: ftOp, op: 'l'}
		case '>':
			p.pos++
			return ftoken{kind: ftOp, op: 'g'}
		case '!':
			p.pos++
			return ftoken{kind: ftOp, op: '!'}
		}
	}
	switch c {
	case '/':
		if p.pos < len(s) && s[p.pos] == '*' {
			return ftoken{kind: ftBad} // a comment
		}
		return ftoken{kind: ftOp, op: c}
	case '+', '-', '*', '%', '&', '<', '>', '=', '(', ')', '{', '}', ':', ',', '.':
		return ftoken{kind: ftOp, op: c}
	}
	return ftoken{kind: ftBad}
}

// name reads a name from i to where gnata's lexer ends it and moves past
// it.
func (p *fparser) name(i int) string {
	j := i
	for j < len(p.src) && !endsVarName(p.src[j]) && p.src[j] != '"' && p.src[j] != '\'' && p.src[j] != '`' {
		j++
	}
	p.pos = j
	return p.src[i:j]
}

// lexNumber reads JSONata's number literal: (0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *fparser) lexNumber() ftoken {
	s, i := p.src, p.pos
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if s[i] == '0' {
		i++
	} else {
		digits()
	}
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i++
		digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			i = j
		}
	}
	text := s[p.pos:i]
	p.pos = i
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || !finite(f) {
		return ftoken{kind: ftBad}
	}
	if i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		return ftoken{kind: ftBad} // 01, 1.x, 1..2: not for the fast form
	}
	return ftoken{kind: ftNum, num: f}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isIdent reports whether s is a plain identifier and no keyword.
func isIdent(s string) bool {
	switch s {
	case "and", "or", "in", "true", "false", "null", "function":
		return false
	}
	return identChars(s)
}

// identChars reports whether s is made of a letter or _ then letters,
// digits or _.
func identChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// lbp is the binding power of the binary operator op (0: none).
func lbp(op byte) int {
	switch op {
	case '*', '/', '%':
		return 60
	case '+', '-', '&':
		return 50
	case '=', '!', '<', 'l', '>', 'g':
		return 40
	case 'a': // and
		return 30
	case 'o': // or
		return 25
	}
	return 0
}

// binop returns the operator of the current token, if it is a binary one.
func (p *fparser) binop() byte {
	switch p.tok.kind {
	case ftOp:
		return p.tok.op
	case ftName:
		switch p.tok.text {
		case "and":
			return 'a'
		case "or":
			return 'o'
		}
	}
	return 0
}

// expr parses an expression whose operators bind more tightly than rbp.
func (p *fparser) expr(rbp int) *fnode {
	left := p.operand()
	for !p.bad {
		op := p.binop()
		bp := lbp(op)
		if bp <= rbp {
			break
		}
		p.advance()
		right := p.expr(bp)
		if p.bad {
			return nil
		}
		n := &fnode{tok: op, l: left, r: right}
		switch op {
		case '+', '-', '*', '/', '%':
			n.op = fArith
		case '&':
			n.op = fConcat
		case '<', 'l', '>', 'g':
			n.op = fCmp
		case '=', '!':
			n.op = fEq
		case 'a':
			n.op = fAnd
		case 'o':
			n.op = fOr
		}
		left = n
	}
	if p.bad {
		return nil
	}
	return left
}

// operand parses what may stand where an operand is expected.
func (p *fparser) operand() *fnode {
	t := p.tok
	p.advance()
	switch t.kind {
	case ftNum:
		return &fnode{op: fLit, lit: fval{kind: kNum, f: t.num}}
	case ftStr:
		return &fnode{op: fLit, lit: fval{kind: kStr, s: t.text}}
	case ftName:
		switch t.text {
		case "true", "false":
			return &fnode{op: fLit, lit: fval{kind: kBool, b: t.text == "true"}}
		case "null":
			return &fnode{op: fLit, lit: fval{kind: kNull}}
		}
	case ftVar:
		return p.variable(t.text)
	case ftOp:
		switch t.op {
		case '-':
			x := p.expr(70)
			return &fnode{op: fNeg, l: x}
		case '(':
			x := p.expr(0)
			p.expect(')')
			return x
		case '{':
			return p.object()
		}
	}
	p.bad = true
	return nil
}

func (p *fparser) expect(op byte) {
	if p.tok.kind != ftOp || p.tok.op != op {
		p.bad = true
		return
	}
	p.advance()
}

// variable parses $name, $name.member..., or $string(x).
func (p *fparser) variable(name string) *fnode {
	if p.tok.kind == ftOp && p.tok.op == '(' {
		if name != stringName {
			p.bad = true
			return nil
		}
		p.advance()
		x := p.expr(0)
		p.expect(')')
		return &fnode{op: fString, l: x}
	}
	if _, isFunc := awsFuncs[name]; isFunc {
		p.bad = true // bound to AWS's function, whatever the variables
		return nil
	}
	n := &fnode{op: fVar, name: name}
	for p.tok.kind == ftOp && p.tok.op == '.' {
		p.advance()
		if p.tok.kind != ftName || !isIdent(p.tok.text) {
			p.bad = true
			return nil
		}
		n.path = append(n.path, p.tok.text)
		p.advance()
	}
	return n
}

// object parses an object constructor after its {.
func (p *fparser) object() *fnode {
	n := &fnode{op: fObject}
	if p.tok.kind == ftOp && p.tok.op == '}' {
		p.advance()
		return n
	}
	for !p.bad {
		if p.tok.kind != ftStr {
			p.bad = true
			return nil
		}
		k := p.tok.text
		for _, seen := range n.keys {
			if seen == k {
				p.bad = true // JSONata's error D1009, from gnata
				return nil
			}
		}
		p.advance()
		p.expect(':')
		v := p.expr(0)
		if p.bad {
			return nil
		}
		n.keys = append(n.keys, k)
		n.vals = append(n.vals, v)
		if p.tok.kind == ftOp && p.tok.op == ',' {
			p.advance()
			continue
		}
		p.expect('}')
		break
	}
	return n
}
