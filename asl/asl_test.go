package asl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

// corpusCase is one conformance case reduced to what the parser needs.
type corpusCase struct {
	name, kind string
	def        any // the definition; for test-state, the request's definition
	expected   *value.Object
}

func loadCorpus(tb testing.TB) []corpusCase {
	tb.Helper()
	files := shared.Cases(tb, "*.json")
	var out []corpusCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		v, err := value.Parse(data)
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		o := value.AsObject(v)
		c := corpusCase{name: strings.TrimSuffix(filepath.Base(f), ".json")}
		kind, _ := o.Get("kind")
		c.kind, _ = kind.(string)
		c.def, _ = o.Get("definition")
		if c.kind == "test-state" {
			req, _ := o.Get("request")
			c.def, _ = value.AsObject(req).Get("definition")
		}
		exp, _ := o.Get("expected")
		c.expected = value.AsObject(exp)
		out = append(out, c)
	}
	return out
}

// TestCorpusParses checks that every definition AWS ran parses: whole
// machines without any diagnostic, and the single states that TestState
// takes with no problem other than transitions out of the one state.
func TestCorpusParses(t *testing.T) {
	t.Parallel()
	counts := map[string]int{}
	for _, c := range loadCorpus(t) {
		switch {
		case c.kind == "execution":
			counts["execution"]++
			if _, err := FromValue(c.def); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		case c.kind == "test-state" && value.AsObject(c.def).Has("States"):
			counts["test-state machine"]++
			if _, err := FromValue(c.def); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		case c.kind == "test-state":
			counts["test-state state"]++
			machine := value.ObjectOf("StartAt", "S", "States", value.ObjectOf("S", c.def))
			sm, diags := Build(machine)
			for _, d := range diags {
				if d.Code != CodeMissingTarget {
					t.Errorf("%s: %v", c.name, d)
				}
			}
			if sm == nil {
				t.Errorf("%s: no machine", c.name)
			}
		}
	}
	t.Logf("parsed %v", counts)
	// The corpus holds 685 executions and 121 TestState cases; a change of
	// the case format must not turn this test into one that checks nothing.
	for _, k := range []string{"execution", "test-state machine", "test-state state"} {
		if counts[k] == 0 {
			t.Errorf("no %s definitions found in the corpus", k)
		}
	}
}

// nonStructural names the corpus cases whose rejection needs more than
// structure (service integration checks): the validator's business.
var nonStructural = []string{
	"api.sfn_api_express.illegal_callbacks.SYNC",
	"services.dynamodb_task_service.invalid_integration",
}

// TestCorpusRejects compares the parser's diagnostics with what AWS
// reported for the definitions it refused.
func TestCorpusRejects(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, c := range loadCorpus(t) {
		switch c.kind {
		case "invalid-definition":
			msg, _ := c.expected.Get("message")
			want, _ := msg.(string)
			want = strings.TrimPrefix(want, "Invalid State Machine Definition: '")
			want = strings.TrimSuffix(want, "'")
			_, err := FromValue(c.def)
			if slices.Contains(nonStructural, c.name) {
				if err != nil {
					t.Errorf("%s: structurally valid, got %v", c.name, err)
				}
				continue
			}
			checked++
			var diags Diagnostics
			if !errors.As(err, &diags) || len(diags) == 0 {
				t.Errorf("%s: got %v, want %s", c.name, err, want)
				continue
			}
			if got := diags[0].String(); got != want {
				t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
			}
		case "validate-definition":
			if c.def == nil { // the case sends definitionString, not JSON
				continue
			}
			checked++
			var want []string
			dv, _ := c.expected.Get("diagnostics")
			for _, d := range dv.([]any) {
				o := value.AsObject(d)
				code, _ := o.Get("code")
				loc, _ := o.Get("location")
				m, _ := o.Get("message")
				want = append(want, fmt.Sprintf("%s %s %s", loc, code, m))
			}
			_, diags := Build(c.def)
			var got []string
			for _, d := range diags {
				got = append(got, fmt.Sprintf("%s %s %s", d.Pointer, d.Code, d.Message))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\n got %q\nwant %q", c.name, got, want)
			}
		}
	}
	if checked == 0 {
		t.Error("no rejected definitions found in the corpus")
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const task = `"T":{"Type":"Task","Resource":"r","End":true}`
	tests := []struct {
		name, def string
		want      []string // every diagnostic: "pointer CODE" or "pointer CODE: message"
	}{
		{"malformed JSON", `{"StartAt": `, []string{"/ INVALID_JSON_DESCRIPTION"}},
		{"not an object", `[]`, []string{"/ SCHEMA_VALIDATION_FAILED: The definition must be a JSON object"}},
		{"empty", `{}`, []string{"/ SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt]"}},
		{"no States", `{"StartAt":"A"}`, []string{"/ SCHEMA_VALIDATION_FAILED: These fields are required: [States]"}},
		{"no StartAt", `{"States":{"A":{"Type":"Pass","End":true}}}`, []string{"/ SCHEMA_VALIDATION_FAILED: These fields are required: [StartAt]"}},
		{"empty States", `{"StartAt":"A","States":{}}`, []string{"/States SCHEMA_VALIDATION_FAILED", "/StartAt MISSING_TRANSITION_TARGET"}},
		{"States not an object", `{"StartAt":"A","States":[]}`, []string{"/States SCHEMA_VALIDATION_FAILED: Expected value of type 'Object' but got 'Array'"}},
		{"top-level field types", `{"StartAt":1,"Comment":true,"Version":2,"TimeoutSeconds":"x","States":{` + task + `}}`,
			[]string{"/StartAt SCHEMA_VALIDATION_FAILED", "/Comment SCHEMA_VALIDATION_FAILED", "/Version SCHEMA_VALIDATION_FAILED", "/TimeoutSeconds SCHEMA_VALIDATION_FAILED"}},
		{"unknown top-level field", `{"StartAt":"T","Foo":1,"States":{` + task + `}}`, []string{"/Foo SCHEMA_VALIDATION_FAILED: Field 'Foo' is not supported"}},
		{"an InputType AWS does not have", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"XML"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/InputType SCHEMA_VALIDATION_FAILED: Instance value (\"XML\") not found in enum (possible values: [\"CSV\",\"JSON\",\"JSONL\",\"PARQUET\",\"MANIFEST\"])"}},
		{"Transformation with getObject", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","Transformation":"LOAD_AND_FLATTEN"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/Transformation SCHEMA_VALIDATION_FAILED"}},
		{"LOAD_AND_FLATTEN without an InputType", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","ReaderConfig":{"Transformation":"LOAD_AND_FLATTEN"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/InputType SCHEMA_VALIDATION_FAILED"}},
		{"an InputType for a listing without LOAD_AND_FLATTEN", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","ReaderConfig":{"InputType":"CSV"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/InputType SCHEMA_VALIDATION_FAILED"}},
		{"ATHENA_DATA of JSON", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","ManifestType":"ATHENA_DATA"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/InputType SCHEMA_VALIDATION_FAILED"}},
		{"an ItemsPointer that is no JSON Pointer", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","ItemsPointer":"a/b"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ItemReader/ReaderConfig/ItemsPointer SCHEMA_VALIDATION_FAILED"}},
		{"an empty ResultWriter", `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ResultWriter SCHEMA_VALIDATION_FAILED: These fields are required: [Resource, Parameters] or [WriterConfig]"}},
		{"a Transformation of WriterConfig AWS does not have", `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"WriterConfig":{"Transformation":"SQUASH"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ResultWriter/WriterConfig/Transformation SCHEMA_VALIDATION_FAILED"}},
		{"WriterConfig with Parameters and no Resource", `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"WriterConfig":{},"Parameters":{"Bucket":"b"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`, []string{"/States/M/ResultWriter SCHEMA_VALIDATION_FAILED: These fields are required: [Resource]"}},
		{"ProcessorConfig at the top", `{"StartAt":"T","ProcessorConfig":{},"States":{` + task + `}}`, []string{"/ProcessorConfig SCHEMA_VALIDATION_FAILED"}},
		{"bad QueryLanguage", `{"StartAt":"T","QueryLanguage":"XPath","States":{` + task + `}}`, []string{"/QueryLanguage SCHEMA_VALIDATION_FAILED"}},
		{"StartAt missing", `{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}`, []string{"/StartAt MISSING_TRANSITION_TARGET: Missing 'Next' target: B"}},
		{"unknown type", `{"StartAt":"A","States":{"A":{"Type":"Nope","End":true}}}`, []string{"/States/A/Type SCHEMA_VALIDATION_FAILED"}},
		{"no type", `{"StartAt":"A","States":{"A":{"End":true}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED: These fields are required: [Type]"}},
		{"malformed state is still a target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Nope"}}}`, []string{"/States/B/Type SCHEMA_VALIDATION_FAILED"}},
		{"state not an object", `{"StartAt":"A","States":{"A":3}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED: Expected value of type 'Object' but got 'Number'"}},
		{"long name", `{"StartAt":"T","States":{` + task + `,"` + strings.Repeat("n", 81) + `":{"Type":"Succeed"}}}`, []string{"/States/" + strings.Repeat("n", 81) + " SCHEMA_VALIDATION_FAILED"}},
		{"pointer escaping", `{"StartAt":"a/b","States":{"a/b":{"Type":"Pass","Next":"x~y"}}}`, []string{"/States/a~1b/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: x~y"}},
		{"unknown state field", `{"StartAt":"A","States":{"A":{"Type":"Succeed","Next":"A"}}}`, []string{"/States/A/Next SCHEMA_VALIDATION_FAILED: Field 'Next' is not supported"}},
		{"empty names", `{"StartAt":"","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true,"Next":""}],"Default":""}}}`,
			[]string{"/StartAt MISSING_TRANSITION_TARGET", "/States/A/Default MISSING_TRANSITION_TARGET", "/States/A/Choices[0]/Next MISSING_TRANSITION_TARGET"}},
		{"missing Next target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, []string{"/States/A/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: B"}},
		{"Next and End", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"A","End":true}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED: Only one of 'Next' or 'End' can be specified"}},
		{"neither Next nor End", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, []string{"/States/A SCHEMA_VALIDATION_FAILED: These fields are required: [Next | End]"}},
		{"End not a boolean", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":"yes"}}}`, []string{"/States/A/End SCHEMA_VALIDATION_FAILED", "/States/A SCHEMA_VALIDATION_FAILED"}},
		{"path not a string", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":1,"End":true}}}`, []string{"/States/A/InputPath SCHEMA_VALIDATION_FAILED"}},
		{"Assign not an object", `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":[],"End":true}}}`, []string{"/States/A/Assign SCHEMA_VALIDATION_FAILED"}},
		{"no Resource", `{"StartAt":"T","States":{"T":{"Type":"Task","End":true}}}`, []string{"/States/T SCHEMA_VALIDATION_FAILED: These fields are required: [Resource]"}},
		{"timeout and path", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","TimeoutSeconds":5,"TimeoutSecondsPath":"$.t","HeartbeatSeconds":-1,"End":true}}}`,
			[]string{"/States/T SCHEMA_VALIDATION_FAILED: Only one of 'TimeoutSeconds' or 'TimeoutSecondsPath' can be specified", "/States/T/HeartbeatSeconds SCHEMA_VALIDATION_FAILED"}},
		{"JSONPath timeout expression", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","TimeoutSeconds":"{% 5 %}","End":true}}}`, []string{"/States/T/TimeoutSeconds SCHEMA_VALIDATION_FAILED"}},
		{"credentials", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","Credentials":{},"End":true}}}`, []string{"/States/T/Credentials SCHEMA_VALIDATION_FAILED: The field 'RoleArn' is required but was missing"}},
		{"retry shape", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":[{"MaxAttempts":"x"}]}}}`,
			[]string{"/States/T/Retry/0 SCHEMA_VALIDATION_FAILED: These fields are required: [ErrorEquals]", "/States/T/Retry/0/MaxAttempts SCHEMA_VALIDATION_FAILED"}},
		{"retry ranges", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":[{"ErrorEquals":["E",1],"IntervalSeconds":0,"BackoffRate":0.5,"JitterStrategy":"HALF","MaxDelaySeconds":0}]}}}`,
			[]string{"/States/T/Retry/0/ErrorEquals/1 SCHEMA_VALIDATION_FAILED", "/States/T/Retry/0/IntervalSeconds SCHEMA_VALIDATION_FAILED", "/States/T/Retry/0/MaxDelaySeconds SCHEMA_VALIDATION_FAILED", "/States/T/Retry/0/BackoffRate SCHEMA_VALIDATION_FAILED", "/States/T/Retry/0/JitterStrategy SCHEMA_VALIDATION_FAILED"}},
		{"retry not a list", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":{}}}}`, []string{"/States/T/Retry SCHEMA_VALIDATION_FAILED"}},
		{"catch", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Z"},{"Next":"T","Foo":1}]}}}`,
			[]string{"/States/T/Catch/1 SCHEMA_VALIDATION_FAILED: These fields are required: [ErrorEquals]", "/States/T/Catch/1/Foo SCHEMA_VALIDATION_FAILED", "/States/T/Catch[0]/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: Z"}},
		{"no Choices", `{"StartAt":"C","States":{"C":{"Type":"Choice"}}}`, []string{"/States/C SCHEMA_VALIDATION_FAILED: These fields are required: [Choices]"}},
		{"empty Choices", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[]}}}`, []string{"/States/C/Choices SCHEMA_VALIDATION_FAILED"}},
		{"choice targets", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"Z"}],"Default":"Y"}}}`,
			[]string{"/States/C/Default MISSING_TRANSITION_TARGET: Missing 'Next' target: Y", "/States/C/Choices[0]/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: Z"}},
		{"choice rule without Next", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true}],"Default":"C"}}}`, []string{"/States/C/Choices/0 SCHEMA_VALIDATION_FAILED: These fields are required: [Next]"}},
		{"two operators", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true,"IsString":true,"Next":"C"}]}}}`, []string{"/States/C/Choices/0 SCHEMA_VALIDATION_FAILED"}},
		{"no operator", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","Next":"C"}]}}}`, []string{"/States/C/Choices/0 SCHEMA_VALIDATION_FAILED"}},
		{"no Variable", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"IsNull":true,"Next":"C"}]}}}`, []string{"/States/C/Choices/0 SCHEMA_VALIDATION_FAILED: These fields are required: [Variable]"}},
		{"unknown operator", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","StringContains":"a","Next":"C"}]}}}`,
			[]string{"/States/C/Choices/0/StringContains SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0 SCHEMA_VALIDATION_FAILED"}},
		{"nested rule with Next", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Not":{"Variable":"$.x","IsNull":true,"Next":"C"},"Next":"C"}]}}}`, []string{"/States/C/Choices/0/Not/Next SCHEMA_VALIDATION_FAILED"}},
		{"empty And", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[],"Next":"C"}]}}}`, []string{"/States/C/Choices/0/And SCHEMA_VALIDATION_FAILED"}},
		{"Or not a list", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Or":{},"Next":"C"}]}}}`, []string{"/States/C/Choices/0/Or SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0 SCHEMA_VALIDATION_FAILED"}},
		{"operand types", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.x","NumericEquals":"1"},{"Variable":"$.x","StringEqualsPath":1},{"Variable":"$.x","IsNull":"true"},{"Variable":"$.x","TimestampEquals":"2016-03-14 01:59:00Z"}],"Next":"C"}]}}}`,
			[]string{"/States/C/Choices/0/And/0/NumericEquals SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/And/1/StringEqualsPath SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/And/2/IsNull SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/And/3/TimestampEquals SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp"}},
		{"JSONata rule without Condition", `{"QueryLanguage":"JSONata","StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true,"Next":"C"}]}}}`,
			[]string{"/States/C/Choices/0 SCHEMA_VALIDATION_FAILED: These fields are required: [Condition]", "/States/C/Choices/0/Variable SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0/IsNull SCHEMA_VALIDATION_FAILED"}},
		{"JSONPath rule with Condition", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Condition":"{% true %}","Next":"C"}]}}}`,
			[]string{"/States/C/Choices/0/Condition SCHEMA_VALIDATION_FAILED", "/States/C/Choices/0 SCHEMA_VALIDATION_FAILED"}},
		{"Wait without a duration", `{"StartAt":"W","States":{"W":{"Type":"Wait","End":true}}}`, []string{"/States/W SCHEMA_VALIDATION_FAILED"}},
		{"Wait with two durations", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"SecondsPath":"$.s","End":true}}}`, []string{"/States/W SCHEMA_VALIDATION_FAILED"}},
		{"Wait negative", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":-1,"End":true}}}`, []string{"/States/W/Seconds SCHEMA_VALIDATION_FAILED"}},
		{"bad timestamp", `{"StartAt":"W","States":{"W":{"Type":"Wait","Timestamp":"2016-12-05 21:29:29Z","End":true}}}`, []string{"/States/W/Timestamp SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp"}},
		{"JSONPath timestamp expression", `{"StartAt":"W","States":{"W":{"Type":"Wait","Timestamp":"{% '2016-03-14T01:59:00Z' %}","End":true}}}`, []string{"/States/W/Timestamp SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp"}},
		{"Fail fields", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":1,"Cause":"c","CausePath":"$.c"}}}`,
			[]string{"/States/F SCHEMA_VALIDATION_FAILED: Only one of 'Cause' or 'CausePath' can be specified", "/States/F/Error SCHEMA_VALIDATION_FAILED"}},
		{"no Branches", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true}}}`, []string{"/States/P SCHEMA_VALIDATION_FAILED: These fields are required: [Branches]"}},
		{"empty Branches", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[],"End":true}}}`, []string{"/States/P/Branches SCHEMA_VALIDATION_FAILED"}},
		{"branch not an object", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[1],"End":true}}}`, []string{"/States/P/Branches/0 SCHEMA_VALIDATION_FAILED"}},
		{"branch scope", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","Next":"P"}}}]}}}`,
			[]string{"/States/P/Branches/0/States/X/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: P"}},
		{"parent scope", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Next":"X","Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}}]}}}`,
			[]string{"/States/P/Next MISSING_TRANSITION_TARGET: Missing 'Next' target: X"}},
		{"empty branch", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{}]}}}`,
			[]string{"/States/P/Branches/0 SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt]"}},
		{"no ItemProcessor", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true}}}`, []string{"/States/M SCHEMA_VALIDATION_FAILED: These fields are required: [ItemProcessor]"}},
		{"ItemProcessor and Iterator", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"Iterator":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}}}}}`,
			[]string{"/States/M SCHEMA_VALIDATION_FAILED"}},
		{"processor mode", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"ProcessorConfig":{"Mode":"LOCAL"},"StartAt":"I","States":{"I":{"Type":"Succeed"}}}}}}`,
			[]string{"/States/M/ItemProcessor/ProcessorConfig/Mode SCHEMA_VALIDATION_FAILED"}},
		{"processor QueryLanguage", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"QueryLanguage":"JSONata","StartAt":"I","States":{"I":{"Type":"Succeed"}}}}}}`,
			[]string{"/States/M/ItemProcessor/QueryLanguage SCHEMA_VALIDATION_FAILED"}},
		{"processor scope", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"M","States":{"I":{"Type":"Succeed"}}}}}}`,
			[]string{"/States/M/ItemProcessor/StartAt MISSING_TRANSITION_TARGET"}},
		{"MaxConcurrency", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"MaxConcurrency":-1,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}}}}}`,
			[]string{"/States/M/MaxConcurrency SCHEMA_VALIDATION_FAILED"}},
		{"downgrade", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","End":true,"QueryLanguage":"JSONPath"}}}`,
			[]string{"/States/A SCHEMA_VALIDATION_FAILED: 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine"}},
		{"downgrade in a branch", `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true,"QueryLanguage":"JSONPath"}}}]}}}`,
			[]string{"/States/P/Branches/0/States/A SCHEMA_VALIDATION_FAILED: 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine"}},
		{"JSONPath field in JSONata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$","End":true}}}`, []string{"/States/A/InputPath SCHEMA_VALIDATION_FAILED"}},
		{"JSONata field in JSONPath", `{"StartAt":"A","States":{"A":{"Type":"Pass","Output":{},"End":true}}}`, []string{"/States/A/Output SCHEMA_VALIDATION_FAILED"}},
		{"JSONata Map in a JSONPath machine", `{"StartAt":"M","States":{"M":{"Type":"Map","QueryLanguage":"JSONata","End":true,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Output":1,"End":true}}}}}}`,
			[]string{"/States/M/ItemProcessor/States/I/Output SCHEMA_VALIDATION_FAILED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm, err := Parse([]byte(tt.def))
			var diags Diagnostics
			if !errors.As(err, &diags) {
				t.Fatalf("got %v, want diagnostics", err)
			}
			if sm != nil {
				t.Errorf("got a machine with errors %v", diags)
			}
			if len(diags) != len(tt.want) {
				t.Errorf("got %d diagnostics %q, want %d", len(diags), diags, len(tt.want))
			}
			for _, w := range tt.want {
				found := false
				for _, d := range diags {
					g := d.Pointer + " " + d.Code + ": " + d.Message
					if g == w || strings.HasPrefix(g, w+": ") {
						found = true
					}
				}
				if !found {
					t.Errorf("no diagnostic %q in %q", w, diags)
				}
			}
		})
	}
}

// TestAccepts lists definitions that are unusual but valid.
func TestAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, def string }{
		{"minimal", `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`},
		{"state named empty", `{"StartAt":"","States":{"":{"Type":"Pass","Next":"A"},"A":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true,"Next":""}],"Default":""}}}`},
		{"null paths", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":null,"OutputPath":null,"ResultPath":null,"End":true}}}`},
		{"JSONata expressions", `{"QueryLanguage":"JSONata","StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","TimeoutSeconds":"{% 3 %}","HeartbeatSeconds":"{% 1 %}","Arguments":"{% $states.input %}","Next":"W"},"W":{"Type":"Wait","Timestamp":"{% $t %}","Next":"C"},"C":{"Type":"Choice","Choices":[{"Condition":"{% true %}","Next":"F","Output":1,"Assign":{"a":1}}]},"F":{"Type":"Fail","Error":"{% 'E' %}"}}}`},
		{"JSONata state in JSONPath machine", `{"StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% 1 %}","End":true}}}`},
		{"JSONPath inside JSONata Map in JSONPath machine", `{"StartAt":"M","QueryLanguage":"JSONPath","States":{"M":{"Type":"Map","QueryLanguage":"JSONata","ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"P","States":{"P":{"QueryLanguage":"JSONPath","Type":"Pass","End":true}}},"End":true}}}`},
		{"timestamps", `{"StartAt":"W","States":{"W":{"Type":"Wait","Timestamp":"2016-03-14T01:59:00.123+01:00","Next":"C"},"C":{"Type":"Choice","Choices":[{"Variable":"$.t","TimestampLessThan":"2016-03-14T01:59:00Z","Next":"W"}]}}}`},
		{"ItemReader beside ItemsPath", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.a","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","ItemsPointer":"/a/0"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"Parquet, manifests and LOAD_AND_FLATTEN", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"PARQUET"},"Parameters":{"Bucket":"b","Key":"k"}},"Label":"a","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"an Athena manifest", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","ManifestType":"ATHENA_DATA","CSVHeaderLocation":"GIVEN","CSVHeaders":["a"]},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"an S3 Inventory", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"MANIFEST","ManifestType":"S3_INVENTORY"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"a listing read", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","ReaderConfig":{"InputType":"JSONL","Transformation":"LOAD_AND_FLATTEN"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"a WriterConfig alone", `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"WriterConfig":{"OutputType":"JSON","Transformation":"FLATTEN"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`},
		{"legacy Map", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.a","Parameters":{"x.$":"$$.Map.Item.Value"},"Iterator":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"End":true}}}`},
		{"distributed Map", `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"L","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},"Parameters":{"Bucket":"b","Key":"k"}},"ItemBatcher":{"MaxItemsPerBatch":2},"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},"ToleratedFailurePercentage":5,"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"End":true}}}`},
		{"comments everywhere", `{"Comment":"c","StartAt":"T","States":{"T":{"Comment":"c","Type":"Task","Resource":"r","Retry":[{"Comment":"c","ErrorEquals":["E"]}],"Catch":[{"Comment":"c","ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Choice","Choices":[{"Comment":"c","Not":{"Variable":"$.x","IsPresent":true},"Next":"T"}]}}}`},
	}
	for _, tt := range tests {
		if _, err := Parse([]byte(tt.def)); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestParseModel(t *testing.T) {
	t.Parallel()
	sm, err := Parse([]byte(`{"Comment":"top","Version":"1.0","StartAt":"M","TimeoutSeconds":30,"States":{
		"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"Iterator":{"StartAt":"I","States":{"I":{"Type":"Pass","Result":null,"End":true}}},"ResultPath":null,"Next":"T"},
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","TimeoutSecondsPath":"$.t","HeartbeatSeconds":5,
			"Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["A","B"],"IntervalSeconds":4,"MaxAttempts":0,"BackoffRate":1.5,"MaxDelaySeconds":9,"JitterStrategy":"FULL"}],
			"Catch":[{"ErrorEquals":["States.ALL"],"Next":"F","ResultPath":"$.err"}],"Next":"C"},
		"C":{"Type":"Choice","Choices":[
			{"Variable":"$.n","NumericGreaterThanPath":"$.m","Next":"W"},
			{"And":[{"Variable":"$.s","StringMatches":"a*"},{"Not":{"Variable":"$.b","BooleanEquals":true}}],"Next":"P"}],"Default":"F"},
		"W":{"Type":"Wait","SecondsPath":"$.w","Next":"P"},
		"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Succeed"}}},{"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true},
		"F":{"Type":"Fail","ErrorPath":"$.e","Cause":"C"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if sm.Comment != "top" || sm.Version != "1.0" || sm.StartAt != "M" || !sm.HasTimeout || sm.TimeoutSeconds != 30 || sm.QueryLanguage != JSONPath || sm.Pointer != "" || sm.Raw == nil {
		t.Errorf("top level: %+v", sm)
	}
	if got := strings.Join(sm.Names, ","); got != "M,T,C,W,P,F" {
		t.Errorf("Names = %s", got)
	}
	if sm.States["nope"] != nil {
		t.Error("State of an unknown name is not nil")
	}

	m := sm.States["M"]
	if m.ItemProcessor == nil || m.ItemProcessor.Pointer != "/States/M/Iterator" || m.ProcessorMode != "INLINE" || m.ItemsPath.Path != "$.items" ||
		!m.ResultPath.Null || !m.ResultPath.Set || m.InputPath.Set || m.Next != "T" || m.End || m.Pointer != "/States/M" {
		t.Errorf("map: %+v", m)
	}
	if v, _ := m.MaxConcurrency.Value.(value.Number); !m.MaxConcurrency.Set || v != "2" {
		t.Errorf("MaxConcurrency = %+v", m.MaxConcurrency)
	}
	if i := m.ItemProcessor.States["I"]; i == nil || !i.Result.Set || i.Result.Value != nil || !i.End || i.Pointer != "/States/M/Iterator/States/I" {
		t.Errorf("iterator state: %+v", i)
	}

	task := sm.States["T"]
	if task.Resource != "arn:aws:states:::lambda:invoke" || task.TimeoutSecondsPath != "$.t" || task.TimeoutSeconds.Set || !task.HeartbeatSeconds.Set {
		t.Errorf("task: %+v", task)
	}
	want := []Retrier{
		{ErrorEquals: []string{"States.ALL"}, IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2, JitterStrategy: "NONE", Pointer: "/States/T/Retry/0"},
		{ErrorEquals: []string{"A", "B"}, IntervalSeconds: 4, MaxAttempts: 0, BackoffRate: 1.5, MaxDelaySeconds: 9, HasMaxDelay: true, JitterStrategy: "FULL", Pointer: "/States/T/Retry/1"},
	}
	if len(task.Retry) != len(want) {
		t.Fatalf("Retry = %+v", task.Retry)
	}
	for i, r := range task.Retry {
		if fmt.Sprint(*r) != fmt.Sprint(want[i]) {
			t.Errorf("Retry[%d] = %+v, want %+v", i, *r, want[i])
		}
	}
	if c := task.Catch[0]; c.Next != "F" || c.ResultPath.Path != "$.err" || c.Pointer != "/States/T/Catch/0" || c.ErrorEquals[0] != "States.ALL" {
		t.Errorf("catch: %+v", c)
	}

	choice := sm.States["C"]
	if len(choice.Choices) != 2 || choice.Default != "F" {
		t.Fatalf("choice: %+v", choice)
	}
	r0 := choice.Choices[0]
	if r0.Variable != "$.n" || r0.Operator != "NumericGreaterThanPath" || r0.Operand != "$.m" || r0.Next != "W" || r0.Pointer != "/States/C/Choices/0" {
		t.Errorf("rule 0: %+v", r0)
	}
	r1 := choice.Choices[1]
	if r1.Operator != "" || len(r1.And) != 2 || r1.Next != "P" {
		t.Fatalf("rule 1: %+v", r1)
	}
	if a := r1.And[0]; a.Operator != "StringMatches" || a.Operand != "a*" || a.Next != "" || a.Pointer != "/States/C/Choices/1/And/0" {
		t.Errorf("rule 1 And 0: %+v", a)
	}
	if n := r1.And[1].Not; n == nil || n.Operator != "BooleanEquals" || n.Operand != true || n.Pointer != "/States/C/Choices/1/And/1/Not" {
		t.Errorf("rule 1 And 1 Not: %+v", n)
	}

	if w := sm.States["W"]; w.SecondsPath != "$.w" || w.Seconds.Set || w.Timestamp.Set {
		t.Errorf("wait: %+v", w)
	}
	p := sm.States["P"]
	if len(p.Branches) != 2 || p.Branches[1].Pointer != "/States/P/Branches/1" || p.Branches[1].States["B"].Pointer != "/States/P/Branches/1/States/B" {
		t.Errorf("parallel: %+v", p)
	}
	if f := sm.States["F"]; f.ErrorPath != "$.e" || f.Cause.Value != "C" || f.Error.Set {
		t.Errorf("fail: %+v", f)
	}
}

func TestQueryLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, def string
		want      map[string]string // state pointer -> effective language
	}{
		{"default", `{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, map[string]string{"": JSONPath, "/States/A": JSONPath}},
		{"JSONata machine", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, map[string]string{"": JSONata, "/States/A": JSONata}},
		{"state opts in", `{"StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONata","Next":"B"},"B":{"Type":"Succeed"}}}`,
			map[string]string{"": JSONPath, "/States/A": JSONata, "/States/B": JSONPath}},
		{"JSONata machine, nested", `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}]}}}`,
			map[string]string{"": JSONata, "/States/P": JSONata, "/States/P/Branches/0": JSONata, "/States/P/Branches/0/States/A": JSONata}},
		// States inside a Map or Parallel inherit the top-level language,
		// not the language of the Map or Parallel state.
		{"JSONata Map in a JSONPath machine", `{"StartAt":"M","States":{"M":{"Type":"Map","QueryLanguage":"JSONata","End":true,"ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","QueryLanguage":"JSONata","End":true}}}}}}`,
			map[string]string{"": JSONPath, "/States/M": JSONata, "/States/M/ItemProcessor": JSONPath, "/States/M/ItemProcessor/States/A": JSONPath, "/States/M/ItemProcessor/States/B": JSONata}},
	}
	for _, tt := range tests {
		sm, err := Parse([]byte(tt.def))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := map[string]string{"": sm.QueryLanguage}
		Walk(sm, func(m *StateMachine, st *State) bool {
			got[m.Pointer] = m.QueryLanguage
			got[st.Pointer] = st.QueryLanguage
			return true
		})
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// operatorNames lists the 39 comparison operators of AWS (42 with And, Or, Not).
func operatorNames() []string {
	ops := []string{"StringMatches", "IsNull", "IsPresent", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp", "BooleanEquals", "BooleanEqualsPath"}
	for _, typ := range []string{"String", "Numeric", "Timestamp"} {
		for _, cmp := range []string{"Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals"} {
			ops = append(ops, typ+cmp, typ+cmp+"Path")
		}
	}
	return ops
}

func TestChoiceOperators(t *testing.T) {
	t.Parallel()
	good := func(op string) string {
		switch {
		case strings.HasSuffix(op, "Path"):
			return `"$.y"`
		case strings.HasPrefix(op, "Is"), op == "BooleanEquals":
			return `true`
		case strings.HasPrefix(op, "Numeric"):
			return `1.5`
		case strings.HasPrefix(op, "Timestamp"):
			return `"2016-03-14T01:59:00Z"`
		}
		return `"a"`
	}
	ops := operatorNames()
	if len(ops) != 39 {
		t.Fatalf("%d operators", len(ops))
	}
	for _, op := range ops {
		if !operators[op] {
			t.Errorf("operators[%s] = false", op)
		}
		def := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","` + op + `":` + good(op) + `,"Next":"C"}]}}}`
		sm, err := Parse([]byte(def))
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		r := sm.States["C"].Choices[0]
		want, _ := value.Parse([]byte(good(op)))
		if r.Operator != op || r.Variable != "$.x" || !value.Equal(r.Operand, want) {
			t.Errorf("%s: rule %+v", op, r)
		}
		// An operand of the wrong type: an object suits no operator.
		bad := strings.Replace(def, good(op), `{}`, 1)
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s with an object operand parsed", op)
		}
	}
	for _, name := range []string{"And", "Or", "Not", "Variable", "StringContains", ""} {
		if operators[name] {
			t.Errorf("operators[%q] = true", name)
		}
	}
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	var none Diagnostics
	if none.Err() != nil {
		t.Error("empty Diagnostics.Err() is not nil")
	}
	one := Diagnostics{{Pointer: "/States/A", Code: CodeSchema, Message: "m"}}
	if got := one.Error(); got != "SCHEMA_VALIDATION_FAILED: m at /States/A" {
		t.Errorf("one: %q", got)
	}
	three := append(one, Diagnostic{Code: CodeMissingTarget, Message: "x"}, Diagnostic{Code: CodeSchema, Message: "y", Severity: SeverityWarning})
	if got := three.Error(); got != "SCHEMA_VALIDATION_FAILED: m at /States/A (and 2 more errors)" {
		t.Errorf("three: %q", got)
	}
	if three.Err() == nil || len(three.Errors()) != 2 || !three[2].IsWarning() {
		t.Errorf("three: Err %v, Errors %v", three.Err(), three.Errors())
	}
	if got := three[1].String(); got != "MISSING_TRANSITION_TARGET: x" {
		t.Errorf("no pointer: %q", got)
	}

	_, err := Parse([]byte("{\n  \"StartAt\": nope}"))
	var se *value.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("malformed JSON: %v does not wrap a *value.SyntaxError", err)
	}
	var diags Diagnostics
	if !errors.As(err, &diags) || len(diags) != 1 || diags[0].Code != CodeInvalidJSON || !strings.Contains(diags[0].Message, "line 2") {
		t.Errorf("malformed JSON: %v", err)
	}

	// All problems are reported, not only the first.
	_, err = Parse([]byte(`{"StartAt":"A","States":{"A":{"Type":"Pass"},"B":{"Type":"Task","End":true},"C":{"Type":"Choice"}}}`))
	if !errors.As(err, &diags) || len(diags) != 3 {
		t.Errorf("want 3 diagnostics, got %v", err)
	}
}

// TestBuild checks that Build hands back the machine when the only problems
// are missing transition targets, for a validator to go on with.
func TestBuild(t *testing.T) {
	t.Parallel()
	v, _ := value.ParseString(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`)
	sm, diags := Build(v)
	if sm == nil || len(diags) != 1 || diags[0].Code != CodeMissingTarget {
		t.Errorf("Build = %v, %v", sm, diags)
	}
	if sm, err := FromValue(v); sm != nil || err == nil {
		t.Errorf("FromValue = %v, %v", sm, err)
	}
	v, _ = value.ParseString(`{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`)
	if sm, diags := Build(v); sm != nil || len(diags) != 1 {
		t.Errorf("Build with a schema error = %v, %v", sm, diags)
	}
}

// TestFromValueOddValues feeds values that JSON text cannot produce.
func TestFromValueOddValues(t *testing.T) {
	t.Parallel()
	var nilObj *value.Object
	for i, v := range []any{
		nil, 3, "x", nilObj, map[string]any{"StartAt": "A"},
		value.ObjectOf("StartAt", "A", "States", nilObj),
		value.ObjectOf("StartAt", "A", "States", value.ObjectOf("A", nilObj)),
		value.ObjectOf("StartAt", "A", "States", value.ObjectOf("A", value.ObjectOf("Type", "Parallel", "End", true, "Branches", []any{nilObj}))),
		value.ObjectOf("StartAt", "A", "States", value.ObjectOf("A", value.ObjectOf("Type", "Choice", "Choices", []any{value.ObjectOf("Not", nilObj, "Next", "A")}))),
		value.ObjectOf("StartAt", "A", "States", value.ObjectOf("A", value.ObjectOf("Type", 7, "End", true))),
	} {
		sm, err := FromValue(v)
		if err == nil || sm != nil {
			t.Errorf("%d: FromValue(%#v) = %v, %v", i, v, sm, err)
		}
	}
}

func TestWalk(t *testing.T) {
	t.Parallel()
	sm, err := Parse([]byte(`{"StartAt":"P","States":{
		"P":{"Type":"Parallel","Next":"M","Branches":[
			{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Succeed"}}},
			{"StartAt":"C","States":{"C":{"Type":"Succeed"}}}]},
		"M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	walk := func(skip string) string {
		var seen []string
		Walk(sm, func(m *StateMachine, st *State) bool {
			seen = append(seen, m.Pointer+">"+st.Name)
			return st.Name != skip
		})
		return strings.Join(seen, " ")
	}
	if got, want := walk(""), ">P /States/P/Branches/0>A /States/P/Branches/0>B /States/P/Branches/1>C >M /States/M/ItemProcessor>I"; got != want {
		t.Errorf("Walk:\n got %s\nwant %s", got, want)
	}
	if got, want := walk("P"), ">P >M /States/M/ItemProcessor>I"; got != want {
		t.Errorf("Walk skipping P:\n got %s\nwant %s", got, want)
	}
}

// checkMachine asserts the invariants of a machine that parsed.
func checkMachine(t *testing.T, sm *StateMachine) {
	t.Helper()
	var machines []*StateMachine
	machines = append(machines, sm)
	Walk(sm, func(m *StateMachine, st *State) bool {
		machines = append(machines, st.Branches...)
		if st.ItemProcessor != nil {
			machines = append(machines, st.ItemProcessor)
		}
		return true
	})
	for _, m := range machines {
		if len(m.Names) != len(m.States) {
			t.Fatalf("%s: %d names, %d states", m.Pointer, len(m.Names), len(m.States))
		}
		if m.States[m.StartAt] == nil {
			t.Fatalf("%s: StartAt %q dangles", m.Pointer, m.StartAt)
		}
		for _, name := range m.Names {
			st := m.States[name]
			if st == nil || st.Name != name || st.Pointer != m.Pointer+"/States/"+escape(name) {
				t.Fatalf("%s: state %q is %+v", m.Pointer, name, st)
			}
			if st.QueryLanguage != JSONPath && st.QueryLanguage != JSONata {
				t.Fatalf("%s: query language %q", st.Pointer, st.QueryLanguage)
			}
			targets := map[string]bool{}
			if st.hasNext {
				targets[st.Next] = true
			}
			if st.hasDefault {
				targets[st.Default] = true
			}
			for _, c := range st.Choices {
				targets[c.Next] = true
				if !c.hasNext {
					t.Fatalf("%s: rule without Next", c.Pointer)
				}
			}
			for _, c := range st.Catch {
				targets[c.Next] = true
				if !c.hasNext {
					t.Fatalf("%s: catcher without Next", c.Pointer)
				}
			}
			for n := range targets {
				if m.States[n] == nil {
					t.Fatalf("%s: target %q dangles", st.Pointer, n)
				}
			}
			if st.hasNext == st.End && st.Type != "Choice" && st.Type != "Succeed" && st.Type != "Fail" {
				t.Fatalf("%s: Next %q, End %v", st.Pointer, st.Next, st.End)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`))
	f.Add([]byte(`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Not":{"Variable":"$.x","IsNull":true},"Next":"C"}]}}}`))
	f.Add([]byte(`{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{}],"End":true}}},"End":true}}}`))
	// Distributed Map fields.
	f.Add([]byte(`{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN","CSVHeaders":["a"],"CSVDelimiter":"PIPE","MaxItemsPath":"$.n"},"Parameters":{"Bucket":"b","Key.$":"$.k"}},"ItemBatcher":{"MaxItemsPerBatchPath":"$.m","MaxInputBytesPerBatch":1024,"BatchInput":{"x":1}},"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`))
	f.Add([]byte(`{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","ReaderConfig":{"MaxItems":"{% 2 %}","InputType":"MANIFEST"},"Arguments":"{% {'Bucket':'b'} %}"},"ResultWriter":{"WriterConfig":{"OutputType":"JSONL"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`))
	// A few definitions AWS ran.
	files, _ := filepath.Glob(filepath.Join(shared.Root(), "conformance", "cases", "*.json"))
	for i, file := range files {
		if i%50 != 0 {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		c, err := value.Parse(data)
		if err != nil {
			continue
		}
		if def, ok := value.AsObject(c).Get("definition"); ok && def != nil {
			f.Add([]byte(value.String(def)))
		}
	}
	codes := []string{CodeSchema, CodeMissingTarget, CodeInvalidJSON, CodeUnsupported}
	f.Fuzz(func(t *testing.T, data []byte) {
		sm, err := Parse(data)
		if err == nil {
			if sm == nil {
				t.Fatal("nil machine without error")
			}
			checkMachine(t, sm)
			return
		}
		if sm != nil {
			t.Fatal("machine with an error")
		}
		var diags Diagnostics
		if !errors.As(err, &diags) || len(diags) == 0 {
			t.Fatalf("error %v is not Diagnostics", err)
		}
		for _, d := range diags {
			if !slices.Contains(codes, d.Code) || !strings.HasPrefix(d.Pointer, "/") || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		_ = err.Error()
	})
}
