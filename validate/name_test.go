package validate

import (
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "order.2024-01-01", "user@example+1", "été", "my.machine", "名前", "x_Y-9", "(paren)", "a'b", "=!", strings.Repeat("é", 80)} {
		if err := CheckName("name", ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want accepted", ok, err)
		}
	}
	for _, bad := range []string{"a b", "tab\tx", "nbsp\u00a0x", "a<b", "a>b", "{", "}", "[", "]", "a?", "a*", `a"b`, "a#", "50%", `a\b`, "a^", "a|b", "a~", "a`", "$x", "a&b", "a,b", "a;b", "a:b", "a/b", "nul\x00", "del\x7f", "c1\u0085", "\ufffe", "bad\xffutf8"} {
		err := CheckName("name", bad)
		if err == nil || err.Code != "InvalidName" || err.Message != "Invalid Name: '"+bad+"'" {
			t.Errorf("CheckName(%q) = %v, want InvalidName", bad, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", 81), strings.Repeat("é", 81)} {
		if err := CheckName("name", bad); err == nil || err.Code != "ValidationException" || !strings.Contains(err.Message, "'name'") {
			t.Errorf("CheckName(%d chars) = %v, want a ValidationException naming the field", len(bad), err)
		}
	}
}

func FuzzCheckName(f *testing.F) {
	f.Add("order.2024-01-01")
	f.Add("a b")
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckName("name", name)
		if err == nil && (strings.ContainsAny(name, " <>{}[]?*\"#%\\^|~`$&,;:/\x00\n") || name == "") {
			t.Fatalf("accepted %q", name)
		}
	})
}

func TestCheckDefinitionLength(t *testing.T) {
	if err := CheckDefinitionLength("definition", strings.Repeat(" ", MaxDefinitionLength)); err != nil {
		t.Errorf("exactly 1 MiB: %v", err)
	}
	if err := CheckDefinitionLength("definition", strings.Repeat("é", MaxDefinitionLength)); err != nil {
		t.Errorf("1 Mi characters of two bytes: %v", err)
	}
	err := CheckDefinitionLength("definition", strings.Repeat(" ", MaxDefinitionLength+1))
	if err == nil || err.Code != "ValidationException" || !strings.Contains(err.Message, "'definition'") || !strings.Contains(err.Message, "1048576") {
		t.Errorf("1 MiB + 1: %v", err)
	}
}

func TestCheckInputSize(t *testing.T) {
	if err := CheckInputSize(`"` + strings.Repeat("x", MaxPayload-2) + `"`); err != nil {
		t.Errorf("exactly 256 KiB: %v", err)
	}
	if err := CheckInputSize(`"` + strings.Repeat("x", MaxPayload-1) + `"`); err == nil || err.Code != "InvalidExecutionInput" {
		t.Errorf("256 KiB + 1: %v", err)
	}
}

func TestExpressRefusesActivities(t *testing.T) {
	def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:work","End":true}}}`
	r := Definition([]byte(def), Express)
	want := "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support Activity ARN at /States/A/Resource'"
	if r.OK() || Message(r.Diagnostics) != want {
		t.Errorf("an Express machine with an activity: %q, want %q", Message(r.Diagnostics), want)
	}
	if r := Definition([]byte(def), Standard); !r.OK() {
		t.Errorf("a Standard machine with an activity: %v", Message(r.Diagnostics))
	}
}

func TestIntrinsicEscapesRefused(t *testing.T) {
	for _, expr := range []string{`States.Format('a\\qb')`, `States.Array(States.Format('x\\n'), 1)`} {
		def := `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"v.$":"` + expr + `"},"End":true}}}`
		r := Definition([]byte(def), Standard)
		if r.OK() || !strings.Contains(Message(r.Diagnostics), "invalid escape sequence") || !strings.Contains(Message(r.Diagnostics), "/States/P/Parameters") {
			t.Errorf("%s: %q, want a diagnostic naming the escape and the field", expr, Message(r.Diagnostics))
		}
	}
	ok := `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"v.$":"States.Format('a\\{\\}b \\' \\\\ {}', $.x)"},"End":true}}}`
	if r := Definition([]byte(ok), Standard); !r.OK() {
		t.Errorf("valid escapes refused: %s", Message(r.Diagnostics))
	}
}
