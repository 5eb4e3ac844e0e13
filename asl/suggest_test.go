package asl

import (
	"slices"
	"testing"
)

func TestNearest(t *testing.T) {
	fields := []string{"Type", "Next", "End", "ResultPath", "Resource", "Parameters", "Comment", "InputPath", "OutputPath"}
	for _, tt := range []struct{ name, want string }{
		{"Ende", "End"},
		{"next", "Next"},
		{"ResultPth", "ResultPath"},
		{"Paramaters", "Parameters"},
		{"Resourse", "Resource"},
		{"OutputPat", "OutputPath"},
		{"Retry", ""}, // too far from every field
		{"X", ""},     // one letter: nothing within one edit
		{"End", ""},   // itself is not a suggestion
		{"Tpye", ""},  // a transposition is two edits: too many for 4 letters
		{"Coment", "Comment"},
	} {
		if got := nearest(tt.name, slices.Values(fields)); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestUnknownFieldHint checks that the parser gives the nearest field as a
// hint, outside AWS's message.
func TestUnknownFieldHint(t *testing.T) {
	_, err := Parse([]byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","Ende":true},"Q":{"Type":"Succed"}},"Commment":"x"}`))
	diags, _ := err.(Diagnostics)
	hints := map[string]string{}
	for _, d := range diags {
		hints[d.Pointer] = d.Hint
		if d.Pointer == "/States/P/Ende" && d.Message != "Field 'Ende' is not supported" {
			t.Errorf("AWS's message changed: %q", d.Message)
		}
	}
	if hints["/States/P/Ende"] != "did you mean 'End'?" || hints["/Commment"] != "did you mean 'Comment'?" || hints["/States/Q/Type"] != "did you mean 'Succeed'?" {
		t.Errorf("hints %v (diagnostics %v)", hints, diags)
	}
}
