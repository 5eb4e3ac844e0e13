// Package validate checks state machine definitions the way AWS Step
// Functions does at CreateStateMachine and ValidateStateMachineDefinition
// time, and reports every problem as a positioned diagnostic with AWS's code
// and wording where AWS has one.
//
// Parsing (package asl) finds structural problems: JSON syntax, field types,
// required and exclusive fields, unknown state types, missing transition
// targets. This package adds the checks that need the whole graph or the
// expression languages: a terminal state, reachability, Retry and Catch
// rules, JSONPath, intrinsic function and JSONata syntax, resource ARNs,
// integration patterns that Express workflows do not support, and warnings.
//
// It must not import definition or template, which build on it, nor
// interp beside it, nor anything above them: the engine and the backends,
// the server (service, api …), conformance, bench, cmd/stepd. Like every
// pure package it reaches no net/http, os/exec, database/sql or AWS SDK
// package (internal/layer).
package validate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/value"
)

// Workflow types.
const (
	Standard = "STANDARD"
	Express  = "EXPRESS"
)

// Result is the outcome of validating one definition.
type Result struct {
	Machine     *asl.StateMachine // nil when the definition did not parse
	Diagnostics asl.Diagnostics   // errors and warnings, in the order found
}

// OK reports whether the definition has no errors (warnings allowed).
func (r *Result) OK() bool { return len(r.Diagnostics.Errors()) == 0 }

// Err returns the errors as an error, or nil.
func (r *Result) Err() error { return r.Diagnostics.Errors().Err() }

// Definition validates a definition given as JSON text, for a workflow of
// type typ (Standard when empty).
func Definition(data []byte, typ string) *Result {
	if len(strings.TrimSpace(string(data))) == 0 {
		return &Result{Diagnostics: asl.Diagnostics{{Code: "MISSING_DESCRIPTION", Message: "The definition is empty", Severity: asl.SeverityError}}}
	}
	v, err := value.Parse(data)
	if err != nil {
		return &Result{Diagnostics: asl.Diagnostics{jsonDiagnostic(data, err)}}
	}
	return Value(v, typ)
}

// Value validates a parsed definition.
func Value(v any, typ string) *Result {
	sm, d := asl.Build(v)
	if sm == nil {
		return &Result{Diagnostics: withSeverity(d)}
	}
	c := &checker{typ: typ, diags: withSeverity(d)}
	if c.typ == "" {
		c.typ = Standard
	}
	c.machine(sm, true)
	r := &Result{Machine: sm, Diagnostics: c.diags}
	if !r.OK() {
		r.Machine = nil
	}
	return r
}

func withSeverity(d asl.Diagnostics) asl.Diagnostics {
	for i := range d {
		if d[i].Severity == "" {
			d[i].Severity = asl.SeverityError
		}
	}
	return d
}

// Message renders errors as the InvalidDefinition message AWS returns from
// CreateStateMachine, e.g. "Invalid State Machine Definition:
// 'SCHEMA_VALIDATION_FAILED: ... at /States/X/Next'".
func Message(d asl.Diagnostics) string {
	var parts []string
	for _, x := range d.Errors() {
		loc := x.Pointer
		if loc == "" {
			loc = "null"
		}
		parts = append(parts, fmt.Sprintf("%s: %s at %s", x.Code, x.Message, loc))
	}
	return "Invalid State Machine Definition: '" + strings.Join(parts, ", ") + "'"
}

// jsonDiagnostic describes malformed JSON as AWS (Jackson) does where it
// can: an unrecognized token is named with its line and column.
func jsonDiagnostic(data []byte, err error) asl.Diagnostic {
	var se *value.SyntaxError
	off := 0
	msg := err.Error()
	if errors.As(err, &se) {
		off = se.Offset
		msg = se.Msg
	}
	line, col := 1, 1
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	src := string(data)
	if len(src) > 500 {
		src = src[:500]
	}
	if m := tokenRE.FindString(string(data[off:])); m != "" {
		end := col + len(m)
		loc := fmt.Sprintf("[Source: (String)%q; line: %d, column: %d]", src, line, end)
		return asl.Diagnostic{Pointer: loc, Code: asl.CodeInvalidJSON, Severity: asl.SeverityError,
			Message: fmt.Sprintf("Unrecognized token '%s': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at %s", m, loc), Err: err}
	}
	loc := fmt.Sprintf("[Source: (String)%q; line: %d, column: %d]", src, line, col)
	return asl.Diagnostic{Pointer: loc, Code: asl.CodeInvalidJSON, Severity: asl.SeverityError, Message: msg + "\n at " + loc, Err: err}
}

var tokenRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`)

type checker struct {
	typ   string
	diags asl.Diagnostics
	// seen holds the state names of the scopes checked so far: a name must
	// be unique in the whole state machine, nested scopes included.
	seen map[string]bool
}

func (c *checker) errorf(ptr, code, format string, args ...any) {
	c.diags = append(c.diags, asl.Diagnostic{Pointer: ptr, Code: code, Message: fmt.Sprintf(format, args...), Severity: asl.SeverityError})
}

// errorErr reports a SCHEMA_VALIDATION_FAILED error caused by err (a
// path's, an intrinsic call's or an expression's syntax error), kept as
// the diagnostic's Err so that an editor can place it inside the string.
func (c *checker) errorErr(ptr string, err error, format string, args ...any) {
	c.errorf(ptr, asl.CodeSchema, format, args...)
	c.diags[len(c.diags)-1].Err = err
}

func (c *checker) warnf(ptr, code, format string, args ...any) {
	c.diags = append(c.diags, asl.Diagnostic{Pointer: ptr, Code: code, Message: fmt.Sprintf(format, args...), Severity: asl.SeverityWarning})
}

// machine checks one state machine scope and its nested machines.
func (c *checker) machine(sm *asl.StateMachine, top bool) {
	terminal := false
	for _, name := range sm.Names {
		st := sm.States[name]
		if st.End || st.Type == "Succeed" || st.Type == "Fail" {
			terminal = true
		}
	}
	if !terminal {
		loc := ""
		if !top {
			loc = sm.Pointer
		}
		c.errorf(loc, asl.CodeMissingEnd, "Workflow has no terminal state")
	} else {
		c.reachable(sm)
	}
	for _, name := range sm.Names {
		st := sm.States[name]
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		if c.seen[name] {
			c.errorf(st.Pointer, asl.CodeDuplicateState, "Duplicate State name: %s", name)
		}
		c.seen[name] = true
		c.state(st)
		for _, b := range st.Branches {
			c.machine(b, false)
		}
		if st.ItemProcessor != nil {
			c.machine(st.ItemProcessor, false)
		}
	}
}

// reachable reports states that no transition reaches.
func (c *checker) reachable(sm *asl.StateMachine) {
	seen := map[string]bool{}
	queue := []string{sm.StartAt}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		st := sm.States[name]
		if st == nil || seen[name] {
			continue
		}
		seen[name] = true
		queue = append(queue, st.Next, st.Default)
		for _, r := range st.Choices {
			queue = append(queue, r.Next)
		}
		for _, k := range st.Catch {
			queue = append(queue, k.Next)
		}
	}
	for _, name := range sm.Names {
		if !seen[name] {
			c.errorf(sm.States[name].Pointer, asl.CodeMissingTarget, "State %q is not reachable.", name)
		}
	}
}
