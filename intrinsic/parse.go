package intrinsic

import (
	"strings"

	"github.com/stepd/stepd/value"
)

// Parse parses an intrinsic function call.
func Parse(text string) (*Call, error) {
	p := &parser{src: text}
	p.space()
	c, err := p.call()
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

func (p *parser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) call() (*Call, error) {
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	name := p.src[start:p.pos]
	fn := functions[name]
	if fn == nil {
		p.pos = start
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
			a, err := p.arg()
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
	switch {
	case fn.max < 0:
		return strings.TrimSpace(fn.name + " needs at least " + itoa(fn.min) + " arguments, got " + itoa(n))
	case fn.min == fn.max:
		return fn.name + " needs exactly " + itoa(fn.min) + " arguments, got " + itoa(n)
	}
	return fn.name + " needs " + itoa(fn.min) + " to " + itoa(fn.max) + " arguments, got " + itoa(n)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) arg() (Arg, error) {
	switch c := p.peek(); {
	case c == '\'':
		start := p.pos + 1
		s, err := p.str()
		raw := ""
		if err == nil {
			raw = p.src[start : p.pos-1]
		}
		return Arg{Kind: ArgLiteral, Value: s, Raw: raw}, err
	case c == '$':
		start := p.pos
		depth := 0
		inQuote := byte(0)
		for p.pos < len(p.src) {
			ch := p.src[p.pos]
			if inQuote != 0 {
				if ch == inQuote {
					inQuote = 0
				}
				p.pos++
				continue
			}
			if ch == '\'' || ch == '"' {
				inQuote = ch
			} else if ch == '[' || ch == '(' {
				depth++
			} else if ch == ']' {
				depth--
			} else if ch == ')' {
				if depth == 0 {
					break
				}
				depth--
			} else if (ch == ',' || ch == ' ') && depth == 0 {
				break
			}
			p.pos++
		}
		return Arg{Kind: ArgPath, Path: p.src[start:p.pos]}, nil
	case c == '-' || c >= '0' && c <= '9':
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
	case strings.HasPrefix(p.src[p.pos:], "States."):
		c, err := p.call()
		return Arg{Kind: ArgCall, Call: c}, err
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(p.src[p.pos:], w.word) {
			p.pos += len(w.word)
			return Arg{Kind: ArgLiteral, Value: w.v}, nil
		}
	}
	return Arg{}, p.errf("expected an argument: a 'string', a number, a path or a call")
}

// str parses a single-quoted string literal.
func (p *parser) str() (string, error) {
	p.pos++ // '
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\'':
			p.pos++
			return b.String(), nil
		case '\\':
			if p.pos+1 < len(p.src) {
				b.WriteByte(p.src[p.pos+1])
				p.pos += 2
				continue
			}
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", p.errf("unterminated string literal")
}

func quote(s string) string { return "'" + s + "'" }

func itoa(i int) string {
	return value.String(value.Int(int64(i)))
}
