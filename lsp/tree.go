package lsp

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is one value of a document (JSON or YAML) with where it stands:
// the member's key and the value, as byte offsets of the text. The
// outline is built leniently, so a document being typed still has one.
type node struct {
	kind     byte // 'o' object, 'a' array, 's' string, 'n' other scalar, 0 missing
	key      string
	hasKey   bool
	keyStart int // the key's span, quotes included
	keyEnd   int
	start    int // the value's span, quotes included
	end      int
	str      string // a string's decoded value, or a scalar's text
	quote    byte   // '"' or '\'' for a quoted string, 0 when plain
	closed   bool   // a string whose closing quote was found
	index    int    // the element's index in an array
	parent   *node
	children []*node
}

// child returns the member named key (the last one, as JSON readers keep).
func (n *node) child(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	var out *node
	for _, c := range n.children {
		if c.key == key {
			out = c
		}
	}
	return out
}

// pointer returns the node's JSON pointer.
func (n *node) pointer() string {
	var parts []string
	for x := n; x.parent != nil; x = x.parent {
		if x.hasKey {
			parts = append(parts, escapePointer(x.key))
		} else {
			parts = append(parts, strconv.Itoa(x.index))
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// splitPointer splits a JSON pointer into its unescaped segments.
func splitPointer(ptr string) []string {
	if ptr == "" || ptr == "/" || ptr[0] != '/' {
		return nil
	}
	var out []string
	for _, s := range strings.Split(ptr[1:], "/") {
		out = append(out, unescapePointer(s))
	}
	return out
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// find returns the node at the pointer's segments, or the deepest node on
// the way and false.
func (n *node) find(segs []string) (*node, bool) {
	cur := n
	for _, s := range segs {
		var next *node
		switch cur.kind {
		case 'o':
			next = cur.child(s)
		case 'a':
			if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(cur.children) {
				next = cur.children[i]
			}
		}
		if next == nil {
			// AWS's locations index with brackets: /Choices[0]/Next
			if i := strings.IndexByte(s, '['); cur.kind == 'o' && i > 0 && strings.HasSuffix(s, "]") {
				if m, ok := cur.find([]string{s[:i], s[i+1 : len(s)-1]}); ok {
					cur = m
					continue
				}
			}
			return cur, false
		}
		cur = next
	}
	return cur, true
}

// at returns the innermost node under n whose key or value span holds
// off, or nil.
func (n *node) at(off int) *node {
	for _, c := range n.children {
		if c.inKey(off) {
			return c
		}
		if c.kind == 0 || off < c.start || off > c.end {
			continue
		}
		if c.kind == 'o' || c.kind == 'a' {
			if c.closed && off == c.end {
				continue
			}
			if in := c.at(off); in != nil {
				return in
			}
		}
		return c
	}
	return nil
}

// walk calls fn for n and every node under it, in document order.
func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// inKey reports whether off is inside the node's key.
func (n *node) inKey(off int) bool {
	return n.hasKey && off >= n.keyStart && off <= n.keyEnd
}

// contentStart is where a string's text starts (after its quote).
func (n *node) contentStart() int {
	if n.quote != 0 {
		return n.start + 1
	}
	return n.start
}

// contentEnd is where a string's text ends (before its closing quote).
func (n *node) contentEnd() int {
	if n.quote != 0 && n.closed {
		return n.end - 1
	}
	return n.end
}

// sourceOffset maps a byte offset in a string's decoded value to the
// offset in the text, following the escapes of the string's quoting.
func (n *node) sourceOffset(text string, dec int) int {
	i := n.contentStart()
	end := min(n.contentEnd(), len(text))
	if n.quote == 0 {
		return min(i+dec, end)
	}
	d := 0
	for i < end && d < dec {
		c := text[i]
		switch {
		case n.quote == '"' && c == '\\' && i+1 < end:
			if text[i+1] == 'u' && i+6 <= end {
				r, err := strconv.ParseUint(text[i+2:i+6], 16, 32)
				size := 1
				if err == nil {
					size = utf8.RuneLen(rune(r))
					if size < 0 {
						size = 3
					}
				}
				d += size
				i += 6
				continue
			}
			d++
			i += 2
		case n.quote == '\'' && c == '\'' && i+1 < end && text[i+1] == '\'':
			d++
			i += 2
		default:
			d++
			i++
		}
	}
	return i
}
