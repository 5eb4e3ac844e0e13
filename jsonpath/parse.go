package jsonpath

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is a path that does not compile.
type SyntaxError struct {
	Path   string // the path as written
	Offset int    // byte offset of the problem in Path
	Msg    string // what is wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSONPath '%s' at offset %d: %s", e.Path, e.Offset, e.Msg)
}

// blanks are what Jayway's path compiler, which AWS runs, ignores around
// a path: "$$.Execution.Name " is "$$.Execution.Name".
const blanks = " \t\n\r"

// Compile parses a JSONPath starting with "$" or "$$". Blanks around it
// are ignored, as AWS (Jayway) ignores them; offsets in errors and
// segments count from the start of path as written.
func Compile(path string) (*Path, error) {
	lead := len(path) - len(strings.TrimLeft(path, blanks))
	c := compiler{src: strings.TrimRight(path, blanks), pos: lead, text: path}
	if lead == len(path) {
		c.src = path
	}
	if c.peek() != '$' {
		return nil, c.errf("a path must start with '$'")
	}
	c.pos++
	p := &Path{text: path}
	if c.peek() == '$' {
		c.pos++
		p.context = true
	}
	segs, err := c.segments(false)
	if err != nil {
		return nil, err
	}
	p.segs = segs
	p.definite = true
	for i := range segs {
		switch segs[i].kind {
		case segName, segIndex, segNames:
		case segFunction:
			p.function = true
		default:
			p.definite = false
		}
	}
	return p, nil
}

// CompileReference parses a reference path: "$" followed by member names and
// single array indexes only, as AWS requires for ResultPath. It rejects
// Context object paths ("$$").
func CompileReference(path string) (*Path, error) {
	p, err := Compile(path)
	if err != nil {
		return nil, err
	}
	if p.context {
		return nil, &SyntaxError{Path: path, Offset: 0, Msg: "a reference path cannot address the Context object ($$)"}
	}
	for i := range p.segs {
		s := &p.segs[i]
		if s.kind != segName && s.kind != segIndex {
			return nil, &SyntaxError{Path: path, Offset: s.pos,
				Msg: "a reference path may only contain member names and array indexes, not " + s.kind.describe()}
		}
	}
	return p, nil
}

type compiler struct {
	src  string // the path up to its trailing blanks
	pos  int
	text string // the path as written, for errors
}

func (c *compiler) errf(format string, args ...any) error {
	return &SyntaxError{Path: c.text, Offset: c.pos, Msg: fmt.Sprintf(format, args...)}
}

func (c *compiler) peek() byte {
	if c.pos < len(c.src) {
		return c.src[c.pos]
	}
	return 0
}

func (c *compiler) skipSpace() {
	for c.pos < len(c.src) && c.src[c.pos] == ' ' {
		c.pos++
	}
}

// segments parses segments up to the end of the input or, in a filter, up to
// a character that cannot continue a path.
func (c *compiler) segments(inFilter bool) ([]segment, error) {
	var segs []segment
	for c.pos < len(c.src) {
		start := c.pos
		var s segment
		var err error
		switch c.peek() {
		case '.':
			c.pos++
			switch {
			case c.peek() == '.':
				c.pos++
				var sub segment
				if c.peek() == '[' {
					sub, err = c.bracket()
				} else {
					sub, err = c.dotName(inFilter)
				}
				if err != nil {
					return nil, err
				}
				if sub.kind == segFunction {
					return nil, &SyntaxError{Path: c.text, Offset: start, Msg: "a function cannot follow '..'"}
				}
				sub.pos = start + 2
				sub.leaf = c.atPathEnd(inFilter)
				s = segment{kind: segDescend, sub: &sub}
			case c.peek() == '[':
				s, err = c.bracket()
			default:
				s, err = c.dotName(inFilter)
			}
		case '[':
			s, err = c.bracket()
		default:
			if inFilter {
				return segs, nil
			}
			return nil, c.errf("unexpected character %q", c.peek())
		}
		if err != nil {
			return nil, err
		}
		s.pos = start
		if len(segs) > 0 && segs[len(segs)-1].kind == segFunction {
			return nil, &SyntaxError{Path: c.text, Offset: start, Msg: "a function must be the last segment of a path"}
		}
		segs = append(segs, s)
	}
	if len(segs) > 0 {
		segs[len(segs)-1].leaf = true
	}
	return segs, nil
}

// atPathEnd reports whether the path ends at the current position.
func (c *compiler) atPathEnd(inFilter bool) bool {
	if c.pos >= len(c.src) {
		return true
	}
	ch := c.peek()
	return inFilter && ch != '.' && ch != '['
}

// dotName parses what follows '.' (or '..'): a member name, '*', or a
// function call name(...). Like Jayway, a name runs up to '.', '[' or '('
// and may not contain blanks. As in the ASL specification's reference
// paths ("$.foo\@bar.baz\[\[.\?pretty"), a backslash makes the next
// character part of the name, "\uXXXX" being a UTF-16 code unit as in a
// quoted name.
func (c *compiler) dotName(inFilter bool) (segment, error) {
	if c.pos >= len(c.src) {
		return segment{}, c.errf("a path must not end with '.' or '..'")
	}
	start := c.pos
	var b []byte // the name, once an escape made it differ from the text
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		if ch == '.' || ch == '[' || ch == '(' {
			break
		}
		if inFilter && strings.IndexByte(" )]=!<>&|,", ch) >= 0 {
			break
		}
		if ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' {
			return segment{}, c.errf("a member name cannot contain blanks: use bracket notation, ['my name']")
		}
		if ch == '\\' && !inFilter {
			if b == nil {
				b = append([]byte{}, c.src[start:c.pos]...)
			}
			c.pos++
			if c.pos >= len(c.src) {
				return segment{}, c.errf("a path must not end with '\\'")
			}
			if c.src[c.pos] == 'u' {
				at := c.pos
				c.pos++
				if r, ok := c.hex4(); ok {
					b = c.appendUTF16(b, r)
					continue
				}
				c.pos = at
			}
			_, n := utf8.DecodeRuneInString(c.src[c.pos:])
			b = append(b, c.src[c.pos:c.pos+n]...)
			c.pos += n
			continue
		}
		if b != nil {
			b = append(b, ch)
		}
		c.pos++
	}
	name := c.src[start:c.pos]
	if b != nil {
		return segment{kind: segName, name: string(b)}, nil
	}
	if name == "" {
		return segment{}, c.errf("expected a member name")
	}
	if c.peek() == '(' {
		if err := c.skipArgs(); err != nil {
			return segment{}, err
		}
		return segment{kind: segFunction, name: name}, nil
	}
	if name == "*" {
		return segment{kind: segWildcard}, nil
	}
	return segment{kind: segName, name: name}, nil
}

// skipArgs skips a function's parenthesised arguments.
func (c *compiler) skipArgs() error {
	depth := 0
	var quote byte
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		c.pos++
		switch {
		case quote != 0:
			if ch == '\\' {
				c.pos++
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')':
			depth--
			if depth == 0 {
				return nil
			}
		}
	}
	c.pos = len(c.src)
	return c.errf("unterminated function arguments")
}

func (c *compiler) bracket() (segment, error) {
	open := c.pos
	c.pos++ // [
	c.skipSpace()
	var s segment
	var err error
	switch ch := c.peek(); {
	case ch == '*':
		c.pos++
		s = segment{kind: segWildcard}
	case ch == '\'' || ch == '"':
		s, err = c.names()
	case ch == '?':
		s, err = c.filterSegment()
	case ch == '-' || ch == ':' || (ch >= '0' && ch <= '9'):
		s, err = c.indexes()
	case ch == 0:
		return s, c.errf("unterminated '['")
	default:
		return s, c.errf("unexpected character %q in brackets", ch)
	}
	if err != nil {
		return s, err
	}
	c.skipSpace()
	if c.peek() != ']' {
		if c.pos >= len(c.src) {
			return s, &SyntaxError{Path: c.text, Offset: open, Msg: "unterminated '['"}
		}
		return s, c.errf("expected ']' but found %q", c.peek())
	}
	c.pos++
	return s, nil
}

func (c *compiler) names() (segment, error) {
	var names []string
	for {
		c.skipSpace()
		name, err := c.quoted()
		if err != nil {
			return segment{}, err
		}
		names = append(names, name)
		c.skipSpace()
		if c.peek() != ',' {
			break
		}
		c.pos++
	}
	if len(names) == 1 {
		return segment{kind: segName, name: names[0]}, nil
	}
	return segment{kind: segNames, names: names}, nil
}

func (c *compiler) filterSegment() (segment, error) {
	c.pos++ // ?
	if c.peek() != '(' {
		return segment{}, c.errf("expected '(' after '?'")
	}
	c.pos++
	e, err := c.orExpr()
	if err != nil {
		return segment{}, err
	}
	c.skipSpace()
	if c.peek() != ')' {
		if c.pos >= len(c.src) {
			return segment{}, c.errf("unterminated filter")
		}
		return segment{}, c.errf("unexpected %q in filter", c.peek())
	}
	c.pos++
	return segment{kind: segFilter, filter: e}, nil
}

// integer reads an optional signed integer.
func (c *compiler) integer() (n int, ok bool, err error) {
	start := c.pos
	neg := c.peek() == '-'
	if neg {
		c.pos++
	}
	digits := c.pos
	for c.pos < len(c.src) && c.src[c.pos] >= '0' && c.src[c.pos] <= '9' {
		if n > (1<<31-1)/10 {
			c.pos = start
			return 0, false, c.errf("index out of range")
		}
		n = n*10 + int(c.src[c.pos]-'0')
		c.pos++
	}
	if c.pos == digits {
		if neg {
			return 0, false, c.errf("expected digits after '-'")
		}
		return 0, false, nil
	}
	if neg {
		n = -n
	}
	return n, true, nil
}

// indexes parses [n], [n,m,...] and slices [from:to] (a third, step part is
// accepted and ignored, as Jayway does).
func (c *compiler) indexes() (segment, error) {
	start := c.pos
	first, ok, err := c.integer()
	if err != nil {
		return segment{}, err
	}
	c.skipSpace()
	if c.peek() == ':' {
		s := segment{kind: segSlice, from: first, hasFrom: ok}
		c.pos++
		c.skipSpace()
		if s.to, s.hasTo, err = c.integer(); err != nil {
			return s, err
		}
		c.skipSpace()
		if c.peek() == ':' {
			c.pos++
			c.skipSpace()
			if _, _, err := c.integer(); err != nil {
				return s, err
			}
		}
		if !s.hasFrom && !s.hasTo {
			return s, &SyntaxError{Path: c.text, Offset: start,
				Msg: "Failed to parse SliceOperation: " + c.src[start:c.pos]}
		}
		return s, nil
	}
	if !ok {
		return segment{}, c.errf("expected an index")
	}
	idx := []int{first}
	for c.peek() == ',' {
		c.pos++
		c.skipSpace()
		n, ok, err := c.integer()
		if err != nil {
			return segment{}, err
		}
		if !ok {
			return segment{}, c.errf("expected an index")
		}
		idx = append(idx, n)
		c.skipSpace()
	}
	if len(idx) == 1 {
		return segment{kind: segIndex, index: first}, nil
	}
	return segment{kind: segIndexes, indexes: idx}, nil
}

// quoted reads a quoted name or string with backslash escapes.
func (c *compiler) quoted() (string, error) {
	q := c.peek()
	if q != '\'' && q != '"' {
		return "", c.errf("expected a quoted name")
	}
	open := c.pos
	c.pos++
	start := c.pos
	var b []byte
	for c.pos < len(c.src) {
		ch := c.src[c.pos]
		switch {
		case ch == q:
			c.pos++
			if b == nil {
				return c.src[start : c.pos-1], nil
			}
			return string(b), nil
		case ch == '\\':
			if b == nil {
				b = append(make([]byte, 0, len(c.src)-start), c.src[start:c.pos]...)
			}
			c.pos++
			if c.pos >= len(c.src) {
				return "", c.errf("unterminated escape")
			}
			e := c.src[c.pos]
			c.pos++
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
				r, ok := c.hex4()
				if !ok {
					return "", c.errf("invalid \\u escape")
				}
				b = c.appendUTF16(b, r)
			default:
				b = append(b, e)
			}
		default:
			if b != nil {
				b = append(b, ch)
			}
			c.pos++
		}
	}
	return "", &SyntaxError{Path: c.text, Offset: open, Msg: "unterminated quoted string"}
}

// appendUTF16 appends the UTF-16 code unit r read from a \u escape. A
// surrogate pair written as two escapes is one character (Jayway reads the
// path as UTF-16); a surrogate alone becomes U+FFFD.
func (c *compiler) appendUTF16(b []byte, r rune) []byte {
	if utf16.IsSurrogate(r) && strings.HasPrefix(c.src[c.pos:], `\u`) {
		at := c.pos
		c.pos += 2
		if low, ok := c.hex4(); ok && utf16.DecodeRune(r, low) != utf8.RuneError {
			r = utf16.DecodeRune(r, low)
		} else {
			c.pos = at
		}
	}
	return utf8.AppendRune(b, r)
}

func (c *compiler) hex4() (rune, bool) {
	if c.pos+4 > len(c.src) {
		return 0, false
	}
	var r rune
	for _, h := range []byte(c.src[c.pos : c.pos+4]) {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	c.pos += 4
	return r, true
}
