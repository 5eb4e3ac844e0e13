package yamlvalue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func TestParse(t *testing.T) {
	cases := []struct{ yaml, json string }{
		{"b: 1\na: 2\n", `{"b":1,"a":2}`},
		{"n: 12345678901234567890123\nf: 1.50\ne: 1e400\nx: -0\n", `{"n":12345678901234567890123,"f":1.50,"e":1e400,"x":-0}`},
		{"h: 0x1F\no: 0o17\nb: 0b101\np: +5\nd: .5\nq: +1.5\nbig: 0xFFFFFFFFFFFFFFFFFF\n", `{"h":31,"o":15,"b":5,"p":5,"d":0.5,"q":1.5,"big":4722366482869645213695}`},
		{"a: yes\nb: on\nc: true\nd: ~\ne: null\nf:\ng: 'true'\nh: 2001-12-14\ni: \"1\"\n", `{"a":"yes","b":"on","c":true,"d":null,"e":null,"f":null,"g":"true","h":"2001-12-14","i":"1"}`},
		{"base: &b {x: 1, y: 2}\nk:\n  <<: *b\n  y: 3\n  z: 4\n", `{"base":{"x":1,"y":2},"k":{"y":3,"z":4,"x":1}}`},
		{"k:\n  <<: [{a: 1}, {a: 2, b: 2}]\n", `{"k":{"a":1,"b":2}}`},
		{"l: [1, &a two, *a]\n200: ok\n", `{"l":[1,"two","two"],"200":"ok"}`},
		{"s: |\n  line1\n  line2\n", `{"s":"line1\nline2\n"}`},
		{"{\"a\": [1, 2.0, \"x\"]}", `{"a":[1,2.0,"x"]}`},
		{"- !!str 12\n- !!int \"7\"\n", `["12",7]`},
	}
	for _, c := range cases {
		v, err := Parse([]byte(c.yaml), nil)
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if got := value.String(v); got != c.json {
			t.Errorf("%q:\n got %s\nwant %s", c.yaml, got, c.json)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"", "empty"},
		{"a: 1\na: 2\n", `2:1: invalid YAML: the key "a" appears twice`},
		{"a: .inf\n", "not a number JSON can hold"},
		{"a: .nan\n", "not a number JSON can hold"},
		{"a: 1\n---\nb: 2\n", "more than one document"},
		{"a: !Ref x\n", "tag !Ref is not supported here"},
		{"? [a]\n: 1\n", "a key must be a scalar"},
		{"a: [\n", "invalid YAML"},
		{"a: !!set {x}\n", "not supported"},
		{"k:\n  <<: 5\n", "merge key"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}

// TestErrorLine: a syntax error is reported at the line of the problem,
// not at the line where the mapping or sequence around it began.
func TestErrorLine(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want string
	}{
		// an indentation slip on line 5 inside the mapping begun on line 3
		{"StartAt: A\nStates:\n  A:\n    Type: Pass\n   End: true\n", "5: invalid YAML: did not find expected key"},
		{"StartAt: A\nStates:\n  A:\n    Type: Pass\n    End: true\n      Foo: 1\n", "6: invalid YAML: mapping values are not allowed in this context"},
		{"StartAt: A\nStates:\n  A:\n    Type: Pass\n  \tEnd: true\n", "5: invalid YAML: found a tab character that violates indentation"},
		{"a: 1\nb:\n  - x\n  - y\n - z\nc: 2\n", "5: invalid YAML: "},
		{"a: 1\nb: 2\n---\nc: 3\n  d: 4\n", "5: invalid YAML: mapping values are not allowed in this context"},
		// a flow sequence left open: at its last line, not its first
		{"a: [1,\n  2,\n", "2: invalid YAML: did not find expected node content"},
	} {
		_, err := Parse([]byte(c.yaml), nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.yaml, err, c.want)
		}
	}
}

func TestTags(t *testing.T) {
	tags := func(tag string, v any) (any, error) {
		return value.ObjectOf("Fn::"+strings.TrimPrefix(tag, "!"), v), nil
	}
	v, err := Parse([]byte("a: !Sub 'x-${y}'\nb: !Join [',', [1, 2]]\nc: !If [Cond, {k: 1}, !Ref AWS::NoValue]\n"), tags)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"Fn::Sub":"x-${y}"},"b":{"Fn::Join":[",",[1,2]]},"c":{"Fn::If":["Cond",{"k":1},{"Fn::Ref":"AWS::NoValue"}]}}`
	if got := value.String(v); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestAliasBomb: nested aliases that would expand to billions of values are
// refused.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		prev := "*a" + string(rune('0'+i-1))
		if i > 9 {
			prev = "*a" + string(rune('a'+i-10))
		}
		name := string(rune('0' + i))
		if i > 9 {
			name = string(rune('a' + i - 10))
		}
		b.WriteString("a" + name + ": &a" + name + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	_, err := Parse([]byte(b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a: 1\n", "- [1, {b: c}]\n", "x: &a {y: *a}\n", "k: {<<: {a: 1}}\n", "a: !Sub x\n", "n: 0x10\nf: 1e5\n", "\"a\": [1.0, null]"} {
		f.Add([]byte(s))
	}
	tags := func(tag string, v any) (any, error) { return value.ObjectOf(tag, v), nil }
	f.Add([]byte("a: 1\nb: 2\na: {c: 3, c: 4}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseWarn(data, tags, func(w *Error) {
			if w.Line < 1 || w.Msg == "" {
				t.Fatalf("%q: warning without a place: %+v", data, w)
			}
		})
		if err != nil {
			return
		}
		// Whatever it reads is JSON that reads back the same.
		text := value.String(v)
		back, err := value.ParseString(text)
		if err != nil {
			t.Fatalf("%q gave JSON %s that does not parse: %v", data, text, err)
		}
		if value.String(back) != text {
			t.Fatalf("%q: %s reads back as %s", data, text, value.String(back))
		}
	})
}

// TestDuplicateKeys: a key given twice is an error naming both lines for
// Parse; ParseWarn keeps the last value (where the first stood, as SAM
// CLI's reader does) and warns with both lines.
func TestDuplicateKeys(t *testing.T) {
	doc := "Resources:\n  Fn:\n    Type: A\n    Properties: {}\n    Type: B\n  Other: 1\n"
	if _, err := Parse([]byte(doc), nil); err == nil || !strings.Contains(err.Error(), "5:5: invalid YAML: the key \"Type\" appears twice in this mapping (lines 3 and 5)") {
		t.Errorf("Parse: %v", err)
	}
	var warned []string
	v, err := ParseWarn([]byte(doc), nil, func(w *Error) { warned = append(warned, fmt.Sprintf("%d:%d: %s", w.Line, w.Column, w.Msg)) })
	if err != nil {
		t.Fatal(err)
	}
	if got := value.String(v); got != `{"Resources":{"Fn":{"Type":"B","Properties":{}},"Other":1}}` {
		t.Errorf("got %s", got)
	}
	if len(warned) != 1 || warned[0] != `5:5: the key "Type" appears twice in this mapping, on lines 3 and 5: the value of line 5 is kept` {
		t.Errorf("warnings %q", warned)
	}
}
