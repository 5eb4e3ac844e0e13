package asl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

const casesDir = "../../shared/conformance/cases"

// TestCorpusParses checks that every definition AWS executed parses.
func TestCorpusParses(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(casesDir, "*.json"))
	if len(files) == 0 {
		t.Skip("conformance cases not found at " + casesDir)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := value.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		o := c.(*value.Object)
		if kind, _ := o.Get("kind"); kind != "execution" {
			continue
		}
		def, _ := o.Get("definition")
		if _, err := FromValue(def); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		n++
	}
	t.Logf("%d execution definitions parsed", n)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, def string
		want      []string // "pointer code" prefixes
	}{
		{"malformed JSON", `{"StartAt": `, []string{"/ INVALID_JSON_DESCRIPTION"}},
		{"not an object", `[]`, []string{"/ SCHEMA_VALIDATION_FAILED"}},
		{"no States", `{"StartAt":"A"}`, []string{"/ SCHEMA_VALIDATION_FAILED: These fields are required: [States]"}},
		{"no StartAt", `{"States":{"A":{"Type":"Pass","End":true}}}`, []string{"/ SCHEMA_VALIDATION_FAILED: These fields are required: [StartAt]"}},
		{"StartAt missing", `{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}`, []string{"/StartAt MISSING_TRANSITION_TARGET"}},
		{"unknown type", `{"StartAt":"A","States":{"A":{"Type":"Nope","End":true}}}`, []string{"/States/A/Type SCHEMA_VALIDATION_FAILED"}},
		{"missing Next target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, []string{"/States/A/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: B"}},
		{"Next and End", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"A","End":true}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED"}},
		{"neither Next nor End", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED"}},
		{"choice target", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"Z"}],"Default":"Y"}}}`,
			[]string{"/States/C/Choices[0]/Next MISSING_TRANSITION_TARGET", "/States/C/Default MISSING_TRANSITION_TARGET"}},
		{"bad timestamp", `{"StartAt":"W","States":{"W":{"Type":"Wait","Timestamp":"2016-12-05 21:29:29Z","End":true}}}`, []string{"/States/W/Timestamp SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp"}},
		{"branch scope", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","Next":"P"}}}]}}}`, []string{"/States/P/Branches/0/States/X/Next MISSING_TRANSITION_TARGET"}},
		{"downgrade", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","End":true,"QueryLanguage":"JSONPath"}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED: 'QueryLanguage' can not be 'JSONPath'"}},
		{"retry shape", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":[{"MaxAttempts":"x"}]}}}`, []string{"/States/T/Retry/0 SCHEMA_VALIDATION_FAILED", "/States/T/Retry/0/MaxAttempts SCHEMA_VALIDATION_FAILED"}},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.def))
		diags, ok := err.(Diagnostics)
		if !ok {
			t.Errorf("%s: got %v, want diagnostics", tt.name, err)
			continue
		}
		var got []string
		for _, d := range diags {
			got = append(got, d.Pointer+" "+d.Code+": "+d.Message)
		}
		for _, w := range tt.want {
			found := false
			for _, g := range got {
				if strings.HasPrefix(g, w) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: want a diagnostic %q, got %q", tt.name, w, got)
			}
		}
	}
}

func TestParseModel(t *testing.T) {
	t.Parallel()
	sm, err := Parse([]byte(`{"StartAt":"M","TimeoutSeconds":30,"States":{
		"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"Iterator":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"ResultPath":null,"Next":"T"},
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["States.ALL"]}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"F","ResultPath":"$.err"}],"End":true},
		"F":{"Type":"Fail","Error":"E","Cause":"C"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sm.HasTimeout || sm.TimeoutSeconds != 30 || sm.QueryLanguage != JSONPath {
		t.Errorf("top level: %+v", sm)
	}
	m := sm.State("M")
	if m.ItemProcessor == nil || m.ItemProcessor.Pointer != "/States/M/Iterator" || m.ProcessorMode != "INLINE" || m.ItemsPath.Path != "$.items" || !m.ResultPath.Null {
		t.Errorf("map: %+v", m)
	}
	r := sm.State("T").Retry[0]
	if r.MaxAttempts != 3 || r.IntervalSeconds != 1 || r.BackoffRate != 2 {
		t.Errorf("retry defaults: %+v", r)
	}
	if c := sm.State("T").Catch[0]; c.Next != "F" || c.ResultPath.Path != "$.err" {
		t.Errorf("catch: %+v", c)
	}
	var names []string
	Walk(sm, func(_ *StateMachine, st *State) bool { names = append(names, st.Name); return true })
	if got := strings.Join(names, ","); got != "M,I,T,F" {
		t.Errorf("Walk = %s", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`))
	f.Add([]byte(`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Not":{"Variable":"$.x","IsNull":true},"Next":"C"}]}}}`))
	f.Add([]byte(`{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{}],"End":true}}},"End":true}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sm, err := Parse(data)
		if err == nil && sm == nil {
			t.Fatal("nil machine without error")
		}
		if err != nil {
			_ = err.Error()
		}
	})
}
