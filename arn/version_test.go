package arn_test

import (
	"strings"
	"testing"

	"github.com/stepd/stepd/arn"
)

func TestQualified(t *testing.T) {
	s := arn.Scope{Region: "us-east-1", Account: "1"}
	for _, c := range []struct {
		in, sm, q string
		version   bool
		ok        bool
	}{
		{s.Version("m", 3), s.StateMachine("m"), "3", true, true},
		{s.Alias("m", "live"), s.StateMachine("m"), "live", false, true},
		{s.Alias("m", "007"), s.StateMachine("m"), "007", false, true}, // not a version number: no alias may be named so
		{s.StateMachine("m"), "", "", false, false},
		{s.Execution("m", "e"), "", "", false, false},
		{s.StateMachine("m") + ":", "", "", false, false},
		{s.StateMachine("m") + ":1:2", "", "", false, false},
		{"arn:aws:lambda:us-east-1:1:function:f:3", "", "", false, false},
	} {
		sm, q, version, ok := arn.Qualified(c.in)
		if sm != c.sm || q != c.q || version != c.version || ok != c.ok {
			t.Errorf("Qualified(%q) = %q %q %v %v, want %q %q %v %v", c.in, sm, q, version, ok, c.sm, c.q, c.version, c.ok)
		}
	}
}

// FuzzQualified: a qualified ARN is its state machine's ARN, ":" and the
// qualifier, and a version's qualifier is a positive number.
func FuzzQualified(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:1:stateMachine:m:3")
	f.Add("arn:aws:states:us-east-1:1:stateMachine:m:live")
	f.Add("arn:aws:states:::stateMachine:m:0")
	f.Fuzz(func(t *testing.T, s string) {
		sm, q, version, ok := arn.Qualified(s)
		if !ok {
			return
		}
		if sm+":"+q != s || q == "" || strings.Contains(q, ":") {
			t.Fatalf("Qualified(%q) = %q %q", s, sm, q)
		}
		if version && (q[0] == '0' || strings.Trim(q, "0123456789") != "") {
			t.Fatalf("Qualified(%q): version %q", s, q)
		}
		if a, err := arn.Parse(sm); err != nil || a.Type != arn.StateMachine || len(a.Names) != 1 {
			t.Fatalf("Qualified(%q): state machine %q (%v)", s, sm, err)
		}
	})
}
