package lsp

import (
	"strings"
	"unicode/utf8"

	"github.com/stepd/stepd/internal/yamlvalue"
)

// parseYAML builds the outline of a YAML text, or fails where the YAML
// does not parse.
func parseYAML(text string, l *lines) (*node, error) {
	y, err := yamlvalue.Outline([]byte(text))
	if err != nil {
		return nil, err
	}
	b := &yamlBuilder{text: text, l: l}
	return b.node(y, nil, false), nil
}

type yamlBuilder struct {
	text string
	l    *lines
}

// offset returns the byte offset of a 1-based line and column (in
// characters).
func (b *yamlBuilder) offset(line, col int) int {
	off := b.l.lineStartOf(line)
	for col > 1 && off < len(b.text) && b.text[off] != '\n' {
		_, size := utf8.DecodeRuneInString(b.text[off:])
		off += size
		col--
	}
	return off
}

func (b *yamlBuilder) node(y *yamlvalue.Node, parent *node, flow bool) *node {
	n := &node{kind: y.Kind, parent: parent, start: b.offset(y.Line, y.Column)}
	if y.HasKey {
		n.key, n.hasKey = y.Key, true
		n.keyStart = b.offset(y.KeyLine, y.KeyColumn)
		n.keyEnd = b.scalarEnd(n.keyStart, flow)
	}
	if y.Kind == 'o' || y.Kind == 'a' {
		inFlow := n.start < len(b.text) && (b.text[n.start] == '{' || b.text[n.start] == '[')
		n.end = n.start
		for i, c := range y.Children {
			cn := b.node(c, n, inFlow)
			cn.index = i
			n.children = append(n.children, cn)
			n.end = max(n.end, cn.end)
		}
		if inFlow {
			closer := byte('}')
			if b.text[n.start] == '[' {
				closer = ']'
			}
			if i := strings.IndexByte(b.text[max(n.end, n.start+1):], closer); i >= 0 {
				n.end = max(n.end, n.start+1) + i + 1
				n.closed = true
			}
		} else {
			n.closed = true
		}
		return n
	}
	n.str = y.Value
	n.quote = y.Style
	if y.Style == '|' || y.Style == '>' {
		n.quote = 0
		n.end = b.blockEnd(n.start)
		n.closed = true
		return n
	}
	n.end = b.scalarEnd(n.start, flow)
	n.closed = true
	if n.quote == 0 && y.Kind == 's' && n.end > n.start && b.text[n.start] == '!' {
		// a tagged scalar (!Sub "…"): the value follows the tag
		if sp := strings.IndexAny(b.text[n.start:n.end], " \t"); sp > 0 {
			n.start += sp + 1
			for n.start < n.end && b.text[n.start] == ' ' {
				n.start++
			}
			if n.start < n.end && (b.text[n.start] == '"' || b.text[n.start] == '\'') {
				n.quote = b.text[n.start]
				n.end = b.scalarEnd(n.start, flow)
			}
		}
	}
	return n
}

// scalarEnd returns the end of the scalar that starts at off.
func (b *yamlBuilder) scalarEnd(off int, flow bool) int {
	t := b.text
	if off >= len(t) {
		return off
	}
	switch q := t[off]; q {
	case '"', '\'':
		for i := off + 1; i < len(t); i++ {
			switch {
			case q == '"' && t[i] == '\\':
				i++
			case q == '\'' && t[i] == '\'' && i+1 < len(t) && t[i+1] == '\'':
				i++
			case t[i] == q:
				return i + 1
			}
		}
		return len(t)
	}
	end := off
	for end < len(t) && t[end] != '\n' {
		if t[end] == '#' && end > off && (t[end-1] == ' ' || t[end-1] == '\t') {
			break
		}
		if t[end] == ':' && (end+1 == len(t) || t[end+1] == ' ' || t[end+1] == '\n' || t[end+1] == '\r') {
			break // a key's end
		}
		if flow && (t[end] == ',' || t[end] == ']' || t[end] == '}') {
			break
		}
		end++
	}
	for end > off && (t[end-1] == ' ' || t[end-1] == '\t' || t[end-1] == '\r') {
		end--
	}
	return end
}

// blockEnd returns the end of a block scalar (| or >) whose indicator is
// at off: the end of its last line indented more than the line it
// starts on.
func (b *yamlBuilder) blockEnd(off int) int {
	t := b.text
	ls := b.l.lineStart(off)
	base := indent(t[ls:])
	end := strings.IndexByte(t[off:], '\n')
	if end < 0 {
		return len(t)
	}
	end += off
	for i := end + 1; i < len(t); {
		j := strings.IndexByte(t[i:], '\n')
		line := t[i:]
		if j >= 0 {
			line = t[i : i+j]
		}
		if strings.TrimSpace(line) != "" {
			if indent(line) <= base {
				break
			}
			end = i + len(strings.TrimRight(line, " \t\r"))
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return end
}

func indent(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}
