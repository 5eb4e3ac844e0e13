// Package yamlvalue reads YAML documents into stepd's JSON values (package
// value): objects keep their keys in document order and numbers keep their
// text, so a YAML definition or template means exactly what the same JSON
// would. It is the only importer of the YAML library (go.yaml.in/yaml/v3,
// see docs/development.md's dependency section).
//
// Rules: one document per file; plain scalars resolve as YAML 1.2's core
// schema does (true/false, null and ~, numbers; yes/no/on/off stay
// strings); an integer or decimal that is already JSON keeps its text
// (12345678901234567890123 stays that number, 1.50 stays 1.50), other
// number forms (0x1F, 0o17, +1, .5) are converted to JSON numbers, .inf and
// .nan are refused (JSON has neither); timestamps and binaries stay
// strings; anchors and aliases and merge keys (<<) are expanded, within a
// budget; a key that appears twice in a mapping is refused, or, for a
// caller that takes warnings (ParseWarn), reported with both lines and
// the last value kept, as SAM CLI keeps it; keys must be scalars. A local tag
// (!Sub, !Ref …) is handed to the caller's Tags function, and refused when
// there is none.
//
// It imports only value, and must not import definition or template,
// which read through it, nor anything above them.
package yamlvalue

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
	yaml "go.yaml.in/yaml/v3"
)

// MaxNodes bounds the values a document may expand to (aliases included),
// so a small file of nested aliases cannot take the memory of a large one.
const MaxNodes = 1 << 20

// maxDepth bounds the nesting of a document, as value.Parse does.
const maxDepth = 10000

// TagFunc turns a value written with a local tag (tag is e.g. "!Sub") into
// its meaning. v is the tagged node's value: a string for a scalar, []any
// for a sequence, *value.Object for a mapping.
type TagFunc func(tag string, v any) (any, error)

// Error is a problem at a place in the document (1-based line and column;
// 0 when unknown).
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "invalid YAML: " + e.Msg
	}
	if e.Column == 0 {
		return fmt.Sprintf("%d: invalid YAML: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%d:%d: invalid YAML: %s", e.Line, e.Column, e.Msg)
}

// WarnFunc is told of what a document holds that is kept but may be a
// mistake: a key given twice in a mapping (the last value is kept).
type WarnFunc func(w *Error)

// Parse reads one YAML document. tags handles local tags (nil: refuse
// them). An empty document is an error, and so is a key given twice.
func Parse(data []byte, tags TagFunc) (any, error) { return ParseWarn(data, tags, nil) }

// ParseWarn is Parse, telling warn of a key given twice in a mapping
// (the last value is kept, as SAM CLI keeps it) instead of refusing it;
// warn nil refuses it.
func ParseWarn(data []byte, tags TagFunc, warn WarnFunc) (any, error) {
	doc, next, err := decode(data)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "the document is empty"}
		}
		return nil, libError(data, err)
	}
	if next != nil {
		return nil, &Error{Line: next.Line, Column: next.Column, Msg: "more than one document (---): a file holds one"}
	}
	c := &converter{tags: tags, warn: warn}
	return c.node(doc, 0)
}

// decode reads the first document of data, and the start of a second one
// if there is one.
func decode(data []byte) (doc, next *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = &yaml.Node{}
	if err := dec.Decode(doc); err != nil {
		return nil, nil, err
	}
	next = &yaml.Node{}
	if err := dec.Decode(next); errors.Is(err, io.EOF) {
		return doc, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	return doc, next, nil
}

var lineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// libError turns the library's error into an *Error with its line.
//
// The library names the line where the construct being parsed began (a
// block mapping's first key) rather than the line of the problem, so an
// indentation slip on line 5 of a mapping that starts on line 2 reads as
// line 2. The line of the problem is the first line whose end, when the
// document is cut there, brings the same error: found by reading the
// document cut after each line from the library's line on, within a budget
// of bytes read (past it, the library's line stands).
func libError(data []byte, err error) error {
	msg := err.Error()
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	if at := problemLine(data, msg, line); at > 0 {
		line = at
	}
	return &Error{Line: line, Msg: m[2]}
}

// locateBudget bounds the bytes problemLine reads in all.
const locateBudget = 32 << 20

// problemLine returns the first line, from line from on (1-based), at
// whose end the document cut there fails with the error msg; 0 when none
// does within the budget.
func problemLine(data []byte, msg string, from int) int {
	read := 0
	end, line := 0, 0 // data[:end] holds the first line lines
	for end < len(data) {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
		} else {
			end += i + 1
		}
		line++
		if line < from {
			continue
		}
		if read += end; read > locateBudget {
			return 0
		}
		if _, _, err := decode(data[:end]); err != nil && err.Error() == msg {
			return line
		}
	}
	return 0
}

type converter struct {
	tags  TagFunc
	warn  WarnFunc
	nodes int
}

func errAt(n *yaml.Node, format string, args ...any) error {
	return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) node(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errAt(n, "nested more than %d levels deep", maxDepth)
	}
	c.nodes++
	if c.nodes > MaxNodes {
		return nil, errAt(n, "the document expands to more than %d values (aliases included)", MaxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, errAt(n, "the document is empty")
		}
		return c.node(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errAt(n, "unknown anchor %q", n.Value)
		}
		return c.node(n.Alias, depth+1)
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.node(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return c.tagged(n, out)
	case yaml.MappingNode:
		o, err := c.mapping(n, depth)
		if err != nil {
			return nil, err
		}
		return c.tagged(n, o)
	}
	return nil, errAt(n, "unexpected YAML node")
}

// local reports whether n carries a local tag (!Name, not !!type or !).
func local(n *yaml.Node) bool {
	return strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") && n.Tag != "!"
}

func (c *converter) tagged(n *yaml.Node, v any) (any, error) {
	if !local(n) {
		switch n.Kind {
		case yaml.SequenceNode:
			if t := n.ShortTag(); t != "!!seq" {
				return nil, errAt(n, "tag %s is not supported on a sequence", n.Tag)
			}
		case yaml.MappingNode:
			if t := n.ShortTag(); t != "!!map" {
				return nil, errAt(n, "tag %s is not supported on a mapping", n.Tag)
			}
		}
		return v, nil
	}
	if c.tags == nil {
		return nil, errAt(n, "tag %s is not supported here", n.Tag)
	}
	out, err := c.tags(n.Tag, v)
	if err != nil {
		return nil, errAt(n, "%s: %v", n.Tag, err)
	}
	return out, nil
}

var (
	jsonInt    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
	yamlInt    = regexp.MustCompile(`^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)$`)
)

func (c *converter) scalar(n *yaml.Node) (any, error) {
	if local(n) {
		return c.tagged(n, n.Value)
	}
	tag := n.ShortTag()
	if tag == "!!str" && n.Style == 0 {
		// A plain number the library could not hold in 64 bits.
		text := strings.ReplaceAll(n.Value, "_", "")
		if jsonNumber.MatchString(text) {
			return value.Number(text), nil
		}
		if yamlInt.MatchString(text) {
			return intNumber(n, text)
		}
	}
	switch tag {
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, errAt(n, "%q is not a boolean", n.Value)
		}
		return b, nil
	case "!!int":
		text := strings.ReplaceAll(n.Value, "_", "")
		if jsonInt.MatchString(text) {
			return value.Number(text), nil
		}
		return intNumber(n, text)
	case "!!float":
		text := strings.ReplaceAll(n.Value, "_", "")
		if jsonNumber.MatchString(text) {
			return value.Number(text), nil
		}
		if jsonInt.MatchString(strings.TrimPrefix(text, "+")) {
			return value.Number(strings.TrimPrefix(text, "+")), nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
			return nil, errAt(n, "%q is not a number JSON can hold", n.Value)
		}
		return value.Float(f), nil
	default:
		return nil, errAt(n, "tag %s is not supported", tag)
	}
}

// intNumber converts YAML integer forms that are not JSON (+5, 0x1F, 0o17,
// 0b101, 017) to decimal text.
func intNumber(n *yaml.Node, text string) (any, error) {
	neg := false
	t := text
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(t, "0x"), strings.HasPrefix(t, "0X"):
		base, t = 16, t[2:]
	case strings.HasPrefix(t, "0o"), strings.HasPrefix(t, "0O"):
		base, t = 8, t[2:]
	case strings.HasPrefix(t, "0b"), strings.HasPrefix(t, "0B"):
		base, t = 2, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	i, ok := new(big.Int).SetString(t, base)
	if !ok {
		return nil, errAt(n, "%q is not an integer", n.Value)
	}
	if neg {
		i.Neg(i)
	}
	return value.Number(i.String()), nil
}

func (c *converter) mapping(n *yaml.Node, depth int) (*value.Object, error) {
	if len(n.Content)%2 != 0 {
		return nil, errAt(n, "a mapping with a key and no value")
	}
	o := value.NewObject(len(n.Content) / 2)
	explicit := map[string]*yaml.Node{} // the key's latest occurrence
	var merges []*yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		for k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, errAt(k, "a key must be a scalar, not a sequence or mapping")
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if local(k) {
			return nil, errAt(k, "a key cannot carry the tag %s", k.Tag)
		}
		if prev := explicit[k.Value]; prev != nil {
			if c.warn == nil {
				return nil, errAt(k, "the key %q appears twice in this mapping (lines %d and %d)", k.Value, prev.Line, k.Line)
			}
			c.warn(&Error{Line: k.Line, Column: k.Column,
				Msg: fmt.Sprintf("the key %q appears twice in this mapping, on lines %d and %d: the value of line %d is kept", k.Value, prev.Line, k.Line, k.Line)})
		}
		explicit[k.Value] = k
	}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		for k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.ShortTag() == "!!merge" {
			continue
		}
		v, err := c.node(n.Content[i+1], depth+1)
		if err != nil {
			return nil, err
		}
		o.Set(k.Value, v)
	}
	// Merged keys: an explicit key wins, then the earlier source.
	for _, m := range merges {
		v, err := c.node(m, depth+1)
		if err != nil {
			return nil, err
		}
		var sources []any
		switch v := v.(type) {
		case *value.Object:
			sources = []any{v}
		case []any:
			sources = v
		default:
			return nil, errAt(m, "a merge key (<<) takes a mapping or a sequence of mappings")
		}
		for _, s := range sources {
			so, ok := s.(*value.Object)
			if !ok {
				return nil, errAt(m, "a merge key (<<) takes a mapping or a sequence of mappings")
			}
			for j := 0; j < so.Len(); j++ {
				key, val := so.At(j)
				if !o.Has(key) {
					o.Set(key, val)
				}
			}
		}
	}
	return o, nil
}
