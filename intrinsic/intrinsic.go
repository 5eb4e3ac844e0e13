// Package intrinsic parses and evaluates the ASL intrinsic functions
// (States.Format, States.ArrayPartition, States.MathAdd, ... — all 18 of
// them) as AWS Step Functions does in JSONPath mode.
//
// A call is parsed once into a Call tree. Arguments are string literals in
// single quotes (with \' \{ \} \\ escapes), numbers, true/false/null, paths
// ($..., $$...) and variable references ($name...), and nested calls. Paths
// are resolved at evaluation time through a Resolver supplied by the
// interpreter. Run-time failures are *Error values with the ASL error name
// States.IntrinsicFailure; a path the Resolver cannot resolve comes back
// as a *PathError.
//
// Behaviour follows the AWS documentation and the recorded conformance
// cases: non-integer numeric arguments of ArrayPartition, ArrayRange,
// MathRandom and MathAdd are rounded half up and limited to 32 bits;
// States.Format writes arrays and objects as Java does ({k=v, ...});
// StringSplit splits at any of the delimiter's characters and drops empty
// parts; MathRandom's end is exclusive and a seed makes it deterministic.
// The cause texts of failures are our own wording: the recorded corpus has
// no failing intrinsic call to copy AWS's from.
//
// It must not import jsonata, interp or validate, which build on it, nor
// anything above them; like every pure package it reaches no I/O package
// (internal/layer).
package intrinsic

import (
	"fmt"
	mrand "math/rand/v2"
	"strings"
)

// Resolver resolves the path and variable arguments of a call.
type Resolver interface {
	// Resolve returns the value of a path argument such as "$.a",
	// "$$.Execution.Id" or "$var.field".
	Resolve(path string) (any, error)
}

// Rand is a source of random bits (interp.Rand and math/rand/v2's Source
// satisfy it).
type Rand interface {
	Uint64() uint64
}

// A RandResolver is a Resolver that also supplies the random values of
// States.UUID and of States.MathRandom without a seed, so that the caller
// decides where they come from (an execution draws them from a source it
// can seed and replay). With a plain Resolver, or a nil Rand, those
// functions draw from a source with a fixed seed: deterministic, never a
// global source.
type RandResolver interface {
	Resolver
	Rand() Rand
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
	// Raw is a string literal as written between its quotes, escapes
	// included (States.Format needs them to tell \{} from {}).
	Raw string
	// err is set for a string literal with an invalid escape: validation
	// refuses the definition (Call.EscapeError), and a call that runs
	// anyway fails.
	err *Error
}

// EscapeError returns the error of the first string literal, in c or a
// call nested in it, whose escape sequence is not one of \' \{ \} \\, or
// nil. ValidateStateMachineDefinition and CreateStateMachine refuse such a
// definition, as AWS does.
func (c *Call) EscapeError() error {
	for _, a := range c.Args {
		switch {
		case a.err != nil:
			return a.err
		case a.Kind == ArgCall && a.Call != nil:
			if err := a.Call.EscapeError(); err != nil {
				return err
			}
		}
	}
	return nil
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

// IsCall reports whether s, the value of a "x.$" field, is an intrinsic
// function call rather than a path: whether it starts with "States.".
func IsCall(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "States.")
}

// errorName is the ASL error name of every run-time failure of a call.
const errorName = "States.IntrinsicFailure"

// Error is a run-time failure of a call: the ASL error States.IntrinsicFailure
// with a cause text.
type Error struct {
	Name  string // always "States.IntrinsicFailure"
	Cause string
}

func (e *Error) Error() string { return e.Cause }

// CauseText returns the cause as AWS reports it.
func (e *Error) CauseText() string { return e.Cause }

func failf(format string, args ...any) *Error {
	return &Error{Name: errorName, Cause: fmt.Sprintf(format, args...)}
}

// SyntaxError is a malformed call, an unknown function or a wrong number of
// arguments: a definition error.
type SyntaxError struct {
	Text   string // the whole text given to Parse
	Offset int    // byte offset of the problem in Text
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid intrinsic function call %q at offset %d: %s", e.Text, e.Offset, e.Msg)
}

// PathError is a path argument that the Resolver could not resolve. Its
// text is the Resolver's, so that the caller decides how to report it.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Err.Error() }

// Unwrap returns the Resolver's error.
func (e *PathError) Unwrap() error { return e.Err }

// Eval evaluates the call: its arguments from left to right (paths through
// r, nested calls recursively), then the function. A failing function
// returns an *Error; a failing Resolver, a *PathError wrapping its error.
func (c *Call) Eval(r Resolver) (any, error) {
	args := make([]any, len(c.Args))
	for i, a := range c.Args {
		switch a.Kind {
		case ArgLiteral:
			if a.err != nil {
				return nil, a.err
			}
			args[i] = a.Value
		case ArgPath:
			v, err := r.Resolve(a.Path)
			if err != nil {
				return nil, &PathError{Path: a.Path, Err: err}
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
	if c.fn.random != nil {
		return c.fn.random(c, args, randOf(r))
	}
	return c.fn.eval(c, args)
}

// randOf returns r's random source, or a fixed-seed one.
func randOf(r Resolver) Rand {
	if rr, ok := r.(RandResolver); ok {
		if src := rr.Rand(); src != nil {
			return src
		}
	}
	return mrand.NewPCG(0, 0)
}
