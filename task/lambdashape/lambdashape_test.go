package lambdashape

import (
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func obj(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRefMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mock, ref string
		want      bool
	}{
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "fn", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "fn:prod", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "fn:7", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "111111111111:function:fn", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "arn:aws:lambda:us-east-1:111111111111:function:fn:$LATEST", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "arn:aws:lambda:eu-west-1:111111111111:function:fn", false},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "222222222222:function:fn", false},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", "fn2", false},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn:prod", "fn:prod", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn:prod", "fn", false},
		{"fn", "arn:aws:lambda:ap-south-1:333333333333:function:fn", true},
		{"fn:$LATEST", "fn", true},
	}
	for _, tt := range tests {
		m, ok1 := ParseRef(tt.mock)
		r, ok2 := ParseRef(tt.ref)
		if !ok1 || !ok2 {
			t.Fatalf("ParseRef(%q, %q) failed", tt.mock, tt.ref)
		}
		if got := m.Matches(r); got != tt.want {
			t.Errorf("%s serves %s = %v, want %v", tt.mock, tt.ref, got, tt.want)
		}
	}
	for _, bad := range []string{"", "a:b:c", "arn:aws:lambda:us-east-1:111111111111:layer:x", "fn with space", "fn:q:r:s:t"} {
		if _, ok := ParseRef(bad); ok {
			t.Errorf("ParseRef(%q) accepted", bad)
		}
	}
}

func TestPythonDumps(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"a":1,"b":[true,null,"x"]}`, `{"a": 1, "b": [true, null, "x"]}`},
		{`"é\u0001\t/\"\\"`, `"\u00e9\u0001\t/\"\\"`},
		{`"😀"`, `"\ud83d\ude00"`},
		{`{}`, `{}`},
		{`[]`, `[]`},
	}
	for _, tt := range tests {
		if got := string(pythonDumps(nil, obj(t, tt.in))); got != tt.want {
			t.Errorf("pythonDumps(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := PythonCause("not json"); got != "not json" {
		t.Errorf("PythonCause kept %q", got)
	}
}

func TestErrorResult(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, error, cause string
		ok               bool
	}{
		{`{"errorType":"ValueError","errorMessage":"bad"}`, "ValueError", `{"errorType":"ValueError","errorMessage":"bad"}`, true},
		{`{"Error":"My.Error","Cause":"why"}`, "My.Error", "why", true},
		{`{"Error":"My.Error","Cause":{"a":1}}`, "My.Error", `{"a":1}`, true},
		{`{"Error":"My.Error"}`, "My.Error", "", true},
		{`{"errorType":"","Error":""}`, "", "", false},
		{`{"result":1}`, "", "", false},
		{`["Error"]`, "", "", false},
		{`{not json`, "", "", false},
		{``, "", "", false},
	} {
		res, ok := ErrorResult([]byte(tt.in))
		if ok != tt.ok || res.Error != tt.error || res.Cause != tt.cause {
			t.Errorf("ErrorResult(%s) = %+v, %v; want %q %q %v", tt.in, res, ok, tt.error, tt.cause, tt.ok)
		}
	}
	if res := FunctionError([]byte("Segmentation fault")); res.Error != "Lambda.Unknown" || res.Cause != "Segmentation fault" {
		t.Errorf("FunctionError of text: %+v", res)
	}
	if res := PayloadResult(nil, "f"); res.Failed() || res.Output != nil {
		t.Errorf("PayloadResult of nothing: %+v", res)
	}
	if res := PayloadResult([]byte("oops"), "the function f"); res.Error != "States.TaskFailed" || !strings.HasPrefix(res.Cause, "the function f answered with something other than JSON") {
		t.Errorf("PayloadResult of text: %+v", res)
	}
}
