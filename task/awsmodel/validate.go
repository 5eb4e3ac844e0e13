package awsmodel

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/stepd/stepd/task/awsmodel/internal/wire"
	"github.com/stepd/stepd/value"
)

// Mode is how strictly a result is checked (TestState's
// mock.fieldValidationMode).
type Mode int

// The modes.
const (
	// Strict: required members must be present, and present members
	// must conform. The default.
	Strict Mode = iota
	// Present: present members must conform.
	Present
	// None: no check.
	None
)

// ErrMode reports a mode name other than STRICT, PRESENT and NONE.
var ErrMode = errors.New("unknown field validation mode")

// ParseMode reads a fieldValidationMode; empty is Strict.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "STRICT":
		return Strict, nil
	case "PRESENT":
		return Present, nil
	case "NONE":
		return None, nil
	}
	return Strict, fmt.Errorf("%w: %q", ErrMode, s)
}

// FieldError is a result member that does not conform to its shape.
type FieldError struct {
	// Field is the member's name (the name of the list or map for its
	// items); empty for the result itself.
	Field string
	// Problem says what is wrong, as AWS words it ("must be a number").
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return "Result " + e.Problem
	}
	return fmt.Sprintf("Field '%s' %s", e.Field, e.Problem)
}

// Member returns the member that does not conform, "" for the result
// itself.
func (e *FieldError) Member() string { return e.Field }

// CheckResult checks result (a value of package value), mocked in
// TestState for a Task state that calls resource, against that API's
// output shape in the field validation mode given (see ParseMode): nil
// when it conforms, when the mode is NONE or when there is no model for
// resource; a *FieldError for the first member that does not conform;
// another error for a mode it does not know or models it cannot read.
func CheckResult(resource, mode string, result any) error {
	md, err := ParseMode(mode)
	if err != nil {
		return err
	}
	shape, ok, err := ResultShape(resource)
	if err != nil || !ok {
		return err
	}
	return shape.Check(result, md)
}

// The problems, worded as AWS's TestState words them.
const (
	mustBeString  = "must be a string"
	mustBeNumber  = "must be a number"
	mustBeBoolean = "must be a boolean"
	mustBeArray   = "must be an array"
	mustBeObject  = "must be an object"
	tooShort      = "is smaller than the minimum length"
	tooLong       = "exceeds the maximum length"
	tooSmall      = "is less than the minimum value"
	tooLarge      = "exceeds the maximum value"
	notInEnum     = "is not an expected value"
	missing       = "is required"
)

// Check checks a result (a value of package value) against the shape and
// returns the first member that does not conform as a *FieldError, or
// nil. Members the model does not have are accepted, as AWS accepts them;
// a null member counts as absent.
func (s Shape) Check(result any, mode Mode) error {
	if mode == None || s.svc == nil {
		return nil
	}
	c := checker{svc: s.svc, strict: mode == Strict, optimized: s.optimized}
	return c.check("", s.i, result)
}

type checker struct {
	svc       *wire.Service
	strict    bool
	optimized bool
}

func (c *checker) check(field string, i int, v any) error {
	sh := &c.svc.Shapes[i]
	fail := func(problem string) error { return &FieldError{Field: field, Problem: problem} }
	switch sh.Type {
	case wire.Structure:
		o, ok := v.(*value.Object)
		if !ok {
			return fail(mustBeObject)
		}
		if c.strict {
			for _, r := range sh.Required {
				if m, ok := o.Get(r); !ok || m == nil {
					return &FieldError{Field: r, Problem: missing}
				}
			}
		}
		for _, m := range sh.Members {
			mv, ok := o.Get(m.Name)
			if !ok || mv == nil {
				continue
			}
			if err := c.check(m.Name, m.Shape, mv); err != nil {
				return err
			}
		}
	case wire.List:
		arr, ok := v.([]any)
		if !ok {
			return fail(mustBeArray)
		}
		if err := checkLength(field, sh, len(arr)); err != nil {
			return err
		}
		for _, item := range arr {
			if err := c.check(field, sh.Elem, item); err != nil {
				return err
			}
		}
	case wire.Map:
		o, ok := v.(*value.Object)
		if !ok {
			return fail(mustBeObject)
		}
		if err := checkLength(field, sh, o.Len()); err != nil {
			return err
		}
		for _, item := range o.All {
			if err := c.check(field, sh.Elem, item); err != nil {
				return err
			}
		}
	case wire.String:
		str, ok := v.(string)
		if !ok {
			return fail(mustBeString)
		}
		if len(sh.Enum) > 0 && !slices.Contains(sh.Enum, str) {
			return fail(notInEnum)
		}
		return checkLength(field, sh, utf8.RuneCountInString(str))
	case wire.Blob:
		if c.optimized {
			// Optimized integrations return a blob (Lambda's Payload) as
			// the JSON value it holds.
			return nil
		}
		str, ok := v.(string)
		if !ok {
			return fail(mustBeString)
		}
		return checkLength(field, sh, utf8.RuneCountInString(str))
	case wire.Integer, wire.Float:
		n, ok := v.(value.Number)
		if !ok {
			return fail(mustBeNumber)
		}
		f := n.Float64()
		if sh.Min != nil && f < *sh.Min {
			return fail(tooSmall)
		}
		if sh.Max != nil && f > *sh.Max {
			return fail(tooLarge)
		}
	case wire.Boolean:
		if _, ok := v.(bool); !ok {
			return fail(mustBeBoolean)
		}
	case wire.Timestamp:
		// Step Functions renders timestamps as text; epoch seconds are
		// accepted too.
		switch v.(type) {
		case string, value.Number:
		default:
			return fail(mustBeString)
		}
	}
	return nil
}

// checkLength checks the length of a string, blob, list or map.
func checkLength(field string, sh *wire.Shape, n int) error {
	if sh.Min != nil && float64(n) < *sh.Min {
		return &FieldError{Field: field, Problem: tooShort}
	}
	if sh.Max != nil && float64(n) > *sh.Max {
		return &FieldError{Field: field, Problem: tooLong}
	}
	return nil
}
