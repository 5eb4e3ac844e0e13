package intrinsic

import (
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// maxDepth is how deeply calls may nest in one field: AWS allows up to 10
// nested intrinsic functions.
const maxDepth = 10

// Parse parses an intrinsic function call such as
//
//	States.Format('Hello {} from {}', $.name, $$.Execution.Id)
//
// Unknown function names, a wrong number of arguments and malformed text
// are reported as *SyntaxError. A string literal with an escape other than
// \' \{ \} \\ parses: validation refuses the definition (Call.EscapeError),
// and the call fails if it runs anyway.
func Parse(text string) (*Call, error) {
	p := &parser{src: text}
	p.space()
	c, err := p.call(1)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errf("unexpected text after the call")
	}
	return c, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errf(msg string) error {
	return &SyntaxError{Text: p.src, Offset: p.pos, Msg: msg}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *parser) space() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) call(depth int) (*Call, error) {
	start := p.pos
	if depth > maxDepth {
		return nil, p.errf("intrinsic functions nest more than " + strconv.Itoa(maxDepth) + " levels deep")
	}
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	name := p.src[start:p.pos]
	fn := functions[name]
	if fn == nil {
		p.pos = start
		if name == "" {
			return nil, p.errf("expected an intrinsic function name")
		}
		return nil, p.errf("unknown intrinsic function " + quote(name))
	}
	p.space()
	if p.peek() != '(' {
		return nil, p.errf("expected '(' after " + name)
	}
	p.pos++
	c := &Call{Name: name, fn: fn}
	p.space()
	if p.peek() == ')' {
		p.pos++
	} else {
		for {
			p.space()
			a, err := p.arg(depth)
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, a)
			p.space()
			if p.peek() == ',' {
				p.pos++
				continue
			}
			if p.peek() == ')' {
				p.pos++
				break
			}
			if p.pos == len(p.src) {
				return nil, p.errf("missing ')' at the end of " + name)
			}
			return nil, p.errf("expected ',' or ')'")
		}
	}
	c.text = p.src[start:p.pos]
	if n := len(c.Args); n < fn.min || (fn.max >= 0 && n > fn.max) {
		return nil, &SyntaxError{Text: p.src, Offset: start, Msg: arityMessage(fn, n)}
	}
	return c, nil
}

func arityMessage(fn *function, n int) string {
	plural := func(k int) string {
		if k == 1 {
			return strconv.Itoa(k) + " argument"
		}
		return strconv.Itoa(k) + " arguments"
	}
	switch {
	case fn.max < 0:
		return fn.name + " takes at least " + plural(fn.min) + ", got " + strconv.Itoa(n)
	case fn.min == fn.max:
		return fn.name + " takes exactly " + plural(fn.min) + ", got " + strconv.Itoa(n)
	}
	return fn.name + " takes " + strconv.Itoa(fn.min) + " to " + plural(fn.max) + ", got " + strconv.Itoa(n)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// atWord reports whether the input continues with the keyword w as a whole
// word.
func (p *parser) atWord(w string) bool {
	if !strings.HasPrefix(p.src[p.pos:], w) {
		return false
	}
	end := p.pos + len(w)
	return end == len(p.src) || !isIdent(p.src[end]) && p.src[end] != '.'
}

func (p *parser) arg(depth int) (Arg, error) {
	switch c := p.peek(); {
	case c == '\'':
		return p.str()
	case c == '$':
		return p.path()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case strings.HasPrefix(p.src[p.pos:], "States."):
		c, err := p.call(depth + 1)
		return Arg{Kind: ArgCall, Call: c}, err
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if p.atWord(w.word) {
			p.pos += len(w.word)
			return Arg{Kind: ArgLiteral, Value: w.v}, nil
		}
	}
	if p.pos == len(p.src) {
		return Arg{}, p.errf("unexpected end of text: expected an argument")
	}
	return Arg{}, p.errf("expected an argument: a 'string', a number, true, false, null, a path or a call")
}

// path scans a path or variable reference: it runs up to the ',' or ')'
// that ends the argument, or to white space, outside brackets, parentheses
// and quotes.
func (p *parser) path() (Arg, error) {
	start := p.pos
	var open []byte // unclosed '[' and '('
	var quote byte
scan:
	for ; p.pos < len(p.src); p.pos++ {
		ch := p.src[p.pos]
		if quote != 0 {
			switch ch {
			case '\\':
				p.pos++
			case quote:
				quote = 0
			}
			continue
		}
		switch {
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '[' || ch == '(':
			open = append(open, ch)
		case ch == ']' || ch == ')':
			if len(open) == 0 {
				if ch == ')' {
					break scan
				}
				return Arg{}, p.errf("unbalanced ']' in path")
			}
			want := byte('[')
			if ch == ')' {
				want = '('
			}
			if open[len(open)-1] != want {
				p.pos = start
				return Arg{}, p.errf("unterminated path: unbalanced brackets")
			}
			open = open[:len(open)-1]
		case len(open) == 0 && (ch == ',' || isSpace(ch)):
			break scan
		}
	}
	if quote != 0 || len(open) != 0 {
		p.pos = start
		return Arg{}, p.errf("unterminated path: unbalanced brackets or quotes")
	}
	return Arg{Kind: ArgPath, Path: p.src[start:p.pos]}, nil
}

func (p *parser) number() (Arg, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) && strings.IndexByte("0123456789.eE+-", p.src[p.pos]) >= 0 {
		p.pos++
	}
	v, err := value.ParseString(p.src[start:p.pos])
	if err != nil {
		p.pos = start
		return Arg{}, p.errf("invalid number")
	}
	return Arg{Kind: ArgLiteral, Value: v}, nil
}

// str parses a single-quoted string literal. Only \' \{ \} and \\ are
// escapes; any other backslash is an invalid escape, recorded in the
// argument (Call.EscapeError) rather than failing the parse.
func (p *parser) str() (Arg, error) {
	open := p.pos
	p.pos++ // '
	start := p.pos
	var b strings.Builder
	bad := ""
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\'':
			a := Arg{Kind: ArgLiteral, Value: b.String(), Raw: p.src[start:p.pos]}
			p.pos++
			if bad != "" {
				a.err = failf("The string literal '%s' contains the invalid escape sequence '%s': only \\', \\{, \\} and \\\\ may follow a backslash", a.Raw, bad)
			}
			return a, nil
		case '\\':
			if p.pos+1 < len(p.src) {
				next := p.src[p.pos+1]
				if strings.IndexByte(`'{}\`, next) < 0 && bad == "" {
					bad = p.src[p.pos : p.pos+2]
				}
				b.WriteByte(next)
				p.pos += 2
				continue
			}
		}
		b.WriteByte(c)
		p.pos++
	}
	p.pos = open
	return Arg{}, p.errf("unterminated string literal")
}

func quote(s string) string { return "'" + s + "'" }
