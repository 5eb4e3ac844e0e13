// Package intrinsic parses and evaluates the ASL intrinsic functions
// (States.Format, States.ArrayPartition, States.MathAdd, ... — all 18 of
// them) as AWS Step Functions does in JSONPath mode.
//
// A call is parsed once into a Call tree. Arguments are string literals in
// single quotes (with \' \{ \} \\ escapes), numbers, true/false/null, paths
// ($..., $$...) and variable references ($name...), and nested calls. Paths
// are resolved at evaluation time through a Resolver supplied by the
// interpreter. Run-time failures are *Error values with the ASL error name
// States.IntrinsicFailure.
package intrinsic

import (
	"fmt"
	"strings"
)

// Resolver resolves the path and variable arguments of a call.
type Resolver interface {
	// Resolve returns the value of a path argument such as "$.a",
	// "$$.Execution.Id" or "$var.field".
	Resolve(path string) (any, error)
}

// Call is a parsed intrinsic function call. It is immutable.
type Call struct {
	Name string // e.g. "States.Format"
	Args []Arg
	text string
	fn   *function
}

// Arg is one argument: exactly one of its fields is meaningful, by Kind.
type Arg struct {
	Kind  ArgKind
	Value any    // ArgLiteral: a JSON value
	Path  string // ArgPath
	Call  *Call  // ArgCall
	// Raw is a string literal as written, escapes included.
	Raw string
}

// ArgKind tells what an argument is.
type ArgKind uint8

// The argument kinds.
const (
	ArgLiteral ArgKind = iota
	ArgPath
	ArgCall
)

// String returns the call as written.
func (c *Call) String() string { return c.text }

// Paths returns the path arguments of the call and its nested calls.
func (c *Call) Paths() []string {
	var out []string
	for _, a := range c.Args {
		switch a.Kind {
		case ArgPath:
			out = append(out, a.Path)
		case ArgCall:
			out = append(out, a.Call.Paths()...)
		}
	}
	return out
}

// IsCall reports whether s is an intrinsic function call rather than a path.
func IsCall(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "States.")
}

// Error is a run-time failure of a call.
type Error struct {
	Name  string // States.IntrinsicFailure
	Cause string
}

func (e *Error) Error() string { return e.Cause }

// CauseText returns the cause as AWS reports it.
func (e *Error) CauseText() string { return e.Cause }

func failf(format string, args ...any) *Error {
	return &Error{Name: "States.IntrinsicFailure", Cause: fmt.Sprintf(format, args...)}
}

// SyntaxError is a malformed call.
type SyntaxError struct {
	Text   string
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid intrinsic function call %q at offset %d: %s", e.Text, e.Offset, e.Msg)
}

// Eval evaluates the call.
func (c *Call) Eval(r Resolver) (any, error) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		switch a.Kind {
		case ArgLiteral:
			args[i] = a.Value
		case ArgPath:
			v, err := r.Resolve(a.Path)
			if err != nil {
				return nil, err
			}
			args[i] = v
		case ArgCall:
			v, err := a.Call.Eval(r)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
	}
	v, err := c.fn.eval(c, args)
	if err != nil {
		return nil, err
	}
	return v, nil
}
