package definition

import (
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func TestSubstitute(t *testing.T) {
	subs := Substitutions{"Fn": "arn:aws:lambda:us-east-1:123456789012:function:f", "T": "30", "Chain": "${Fn}", "Empty": ""}
	cases := []struct{ in, want string }{
		{`{"Resource":"${Fn}"}`, `{"Resource":"arn:aws:lambda:us-east-1:123456789012:function:f"}`},
		{`{"TimeoutSeconds":${T}}`, `{"TimeoutSeconds":30}`},
		{`"${Chain}"`, `"arn:aws:lambda:us-east-1:123456789012:function:f"`},
		{`"${Unknown}-${T}-${"`, `"${Unknown}-30-${"`},
		{`"${!T}"`, `"${!T}"`},
		{`"$${T}}"`, `"$30}"`},
		{`"a${Empty}b"`, `"ab"`},
		{`{"${T}":1}`, `{"30":1}`},
	}
	for _, c := range cases {
		got, err := Substitute(c.in, subs)
		if err != nil || got != c.want {
			t.Errorf("%s: got %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestSubstituteCycle(t *testing.T) {
	_, err := Substitute(`"${A}"`, Substitutions{"A": "x${B}", "B": "${A}"})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("got %v", err)
	}
	_, err = Substitute(`"${A}"`, Substitutions{"A": "${A}${A}"})
	if err == nil {
		t.Fatal("a growing self-reference was not refused")
	}
	// A doubling chain of 30 names would build 2^30 copies.
	subs := Substitutions{}
	for i := 0; i < 30; i++ {
		subs[string(rune('a'+i))] = "${" + string(rune('a'+i+1)) + "}${" + string(rune('a'+i+1)) + "}"
	}
	if _, err := Substitute(`"${a}"`, subs); err == nil || !strings.Contains(err.Error(), "longer") {
		t.Fatalf("got %v", err)
	}
}

func TestParseSubstitutions(t *testing.T) {
	s, err := ParseSubstitutions("s.yaml", []byte("Fn: arn:x\nT: 30\nB: true\nF: 1.50\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s["Fn"] != "arn:x" || s["T"] != "30" || s["B"] != "true" || s["F"] != "1.50" {
		t.Errorf("got %v", s)
	}
	if _, err := ParseSubstitutions("s.json", []byte(`{"A":{"x":1}}`)); err == nil || !strings.Contains(err.Error(), "substitution A") {
		t.Errorf("an object value: got %v", err)
	}
	if _, err := ParseSubstitutions("s.json", []byte(`[1]`)); err == nil {
		t.Error("a list was accepted")
	}
	if _, err := ParseSubstitutions("s.json", []byte(`{"a}":"x"}`)); err == nil {
		t.Error("a name with } was accepted")
	}
}

func TestFind(t *testing.T) {
	def, _ := value.ParseString(`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"${Fn}","Parameters":{"FunctionName":"${Other}","${K}":1},"End":true}}}`)
	got := Find(def)
	want := []Unresolved{{"/States/A/Resource", "Fn", true}, {"/States/A/Parameters/FunctionName", "Other", false}, {"/States/A/Parameters/${K}", "K", false}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestToJSON(t *testing.T) {
	y := "Comment: c\nStartAt: A\nStates:\n  A:\n    Type: Pass\n    Result: {n: 12345678901234567890, f: 1.0}\n    End: true\n"
	for _, path := range []string{"d.yaml", "d.asl.yml", "d"} {
		got, err := ToJSON(path, []byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"Comment":"c","StartAt":"A","States":{"A":{"Type":"Pass","Result":{"n":12345678901234567890,"f":1.0},"End":true}}}`
		if string(got) != want {
			t.Errorf("%s: got %s", path, got)
		}
	}
	j := []byte(` {"StartAt":"A"}`)
	if got, _ := ToJSON("d", j, nil); string(got) != string(j) {
		t.Errorf("JSON was changed: %s", got)
	}
	if _, err := ToJSON("d.json", []byte("StartAt: A\n"), nil); err != nil {
		t.Errorf("a .json file was read as YAML: %v", err)
	}
}

func FuzzSubstitute(f *testing.F) {
	f.Add(`{"Resource":"${Fn}","x":${T}}`, "Fn", "a${T}", "T", "1")
	f.Add(`${A}${B}`, "A", "${B}", "B", "${A}")
	f.Add(`$${{}}${`, "{", "}", "", "x")
	f.Fuzz(func(t *testing.T, text, k1, v1, k2, v2 string) {
		subs := Substitutions{}
		if subs.Set(k1, v1) != nil || subs.Set(k2, v2) != nil {
			return
		}
		out, err := Substitute(text, subs)
		if err != nil {
			return
		}
		// Nothing known is left, and no placeholder appears that neither
		// the text nor a value brought.
		for _, n := range Placeholders(out) {
			if _, ok := subs[n]; ok {
				t.Fatalf("%q with %v: ${%s} left in %q", text, subs, n, out)
			}
		}
		_ = Find(out)
	})
}

func TestMachineName(t *testing.T) {
	for path, want := range map[string]string{
		"statemachine.asl.json":      "statemachine",
		"dir/orders.asl.yaml":        "orders",
		"orders.ASL.yml":             "orders",
		"orders.json":                "orders",
		"orders":                     "orders",
		"my.orders.json":             "my.orders",
		".asl.json":                  ".asl", // nothing would be left
		"/tmp/x/job-poller.asl.json": "job-poller",
		"statemachine.asl":           "statemachine",
	} {
		if got := MachineName(path); got != want {
			t.Errorf("MachineName(%q) = %q, want %q", path, got, want)
		}
	}
}
