package api

import (
	"encoding/json"
	"errors"
	"testing"
)

type decodeProbe struct {
	listInput
	StateMachineArn string `json:"stateMachineArn"`
	Publish         bool   `json:"publish"`
	Tags            []tag  `json:"tags"`
	Routes          []struct {
		Weight *int `json:"weight"`
	} `json:"routingConfiguration"`
	Tracing *struct {
		Enabled bool `json:"enabled"`
	} `json:"tracingConfiguration"`
}

// TestDecodeCaseSensitive: a member whose name differs from a field's only
// in case is a member AWS's model does not define, ignored at any depth.
func TestDecodeCaseSensitive(t *testing.T) {
	var in decodeProbe
	if err := decode([]byte(`{"StateMachineArn":"x","MaxResults":5,"tags":[{"Key":"k","value":"v"}],"tracingConfiguration":{"Enabled":true},"extra":1}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.StateMachineArn != "" || in.MaxResults != 0 || in.Tags[0].Key != "" || in.Tags[0].Value != "v" || in.Tracing.Enabled {
		t.Errorf("members matched ignoring case: %+v", in)
	}
	in = decodeProbe{}
	if err := decode([]byte(`{"stateMachineArn":"x","maxResults":5}`), &in); err != nil || in.StateMachineArn != "x" || in.MaxResults != 5 {
		t.Errorf("exact members: %+v %v", in, err)
	}
	// Both spellings: the exact one is taken, whatever the order.
	in = decodeProbe{}
	if err := decode([]byte(`{"stateMachineArn":"x","StateMachineArn":"y"}`), &in); err != nil || in.StateMachineArn != "x" {
		t.Errorf("both spellings: %+v %v", in, err)
	}
}

// TestDecodeTypeErrors: a member of the wrong type is answered in AWS's
// deserializer's words, with the member's path, never Go's.
func TestDecodeTypeErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"maxResults":"1"}`, "STRING_VALUE can not be converted to an Integer (member 'maxResults')"},
		{`{"maxResults":true}`, "TRUE_VALUE can not be converted to an Integer (member 'maxResults')"},
		{`{"maxResults":[1]}`, "Start of list found where not expected (member 'maxResults')"},
		{`{"maxResults":{"a":1}}`, "Start of structure or map found where not expected. (member 'maxResults')"},
		{`{"maxResults":1.5}`, "NUMBER_VALUE can not be converted to an Integer (member 'maxResults')"},
		{`{"stateMachineArn":1}`, "NUMBER_VALUE can not be converted to a String (member 'stateMachineArn')"},
		{`{"publish":"yes"}`, "STRING_VALUE can not be converted to an Boolean (member 'publish')"},
		{`{"tags":"x"}`, "Expected list or null (member 'tags')"},
		{`{"tracingConfiguration":"x"}`, "Expected null (member 'tracingConfiguration')"},
		{`{"tracingConfiguration":{"enabled":"x"}}`, "STRING_VALUE can not be converted to an Boolean (member 'tracingConfiguration.enabled')"},
		{`{"tags":[{"key":false}]}`, "FALSE_VALUE can not be converted to a String (member 'tags.key')"},
		{`{"routingConfiguration":[{"weight":"1"}]}`, "STRING_VALUE can not be converted to an Integer (member 'routingConfiguration.weight')"},
		{`[]`, "Start of list found where not expected"},
	} {
		var in decodeProbe
		err := decode([]byte(c.body), &in)
		var ae *apiError
		if !errors.As(err, &ae) || ae.code != "SerializationException" || ae.message != c.want {
			t.Errorf("%s: %v, want SerializationException %q", c.body, err, c.want)
		}
	}
	if _, err := arnOnly([]byte(`{"stateMachineArn":7}`), "stateMachineArn"); err == nil || err.Error() != "SerializationException: NUMBER_VALUE can not be converted to a String (member 'stateMachineArn')" {
		t.Errorf("arnOnly of a number: %v", err)
	}
}

// FuzzDecode: any body decodes or is refused with AWS's codes, never with
// Go's words; what decodes exactly decodes the same after the members of
// foreign case are dropped.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"stateMachineArn":"x"}`, `{"StateMachineArn":"x","maxResults":"2"}`, `{"tags":[{"KEY":"k"}]}`, `[1]`, `{"a\"b":1}`, `{"x":"\":"}`, `"`, `{"maxResults":1e999}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var in decodeProbe
		err := decode([]byte(body), &in)
		if err == nil {
			return
		}
		var ae *apiError
		if !errors.As(err, &ae) {
			t.Fatalf("%q: %v is not an API error", body, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			t.Fatalf("%q: Go's type error leaked: %v", body, err)
		}
		for _, bad := range []string{"Go struct", "Go value", "decodeProbe", "listInput"} {
			if contains(ae.message, bad) {
				t.Fatalf("%q: Go internals in %q", body, ae.message)
			}
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
