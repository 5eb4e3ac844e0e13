package arn

import (
	"strconv"
	"strings"
)

// Version returns the ARN of version n of state machine sm.
func (s Scope) Version(sm string, n int64) string {
	return s.states(StateMachine, sm, strconv.FormatInt(n, 10))
}

// Alias returns the ARN of alias name of state machine sm.
func (s Scope) Alias(sm, name string) string { return s.states(StateMachine, sm, name) }

// Qualified splits the ARN of a state machine's version or alias
// (…:stateMachine:name:qualifier) into the state machine's ARN and the
// qualifier; ok is false for any other ARN. version tells whether the
// qualifier is a version number (alias names are never all digits).
func Qualified(s string) (stateMachine, qualifier string, version, ok bool) {
	typ, names, ok := StatesNames(s)
	if !ok || typ != StateMachine {
		return "", "", false, false
	}
	if name, q, two := strings.Cut(names, ":"); !two || name == "" || q == "" || strings.IndexByte(q, ':') >= 0 {
		return "", "", false, false
	}
	i := strings.LastIndexByte(s, ':')
	q := s[i+1:]
	n, err := strconv.ParseInt(q, 10, 64)
	return s[:i], q, err == nil && n > 0 && strconv.FormatInt(n, 10) == q, true
}
