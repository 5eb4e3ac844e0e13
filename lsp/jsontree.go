package lsp

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting the outline follows; deeper values are
// skipped as text.
const maxDepth = 1000

// parseJSON builds the outline of a JSON text. It never fails: a
// document being typed (a missing comma, quote or bracket) still gets
// the nodes read up to the problem and after it where they can be found.
func parseJSON(text string) *node {
	p := &jsonParser{s: text}
	p.ws()
	root := &node{start: p.i}
	if p.i < len(p.s) {
		root = p.value(0)
	} else {
		root.end = p.i
	}
	return root
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) *node {
	n := &node{start: p.i}
	if p.i >= len(p.s) {
		n.end = p.i
		return n
	}
	switch c := p.s[p.i]; {
	case c == '{' && depth < maxDepth:
		p.object(n, depth)
	case c == '[' && depth < maxDepth:
		p.array(n, depth)
	case c == '"':
		n.kind, n.quote = 's', '"'
		n.str, n.closed = p.str()
	case c == '}' || c == ']' || c == ',' || c == ':':
		n.end = p.i // a value is missing here
		return n
	default:
		n.kind = 'n'
		for p.i < len(p.s) && !isDelim(p.s[p.i]) {
			p.i++
		}
		if p.i == n.start {
			p.i++ // never stand still
		}
		n.str = p.s[n.start:p.i]
	}
	n.end = p.i
	return n
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

func (p *jsonParser) object(n *node, depth int) {
	n.kind = 'o'
	p.i++
	for {
		p.ws()
		if p.i >= len(p.s) {
			return
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			n.closed = true
			return
		case ',':
			p.i++
			continue
		case ']':
			return // a bracket out of place: the object ends here
		}
		m := &node{parent: n, hasKey: true, keyStart: p.i}
		if p.s[p.i] == '"' {
			m.key, _ = p.str()
		} else {
			for p.i < len(p.s) && !isDelim(p.s[p.i]) {
				p.i++
			}
			if p.i == m.keyStart {
				p.i++
			}
			m.key = p.s[m.keyStart:p.i]
		}
		m.keyEnd = p.i
		n.children = append(n.children, m)
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			m.start, m.end = p.i, p.i
			continue
		}
		p.i++
		p.ws()
		v := p.value(depth + 1)
		v.parent, v.hasKey, v.key, v.keyStart, v.keyEnd = n, true, m.key, m.keyStart, m.keyEnd
		n.children[len(n.children)-1] = v
	}
}

func (p *jsonParser) array(n *node, depth int) {
	n.kind = 'a'
	p.i++
	for {
		p.ws()
		if p.i >= len(p.s) {
			return
		}
		switch p.s[p.i] {
		case ']':
			p.i++
			n.closed = true
			return
		case ',':
			p.i++
			continue
		case '}', ':':
			return
		}
		v := p.value(depth + 1)
		v.parent, v.index = n, len(n.children)
		n.children = append(n.children, v)
	}
}

// str reads a string at p.i (on its quote) and decodes it; an
// unterminated string ends at the end of its line.
func (p *jsonParser) str() (string, bool) {
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), true
		case c == '\n':
			return string(b), false
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'u':
				r := p.hex()
				if utf16.IsSurrogate(r) && p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if r2 := p.hex(); utf16.DecodeRune(r, r2) != utf8.RuneError {
						r = utf16.DecodeRune(r, r2)
					} else {
						p.i = save
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				b = append(b, e)
			}
		default:
			b = append(b, c)
			p.i++
		}
	}
	return string(b), false
}

func (p *jsonParser) hex() rune {
	if p.i+4 > len(p.s) {
		p.i = len(p.s)
		return utf8.RuneError
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	p.i += 4
	return rune(v)
}
