package asl

import (
	"slices"
	"strings"
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
		{"Retry", ""},    // too far from every field
		{"X", ""},        // one letter: nothing within one edit
		{"End", ""},      // itself is not a suggestion
		{"Tpye", "Type"}, // a swap of neighbours is one edit
		{"Strat", ""},    // no field near: states are other candidates
		{"Coment", "Comment"},
	} {
		if got := Nearest(tt.name, slices.Values(fields)); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
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

// TestMissingTargetHint: a transition to a state that is not declared gets
// the nearest state name as a hint, for StartAt, Next, Default and the
// Next of Choice rules and Catch clauses; AWS's message is unchanged.
func TestMissingTargetHint(t *testing.T) {
	_, err := Parse([]byte(`{"StartAt":"Strat","States":{
		"Start":{"Type":"Pass","Next":"Edn"},
		"Pick":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"Strt"}],"Default":"Ennd"},
		"Work":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Catch":[{"ErrorEquals":["States.ALL"],"Next":"Pcik"}],"Next":"Elsewhere"},
		"End":{"Type":"Succeed"}}}`))
	diags, _ := err.(Diagnostics)
	want := map[string]string{
		"/StartAt":                     "did you mean 'Start'?",
		"/States/Start/Next":           "did you mean 'End'?",
		"/States/Pick/Choices[0]/Next": "did you mean 'Start'?",
		"/States/Pick/Default":         "did you mean 'End'?",
		"/States/Work/Catch[0]/Next":   "did you mean 'Pick'?",
		"/States/Work/Next":            "",
	}
	got := map[string]string{}
	for _, d := range diags {
		if d.Code == CodeMissingTarget {
			got[d.Pointer] = d.Hint
			if !strings.HasPrefix(d.Message, "Missing 'Next' target: ") {
				t.Errorf("AWS's message changed: %q", d.Message)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("missing-target diagnostics: %v, want %v", got, want)
	}
	for ptr, h := range want {
		if got[ptr] != h {
			t.Errorf("%s: hint %q, want %q", ptr, got[ptr], h)
		}
	}
}
