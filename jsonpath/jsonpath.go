// Package jsonpath evaluates JSONPath as AWS Step Functions does over
// stepd's JSON values. AWS uses the Jayway JsonPath library; this package
// reimplements the parts of its behaviour that ASL exposes.
//
// Compile accepts "$" (the input) or "$$" (the Context object; the caller
// passes the Context object as the root) followed by segments: .name (any
// characters up to '.', '[', '(' or a blank), ['name'] and ["name"] with
// backslash escapes, [n] and [-n], [*] and .*, ..name, ..* and ..[...]
// (descendants), unions ['a','b'] and [0,2], slices [from:to], and filters
// [?(...)] with @ and $ paths, string, number, true/false/null literals,
// == != < <= > >=, &&, ||, ! and parentheses.
//
// A definite path (names, single indexes and name unions) yields one value
// and fails with an *Error when that value does not exist; the error text is
// Jayway's, as AWS reports it:
//
//	Invalid path '$.a' : No results for path: $['a']        (missing leaf or index)
//	Invalid path '$.a.b' : Missing property in path $['a']  (missing intermediate member)
//
// An indefinite path (wildcards, descendants, slices, index unions, filters)
// yields a []any of every match; missing members and type mismatches are
// skipped, and no match gives an empty array (AWS returns [] for
// "$.missing.items[*]" on {}; see the conformance cases
// base.json_path_array_wildcard_or_slice_with_no_input.*).
//
// Reference paths (CompileReference: "$", names and indexes only) can also
// be written with Set, which copies the containers along the path and never
// mutates its input.
//
// Jayway behaviour reproduced on purpose:
//   - A name union as the last segment, $['a','b'], is definite and yields
//     one object holding the members that exist; a name union followed by
//     more segments fails when it meets an object ("Multi properties can only
//     be used as path leafs", as AWS reports it).
//   - Slices ignore a step ([0:3:2] is [0:3]) and [::2] and [:] do not
//     compile ("Failed to parse SliceOperation"). [from:to] with a negative
//     from and a non-negative to visits from..to without normalising, as
//     Jayway does: on [a,b,c,d,e], [-2:2] is [d,e,a,b].
//   - A filter applied to an array tests each element; applied to an object
//     it tests the object itself. A bare path in a filter is an existence
//     test: [?(@.a)] matches when a exists, even when it is null or false.
//   - A comparison with a missing operand is false, except != which is true.
//     Numbers compare by value (1 == 1.0); values of different types are
//     never equal and never ordered.
//   - Functions such as .length() compile (AWS accepts the definition) but
//     never match: Get fails with "No results", as AWS reports that the path
//     could not be found.
//
// Known divergences from AWS:
//   - Following the AWS developer guide ("the @ operator ... does not match
//     scalar values"), an @ path evaluated on a scalar array element yields
//     nothing, so [?(@ > 1)] matches no scalar. Not verified against AWS.
//   - A member access on a non-object in a definite path fails with Jayway's
//     "Expected to find an object with property ..." message, but names the
//     JSON type found ('array', 'string', ...) instead of a Java class.
//   - $ references inside filters are evaluated; the AWS guide says filtering
//     by referencing another value is not supported, and what AWS then does
//     is not recorded.
//   - Regular expressions (=~) and the in/nin/subsetof/size/empty operators
//     are rejected at compile time.
//   - In Jayway, "1" == 1 can be true (strings coerce to numbers); here it is
//     false.
//
// It imports only value, and must not import interp or validate, which
// build on it, nor anything above them; like every pure package it reaches
// no I/O package (internal/layer).
package jsonpath

import (
	"fmt"
	"strconv"

	"github.com/stepd/stepd/value"
)

// Path is a compiled JSONPath. It is immutable and safe for concurrent use.
type Path struct {
	text     string
	context  bool
	segs     []segment
	definite bool
	function bool // ends in a function call: never matches
}

type segKind uint8

const (
	segName     segKind = iota
	segIndex            // [n], n may be negative
	segNames            // ['a','b']
	segIndexes          // [0,2]
	segWildcard         // [*] and .*
	segSlice            // [from:to]
	segFilter           // [?(...)]
	segDescend          // .. followed by sub
	segFunction         // .name()
)

type segment struct {
	kind    segKind
	pos     int // offset of the segment in the path text
	name    string
	index   int
	names   []string
	indexes []int
	from    int
	to      int
	hasFrom bool
	hasTo   bool
	filter  expr
	sub     *segment // segDescend: the segment applied at every level
	leaf    bool     // last segment of its path
}

// String returns the path as written.
func (p *Path) String() string { return p.text }

// Context reports whether the path starts with "$$" (addresses the Context
// object).
func (p *Path) Context() bool { return p.context }

// Definite reports whether the path yields a single value rather than an
// array of matches: it holds only member names, single indexes and, as the
// last segment, name unions.
func (p *Path) Definite() bool { return p.definite }

// isReference reports whether the path is a reference path: only member
// names and single indexes. Unlike CompileReference it accepts "$$" paths.
func (p *Path) isReference() bool {
	for i := range p.segs {
		if k := p.segs[i].kind; k != segName && k != segIndex {
			return false
		}
	}
	return true
}

// normalized returns the first n segments of the path in Jayway's bracket
// notation, e.g. $['a']['b'][0]; n < 0 or beyond the end means all of them.
// Paths on the Context object are rendered from "$" as well.
func (p *Path) normalized(n int) string {
	if n < 0 || n > len(p.segs) {
		n = len(p.segs)
	}
	b := make([]byte, 0, len(p.text)+8)
	b = append(b, '$')
	for i := range p.segs[:n] {
		b = p.segs[i].appendFragment(b, ",")
	}
	return string(b)
}

// appendFragment appends Jayway's rendering of s; sep separates union names.
func (s *segment) appendFragment(b []byte, sep string) []byte {
	switch s.kind {
	case segName:
		b = append(b, "['"...)
		b = append(b, s.name...)
		b = append(b, "']"...)
	case segIndex:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.index), 10)
		b = append(b, ']')
	case segNames:
		b = append(b, '[')
		for i, n := range s.names {
			if i > 0 {
				b = append(b, sep...)
			}
			b = append(b, '\'')
			b = append(b, n...)
			b = append(b, '\'')
		}
		b = append(b, ']')
	case segIndexes:
		b = append(b, '[')
		for i, n := range s.indexes {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	case segWildcard:
		b = append(b, "[*]"...)
	case segSlice:
		b = append(b, '[')
		if s.hasFrom {
			b = strconv.AppendInt(b, int64(s.from), 10)
		}
		b = append(b, ':')
		if s.hasTo {
			b = strconv.AppendInt(b, int64(s.to), 10)
		}
		b = append(b, ']')
	case segFilter:
		b = append(b, "[?]"...)
	case segDescend:
		b = append(b, ".."...)
		b = s.sub.appendFragment(b, sep)
	case segFunction:
		b = append(b, '.')
		b = append(b, s.name...)
		b = append(b, "()"...)
	}
	return b
}

func (s *segment) fragment(sep string) string { return string(s.appendFragment(nil, sep)) }

// ErrorKind says why a definite path failed.
type ErrorKind uint8

const (
	// NoResults: the last member, an index or a function matched nothing.
	NoResults ErrorKind = iota
	// MissingProperty: a member before the last one does not exist.
	MissingProperty
	// NotObject: a member was looked up in something that is not an object.
	NotObject
	// NotArray: an index was applied to something that is not an array.
	NotArray
	// MultiProperty: a name union was followed by more segments.
	MultiProperty
)

// Error is a path that could not be evaluated: a definite path whose value
// does not exist, or a Jayway evaluation error.
type Error struct {
	Path string    // the path as written
	Kind ErrorKind // why it failed
	// Normalized is Jayway's bracket notation of the path where it failed:
	// the whole path for NoResults, the path up to and including the missing
	// member for MissingProperty, the path of the value found for NotObject
	// and NotArray, and the path up to and including the union for
	// MultiProperty.
	Normalized string
	// Fragment is the failing segment in bracket notation, e.g. ['b'] or [0].
	Fragment string
	// Found is the value met instead of an object or array (NotObject,
	// NotArray).
	Found any
}

// reason returns Jayway's message without the "Invalid path" prefix, e.g.
// "No results for path: $['a']".
func (e *Error) reason() string {
	switch e.Kind {
	case MissingProperty:
		return "Missing property in path " + e.Normalized
	case NotObject:
		return "Expected to find an object with property " + e.Fragment + " in path " + e.Normalized +
			" but found '" + foundName(e.Found) + "'"
	case NotArray:
		if e.Found == nil {
			return "The path " + e.Normalized + " is null"
		}
		return "Filter: " + e.Fragment + " can only be applied to arrays. Current context is: " + value.String(e.Found)
	case MultiProperty:
		return "Multi properties can only be used as path leafs: " + e.Normalized
	}
	return "No results for path: " + e.Normalized
}

func foundName(v any) string {
	if v == nil {
		return "null"
	}
	return value.KindOf(v).String()
}

// Error returns AWS's text: "Invalid path '<path>' : <reason>".
func (e *Error) Error() string {
	return "Invalid path '" + e.Path + "' : " + e.reason()
}

func (p *Path) fail(kind ErrorKind, n int, s *segment, found any) *Error {
	e := &Error{Path: p.text, Kind: kind, Found: found}
	switch kind {
	case NoResults:
		e.Normalized = p.normalized(-1)
	case MissingProperty:
		e.Normalized = p.normalized(n + 1)
	case MultiProperty:
		e.Normalized = p.normalized(n) + s.fragment(", ")
	default:
		e.Normalized = p.normalized(n)
	}
	if s != nil {
		e.Fragment = s.fragment(",")
	}
	return e
}

// Get evaluates the path against root. A definite path returns its value or
// an *Error; an indefinite path returns a []any of all matches, possibly
// empty.
func (p *Path) Get(root any) (any, error) { return p.GetWithin(root, 0) }

// LimitError reports a path that collected more values than GetWithin
// allowed.
type LimitError struct {
	Path  string
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("The JSONPath '%s' collected more than its budget of %d values", e.Path, e.Limit)
}

// GetWithin is Get for an indefinite path that may collect at most
// maxNodes values on its way (0: no limit): a descendant segment applied to
// the results of another, say, collects the square of the input's size. It
// fails with a *LimitError past the limit.
func (p *Path) GetWithin(root any, maxNodes int) (any, error) {
	if p.function {
		return nil, p.fail(NoResults, -1, nil, nil)
	}
	if p.definite {
		return p.getDefinite(root)
	}
	nodes := make([]any, 1, 4)
	nodes[0] = root
	var next []any
	for i := range p.segs {
		s := &p.segs[i]
		if s.kind == segNames && !s.leaf {
			for _, n := range nodes {
				if _, ok := n.(*value.Object); ok {
					return nil, p.fail(MultiProperty, i, s, nil)
				}
			}
		}
		next = next[:0]
		for _, n := range nodes {
			next = s.match(next, n, root)
			if maxNodes > 0 && len(next) > maxNodes {
				return nil, &LimitError{Path: p.text, Limit: maxNodes}
			}
		}
		nodes, next = next, nodes
	}
	out := make([]any, len(nodes))
	copy(out, nodes)
	return out, nil
}

func (p *Path) getDefinite(root any) (any, error) {
	cur := root
	for i := range p.segs {
		s := &p.segs[i]
		switch s.kind {
		case segName:
			o, ok := cur.(*value.Object)
			if !ok {
				return nil, p.fail(NotObject, i, s, cur)
			}
			v, ok := o.Get(s.name)
			if !ok {
				if s.leaf {
					return nil, p.fail(NoResults, i, s, nil)
				}
				return nil, p.fail(MissingProperty, i, s, nil)
			}
			cur = v
		case segNames:
			o, ok := cur.(*value.Object)
			if !ok {
				return nil, p.fail(NotObject, i, s, cur)
			}
			if !s.leaf {
				return nil, p.fail(MultiProperty, i, s, nil)
			}
			cur = merge(o, s.names)
		case segIndex:
			a, ok := cur.([]any)
			if !ok {
				return nil, p.fail(NotArray, i, s, cur)
			}
			j := normIndex(s.index, len(a))
			if j < 0 {
				return nil, p.fail(NoResults, i, s, nil)
			}
			cur = a[j]
		}
	}
	return cur, nil
}

// merge builds the object Jayway returns for a leaf name union: the named
// members that exist, in the order named.
func merge(o *value.Object, names []string) *value.Object {
	m := value.NewObject(len(names))
	for _, n := range names {
		if v, ok := o.Get(n); ok {
			m.Set(n, v)
		}
	}
	return m
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
	case segNames:
		if o, ok := n.(*value.Object); ok {
			out = append(out, merge(o, s.names))
		}
	case segIndex:
		if a, ok := n.([]any); ok {
			if i := normIndex(s.index, len(a)); i >= 0 {
				out = append(out, a[i])
			}
		}
	case segIndexes:
		if a, ok := n.([]any); ok {
			for _, idx := range s.indexes {
				if i := normIndex(idx, len(a)); i >= 0 {
					out = append(out, a[i])
				}
			}
		}
	case segWildcard:
		switch x := n.(type) {
		case []any:
			out = append(out, x...)
		case *value.Object:
			for i := range x.Len() {
				_, v := x.At(i)
				out = append(out, v)
			}
		}
	case segSlice:
		if a, ok := n.([]any); ok {
			out = s.appendSlice(out, a)
		}
	case segFilter:
		switch x := n.(type) {
		case []any:
			for _, e := range x {
				if s.filter.test(e, root) {
					out = append(out, e)
				}
			}
		case *value.Object:
			if s.filter.test(x, root) {
				out = append(out, x)
			}
		}
	case segDescend:
		out = s.descend(out, n, root)
	}
	return out
}

// descend walks n in Jayway's order: the segment applied to a container,
// then the walk of each of its children.
func (s *segment) descend(out []any, n any, root any) []any {
	sub := s.sub
	switch x := n.(type) {
	case *value.Object:
		switch sub.kind {
		case segFilter:
			if sub.filter.test(x, root) {
				out = append(out, x)
			}
		case segNames:
			all := true
			for _, name := range sub.names {
				all = all && x.Has(name)
			}
			if all {
				out = sub.match(out, x, root)
			}
		default:
			out = sub.match(out, x, root)
		}
		for i := range x.Len() {
			_, v := x.At(i)
			out = s.descend(out, v, root)
		}
	case []any:
		if sub.kind != segFilter || sub.filter.test(x, root) {
			out = sub.match(out, x, root)
		}
		for _, e := range x {
			out = s.descend(out, e, root)
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

// appendSlice follows Jayway's ArraySliceToken: [from:] counts a negative
// from from the end; [:to] likewise; [from:to] caps to at the length and
// visits from..to-1 as raw indexes, each negative one counted from the end.
func (s *segment) appendSlice(out []any, a []any) []any {
	n := len(a)
	if n == 0 {
		return out
	}
	switch {
	case s.hasFrom && !s.hasTo:
		from := s.from
		if from < 0 {
			from = max(0, n+from)
		}
		if from < n {
			out = append(out, a[from:]...)
		}
	case !s.hasFrom:
		to := s.to
		if to < 0 {
			to += n
		}
		to = min(n, to)
		if to > 0 {
			out = append(out, a[:to]...)
		}
	default:
		to := min(n, s.to)
		for i := s.from; i < to; i++ {
			if j := normIndex(i, n); j >= 0 {
				out = append(out, a[j])
			}
		}
	}
	return out
}

// describe names a segment kind for error messages.
func (k segKind) describe() string {
	switch k {
	case segNames:
		return "a name union"
	case segIndexes:
		return "an index union"
	case segWildcard:
		return "a wildcard"
	case segSlice:
		return "a slice"
	case segFilter:
		return "a filter"
	case segDescend:
		return "a descendant segment"
	case segFunction:
		return "a function"
	}
	return "a segment"
}
