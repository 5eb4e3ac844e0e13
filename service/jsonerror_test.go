package service

import (
	"testing"

	"github.com/stepd/stepd/value"
)

// TestJSONProblem: an input that is not JSON is described as AWS's Jackson
// parser describes it (the first two from AWS-recorded StartExecution
// answers).
func TestJSONProblem(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"not json", "Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"},
		{"{'not': 'json'}", "Unexpected character (''' (code 39)): was expecting double-quote to start field name"},
		{"", "Invalid execution input."},
		{"  \n", "Invalid execution input."},
		{`{"a" 1}`, "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value"},
		{`{"a":1 "b":2}`, "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries"},
		{`[1 2]`, "Unexpected character ('2' (code 50)): was expecting comma to separate Array entries"},
		{`{"a":`, "Unexpected end-of-input: expected a value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"},
		{`{"a":1`, "Unexpected end-of-input: expected close marker for Object"},
		{`"abc`, "Unexpected end-of-input: was expecting closing quote for a string value"},
		{"\"a\tb\"", "Illegal unquoted character (CTRL-CHAR, code 9): has to be escaped using backslash to be included in string value"},
		{`"\x"`, "Unrecognized character escape ('x' (code 120))"},
		{`01`, "Invalid numeric value: Leading zeroes not allowed"},
		{`[tru]`, "Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"},
		{`]`, "Unexpected character (']' (code 93)): expected a value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"},
	} {
		got, ok := jsonProblem(c.text)
		if !ok || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.text, got, ok, c.want)
		}
	}
	for _, text := range []string{`{}`, `[1,{"a":[true,false,null]}]`, `-1.5e+3`, `"\u00e9\n"`} {
		if got, ok := jsonProblem(text); ok {
			t.Errorf("%s is JSON, but: %q", text, got)
		}
	}
}

// FuzzJSONProblem: any text is read without panicking; a text the value
// parser takes has no fault, and a fault is always described.
func FuzzJSONProblem(f *testing.F) {
	for _, s := range []string{"not json", "{'a':1}", "", `{"a":[1,2,{"b":"\u0041"}]}`, `-0.5E-2`, `"\ud800"`, "[1,", `{"a"`, "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		msg, ok := jsonProblem(text)
		if ok && msg == "" {
			t.Fatalf("%q: a fault without a description", text)
		}
		if _, err := value.ParseString(text); err == nil && ok {
			t.Fatalf("%q is JSON to the value parser, but: %q", text, msg)
		}
	})
}
