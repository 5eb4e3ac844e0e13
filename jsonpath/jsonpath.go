// Package jsonpath evaluates JSONPath as AWS Step Functions does (Jayway
// semantics) over stepd's JSON values.
//
// A definite path (only member names and single indexes) yields one value,
// and fails when that value does not exist. An indefinite path (wildcards,
// descendants, slices, unions, filters) yields an array of every match, empty
// when nothing matches. Paths starting with "$$" address the Context object;
// the caller passes it as the root.
//
// Reference paths (ResultPath, and the other fields AWS restricts) allow
// only member names and indexes; Set places a value at such a path, copying
// the objects along the way and never mutating its input.
//
// Known divergences from AWS: functions such as length() are rejected, as
// AWS rejects them; filter expressions support comparisons, &&, || and !,
// not regular expressions (=~) or the in/nin operators.
package jsonpath

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// Path is a compiled JSONPath. It is immutable and safe for concurrent use.
type Path struct {
	text     string
	context  bool
	segs     []segment
	definite bool
}

type segKind uint8

const (
	segName segKind = iota
	segIndex
	segWildcard
	segSlice
	segUnionNames
	segUnionIndexes
	segFilter
	segDescend // descendants, followed by the segment in sub
)

type segment struct {
	kind    segKind
	name    string
	index   int
	names   []string
	indexes []int
	start   *int
	end     *int
	step    int
	filter  expr
	sub     *segment // for segDescend
}

// SyntaxError is a malformed path.
type SyntaxError struct {
	Path   string
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSONPath '%s' at offset %d: %s", e.Path, e.Offset, e.Msg)
}

// Error is a definite path that matched nothing.
type Error struct {
	Path string // the path as written
	// Normalized is the path up to and including the segment that failed,
	// in Jayway's bracket notation, e.g. $['a']['b'].
	Normalized string
	// Leaf is true when the last segment failed ("No results for path"),
	// false when an intermediate one did ("Missing property in path").
	Leaf bool
}

func (e *Error) Error() string {
	if e.Leaf {
		return fmt.Sprintf("Invalid path '%s' : No results for path: %s", e.Path, e.Normalized)
	}
	return fmt.Sprintf("Invalid path '%s' : Missing property in path %s", e.Path, e.Normalized)
}

// String returns the path as written.
func (p *Path) String() string { return p.text }

// Context reports whether the path starts with "$$".
func (p *Path) Context() bool { return p.context }

// Definite reports whether the path yields a single value.
func (p *Path) Definite() bool { return p.definite }

// IsRoot reports whether the path is "$" (or "$$") alone.
func (p *Path) IsRoot() bool { return len(p.segs) == 0 }

// Get evaluates the path against root.
func (p *Path) Get(root any) (any, error) {
	if p.definite {
		cur := root
		for i := range p.segs {
			s := &p.segs[i]
			var ok bool
			switch s.kind {
			case segName:
				o, isObj := cur.(*value.Object)
				if isObj {
					cur, ok = o.Get(s.name)
				}
			case segIndex:
				a, isArr := cur.([]any)
				if isArr {
					idx := s.index
					if idx < 0 {
						idx += len(a)
					}
					if idx >= 0 && idx < len(a) {
						cur, ok = a[idx], true
					}
				}
			}
			if !ok {
				return nil, &Error{Path: p.text, Normalized: p.normalized(i + 1), Leaf: i == len(p.segs)-1}
			}
		}
		return cur, nil
	}
	nodes := []any{root}
	for i := range p.segs {
		nodes = p.segs[i].apply(nodes, root)
	}
	if nodes == nil {
		nodes = []any{}
	}
	return nodes, nil
}

func (p *Path) normalized(n int) string {
	var b strings.Builder
	if p.context {
		b.WriteString("$$")
	} else {
		b.WriteString("$")
	}
	for _, s := range p.segs[:n] {
		switch s.kind {
		case segName:
			b.WriteString("['")
			b.WriteString(s.name)
			b.WriteString("']")
		case segIndex:
			b.WriteString("[")
			b.WriteString(strconv.Itoa(s.index))
			b.WriteString("]")
		}
	}
	return b.String()
}

func (s *segment) apply(nodes []any, root any) []any {
	var out []any
	for _, n := range nodes {
		out = s.match(out, n, root)
	}
	return out
}

// match appends the matches of one segment applied to n.
func (s *segment) match(out []any, n any, root any) []any {
	switch s.kind {
	case segName:
		if o, ok := n.(*value.Object); ok {
			if v, ok := o.Get(s.name); ok {
				out = append(out, v)
			}
		}
	case segIndex:
		if a, ok := n.([]any); ok {
			if i := normIndex(s.index, len(a)); i >= 0 {
				out = append(out, a[i])
			}
		}
	case segWildcard:
		switch x := n.(type) {
		case []any:
			out = append(out, x...)
		case *value.Object:
			for _, v := range x.All {
				out = append(out, v)
			}
		}
	case segUnionNames:
		if o, ok := n.(*value.Object); ok {
			for _, name := range s.names {
				if v, ok := o.Get(name); ok {
					out = append(out, v)
				}
			}
		}
	case segUnionIndexes:
		if a, ok := n.([]any); ok {
			for _, idx := range s.indexes {
				if i := normIndex(idx, len(a)); i >= 0 {
					out = append(out, a[i])
				}
			}
		}
	case segSlice:
		if a, ok := n.([]any); ok {
			out = appendSlice(out, a, s)
		}
	case segFilter:
		switch x := n.(type) {
		case []any:
			for _, e := range x {
				if truthy(s.filter.eval(e, root)) {
					out = append(out, e)
				}
			}
		case *value.Object:
			if truthy(s.filter.eval(x, root)) {
				out = append(out, x)
			}
		}
	case segDescend:
		out = s.sub.match(out, n, root)
		switch x := n.(type) {
		case []any:
			for _, e := range x {
				out = s.match(out, e, root)
			}
		case *value.Object:
			for _, v := range x.All {
				out = s.match(out, v, root)
			}
		}
	}
	return out
}

func normIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return -1
	}
	return i
}

func appendSlice(out []any, a []any, s *segment) []any {
	n := len(a)
	step := s.step
	if step == 0 {
		step = 1
	}
	clamp := func(p *int, def int) int {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			i += n
			if i < 0 {
				i = 0
			}
		}
		if i > n {
			i = n
		}
		return i
	}
	if step > 0 {
		for i := clamp(s.start, 0); i < clamp(s.end, n); i += step {
			out = append(out, a[i])
		}
		return out
	}
	start := n - 1
	if s.start != nil {
		start = clamp(s.start, n-1)
		if start >= n {
			start = n - 1
		}
	}
	end := -1
	if s.end != nil {
		end = clamp(s.end, -1)
	}
	for i := start; i > end; i += step {
		out = append(out, a[i])
	}
	return out
}

// Set returns a copy of root with v placed at the path, which must be a
// reference path. Objects along the path are copied; missing members are
// created as objects.
func (p *Path) Set(root, v any) (any, error) {
	return p.set(root, 0, v)
}

// SetError is a reference path that cannot be applied to the input.
type SetError struct {
	Path string
	Msg  string
}

func (e *SetError) Error() string {
	return fmt.Sprintf("Unable to apply ReferencePath %s: %s", e.Path, e.Msg)
}

func (p *Path) set(cur any, i int, v any) (any, error) {
	if i == len(p.segs) {
		return v, nil
	}
	s := &p.segs[i]
	switch s.kind {
	case segName:
		var o *value.Object
		switch x := cur.(type) {
		case *value.Object:
			o = x
		case nil:
			if i > 0 {
				o = value.NewObject(1)
			}
		}
		if o == nil {
			return nil, &SetError{Path: p.text, Msg: fmt.Sprintf("cannot set member '%s' of a %s", s.name, value.KindOf(cur))}
		}
		child, _ := o.Get(s.name)
		if child == nil && i+1 < len(p.segs) {
			child = value.NewObject(1)
		}
		nv, err := p.set(child, i+1, v)
		if err != nil {
			return nil, err
		}
		return o.With(s.name, nv), nil
	case segIndex:
		a, ok := cur.([]any)
		if !ok {
			return nil, &SetError{Path: p.text, Msg: fmt.Sprintf("cannot set index %d of a %s", s.index, value.KindOf(cur))}
		}
		idx := normIndex(s.index, len(a))
		if idx < 0 {
			return nil, &SetError{Path: p.text, Msg: fmt.Sprintf("index %d is out of bounds", s.index)}
		}
		nv, err := p.set(a[idx], i+1, v)
		if err != nil {
			return nil, err
		}
		c := make([]any, len(a))
		copy(c, a)
		c[idx] = nv
		return c, nil
	}
	return nil, &SetError{Path: p.text, Msg: "not a reference path"}
}
