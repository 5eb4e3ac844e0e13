package jsonpath

import (
	"fmt"

	"github.com/stepd/stepd/value"
)

// SetError is a reference path that cannot be applied to a value; AWS fails
// the state with States.ResultPathMatchFailure and Error's text as the cause.
type SetError struct {
	Path   string // the path as written
	Input  any    // the value the path was applied to
	Reason string // what went wrong, for logs and tests
}

// Error returns AWS's cause text, e.g.
// `Unable to apply ReferencePath $.a.b to input {"a":"x"}`.
func (e *SetError) Error() string {
	return "Unable to apply ReferencePath " + e.Path + " to input " + value.String(e.Input)
}

// Set returns a copy of root with v placed at the path, which must be a
// reference path (only member names and single indexes). "$" returns v.
// Only the containers along the path are copied; root is never modified. A
// missing or null member before the last one is created as an object.
// Setting a member of a non-object, or an index of a non-array or past its
// end, is a *SetError.
func (p *Path) Set(root, v any) (any, error) {
	if !p.isReference() {
		return nil, &SetError{Path: p.text, Input: root, Reason: "not a reference path"}
	}
	out, reason := p.set(root, 0, v)
	if reason != "" {
		return nil, &SetError{Path: p.text, Input: root, Reason: reason}
	}
	return out, nil
}

func (p *Path) set(cur any, i int, v any) (any, string) {
	if i == len(p.segs) {
		return v, ""
	}
	s := &p.segs[i]
	if s.kind == segName {
		var o *value.Object
		switch x := cur.(type) {
		case *value.Object:
			o = x
		case nil:
			o = value.NewObject(1)
		default:
			return nil, fmt.Sprintf("cannot set member '%s' of %s at %s", s.name, value.KindOf(cur), p.normalized(i))
		}
		child, _ := o.Get(s.name)
		nv, reason := p.set(child, i+1, v)
		if reason != "" {
			return nil, reason
		}
		return o.With(s.name, nv), ""
	}
	a, ok := cur.([]any)
	if !ok {
		return nil, fmt.Sprintf("cannot set index %d of %s at %s", s.index, foundName(cur), p.normalized(i))
	}
	j := normIndex(s.index, len(a))
	if j < 0 {
		return nil, fmt.Sprintf("index %d is out of bounds of the array at %s (length %d)", s.index, p.normalized(i), len(a))
	}
	nv, reason := p.set(a[j], i+1, v)
	if reason != "" {
		return nil, reason
	}
	c := make([]any, len(a))
	copy(c, a)
	c[j] = nv
	return c, ""
}
