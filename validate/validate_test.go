package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

func loadCases(t *testing.T) []*value.Object {
	files := shared.Cases(t, "*.json")
	var out []*value.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v.(*value.Object))
	}
	return out
}

func get(o *value.Object, k string) any { v, _ := o.Get(k); return v }

func str(o *value.Object, k string) string { s, _ := get(o, k).(string); return s }

// definitionOf returns a case's definition as JSON text.
func definitionOf(c *value.Object) []byte {
	if s := str(c, "definitionString"); s != "" || get(c, "definition") == nil {
		return []byte(s)
	}
	return []byte(value.String(get(c, "definition")))
}

// TestCorpus checks every recorded definition: invalid ones are rejected
// with AWS's message, validate-definition cases give AWS's response, and no
// definition that AWS ran is rejected.
func TestCorpus(t *testing.T) {
	t.Parallel()
	counts := map[string][2]int{}
	for _, c := range loadCases(t) {
		name, kind, typ := str(c, "name"), str(c, "kind"), str(c, "type")
		exp, _ := get(c, "expected").(*value.Object)
		var ok bool
		switch kind {
		case "execution":
			r := Definition(definitionOf(c), typ)
			ok = r.OK()
			if !ok {
				t.Errorf("%s: AWS ran this definition, but it is rejected: %v", name, r.Err())
			}
		case "invalid-definition":
			r := Definition(definitionOf(c), typ)
			want := str(exp, "message")
			got := Message(r.Diagnostics)
			ok = !r.OK() && matchMessage(want, got)
			if !ok {
				t.Errorf("%s:\n want %s\n  got %s", name, want, got)
			}
		case "validate-definition":
			r := Definition(definitionOf(c), typ)
			got := Response(r)
			ok = value.Equal(exp, got)
			if !ok {
				t.Errorf("%s:\n want %s\n  got %s", name, value.String(exp), value.String(got))
			}
		default:
			continue
		}
		n := counts[kind]
		n[1]++
		if ok {
			n[0]++
		}
		counts[kind] = n
	}
	for kind, n := range counts {
		t.Logf("%s: %d of %d match AWS", kind, n[0], n[1])
	}
}

// matchMessage compares an expected message that may hold placeholders
// such as arn:<partition>:.
func matchMessage(want, got string) bool {
	got = strings.ReplaceAll(got, "arn:aws:", "arn:<partition>:")
	return want == got
}

func diags(t *testing.T, def string) asl.Diagnostics {
	t.Helper()
	return Definition([]byte(def), Standard).Diagnostics
}

func TestChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, bad, good string
		want            string // "code pointer" of a diagnostic on bad
	}{
		{
			name: "unreachable state",
			bad:  `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true},"B":{"Type":"Pass","End":true}}}`,
			good: `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","End":true}}}`,
			want: `MISSING_TRANSITION_TARGET /States/B`,
		},
		{
			name: "a state name used again in a Parallel branch",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}],"Next":"A"},"A":{"Type":"Pass","End":true}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}],"Next":"B"},"B":{"Type":"Pass","End":true}}}`,
			want: `DUPLICATE_STATE_NAME /States/A`,
		},
		{
			name: "a state name used in two Map item processors",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}},"Next":"N"},"N":{"Type":"Map","ItemProcessor":{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}},"Next":"N"},"N":{"Type":"Map","ItemProcessor":{"StartAt":"Y","States":{"Y":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `DUPLICATE_STATE_NAME /States/N/ItemProcessor/States/X`,
		},
		{
			name: "no terminal state",
			bad:  `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`,
			good: `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Succeed"}}}`,
			want: `MISSING_END_STATE `,
		},
		{
			name: "States.ALL not last",
			bad:  `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}]}}}`,
			good: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Retry":[{"ErrorEquals":["X"]},{"ErrorEquals":["States.ALL"]}]}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/T/Retry/0/ErrorEquals`,
		},
		{
			name: "States.ALL not alone",
			bad:  `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Catch":[{"ErrorEquals":["X","States.ALL"],"Next":"T"}]}}}`,
			good: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"r","End":true,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"T"}]}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/T/Catch/0/ErrorEquals`,
		},
		{
			name: "bad JSONPath",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.a[","End":true}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.a[0]","End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/InputPath`,
		},
		{
			name: "bad reference path",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Pass","ResultPath":"$.a[*]","End":true}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Pass","ResultPath":"$.a","End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/ResultPath`,
		},
		{
			name: "unknown intrinsic",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x.$":"States.Nope($.a)"},"End":true}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x.$":"States.Format('{}', $.a)"},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/Parameters/x.$`,
		},
		{
			name: "intrinsic arity",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x.$":"States.MathAdd(1)"},"End":true}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x.$":"States.MathAdd(1, 2)"},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/Parameters/x.$`,
		},
		{
			name: "bad JSONata",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":{"a":"{% 1 + %}"},"End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":{"a":"{% 1 + 2 %}"},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/Output`,
		},
		{
			name: "JSONPath field in JSONata state",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","InputPath":"$.a","End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/P/InputPath`,
		},
		{
			name: "unknown integration action",
			bad:  `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:query","End":true}}}`,
			good: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:getItem","End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/T/Resource`,
		},
		{
			name: "nested scope unreachable",
			bad:  `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","End":true},"Y":{"Type":"Pass","End":true}}}]}}}`,
			good: `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"X","States":{"X":{"Type":"Pass","Next":"Y"},"Y":{"Type":"Pass","End":true}}}]}}}`,
			want: `MISSING_TRANSITION_TARGET /States/P/Branches/0/States/Y`,
		},
		{
			name: "a WriterConfig names an OutputType of AWS's",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"},"WriterConfig":{"OutputType":"XML","Transformation":"FLATTEN"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"},"WriterConfig":{"OutputType":"JSONL","Transformation":"FLATTEN"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ResultWriter/WriterConfig/OutputType`,
		},
		{
			name: "a ResultWriter resource other than s3:putObject",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ResultWriter/Resource`,
		},
		{
			name: "an unknown ResultWriter member",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b"},"Format":1},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ResultWriter/Format`,
		},
		{
			name: "a bad ResultWriter Parameters path",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix.$":"$.p["}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ResultWriter/Parameters/Prefix.$`,
		},
		{
			name: "an unknown ItemBatcher member",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2,"MaxItems":3},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/MaxItems`,
		},
		{
			name: "an ItemBatcher without a limit",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"BatchInput":{"a":1}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"BatchInput":{"a":1},"MaxInputBytesPerBatch":1024},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher`,
		},
		{
			name: "MaxItemsPerBatch not positive",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":0},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":1},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/MaxItemsPerBatch`,
		},
		{
			name: "MaxInputBytesPerBatch over 256 KiB",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxInputBytesPerBatch":262145},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxInputBytesPerBatch":262144},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/MaxInputBytesPerBatch`,
		},
		{
			name: "a bad MaxItemsPerBatchPath",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatchPath":"$.n["},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatchPath":"$.n"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/MaxItemsPerBatchPath`,
		},
		{
			name: "a bad BatchInput path",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"a.$":"$.x["}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"a.$":"$.x"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/BatchInput/a.$`,
		},
		{
			name: "a Path field of ItemBatcher in JSONata",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatchPath":"$.n"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":"{% $states.input.n %}"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/MaxItemsPerBatchPath`,
		},
		{
			name: "bad JSONata in BatchInput",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":"{% 1 + %}"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":"{% {\"a\": 1} %}"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher/BatchInput`,
		},
		{
			name: "ItemBatcher in an INLINE Map",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2},"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemBatcher":{"MaxItemsPerBatch":2},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemBatcher`,
		},
		{
			name: "an unknown ExecutionType",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"BATCH"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemProcessor/ProcessorConfig/ExecutionType`,
		},
		{
			name: "an unknown ProcessorConfig member",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","Concurrency":2,"ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemProcessor/ProcessorConfig/Concurrency`,
		},
		{
			name: "an unknown ReaderConfig member",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","Header":"x"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/Header`,
		},
		{
			name: "an unknown ItemReader member",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"},"Format":"x"},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/Format`,
		},
		{
			name: "a MANIFEST reader takes no CSV fields",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"MANIFEST","CSVDelimiter":"PIPE"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"MANIFEST"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/CSVDelimiter`,
		},
		{
			name: "getObject without an InputType",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig`,
		},
		{
			name: "GIVEN without CSVHeaders",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN","CSVHeaders":["a"]}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig`,
		},
		{
			name: "an unknown CSVDelimiter",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","CSVDelimiter":"COLON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","CSVDelimiter":"TAB"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/CSVDelimiter`,
		},
		{
			name: "a CSV option with JSON",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON","CSVDelimiter":"TAB"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/CSVDelimiter`,
		},
		{
			name: "an ItemReader resource stepd does not read",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:s3:listObjects","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"b"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/Resource`,
		},
		{
			name: "a bad MaxItemsPath",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON","MaxItemsPath":"$.n["}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON","MaxItemsPath":"$.n"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/MaxItemsPath`,
		},
		{
			name: "a bad ItemReader Parameters path",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key.$":"$.k["},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key.$":"$.k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/Parameters/Key.$`,
		},
		{
			name: "Parameters in a JSONata ItemReader",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Arguments":{"Bucket":"b","Key":"{% $states.input.k %}"},"ReaderConfig":{"InputType":"JSON"}},"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/Parameters`,
		},
		{
			name: "ItemsPointer is for JSON (and ItemsPath may stand beside an ItemReader)",
			bad:  `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"CSV","ItemsPointer":"/a"}},"ItemsPath":"$.a","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			good: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"JSON","ItemsPointer":"/a"}},"ItemsPath":"$.a","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/M/ItemReader/ReaderConfig/ItemsPointer`,
		},
		{
			name: "an HTTP Task without a connection",
			bad:  `{"StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Parameters":{"ApiEndpoint":"https://example.com","Method":"GET"},"End":true}}}`,
			good: `{"StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Parameters":{"ApiEndpoint":"https://example.com","Method":"GET","Authentication":{"ConnectionArn":"arn:aws:events:us-east-1:123456789012:connection/c/1"}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/H/Parameters`,
		},
		{
			name: "an HTTP Task's Authentication without ConnectionArn",
			bad:  `{"StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Parameters":{"ApiEndpoint":"https://example.com","Method":"GET","Authentication":{}},"End":true}}}`,
			good: `{"StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Parameters":{"ApiEndpoint":"https://example.com","Method":"GET","Authentication":{"ConnectionArn.$":"$.conn"}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/H/Parameters/Authentication`,
		},
		{
			name: "a JSONata HTTP Task without a connection",
			bad:  `{"QueryLanguage":"JSONata","StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Arguments":{"ApiEndpoint":"https://example.com","Method":"GET"},"End":true}}}`,
			good: `{"QueryLanguage":"JSONata","StartAt":"H","States":{"H":{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Arguments":{"ApiEndpoint":"https://example.com","Method":"GET","Authentication":{"ConnectionArn":"{% $states.input.conn %}"}},"End":true}}}`,
			want: `SCHEMA_VALIDATION_FAILED /States/H/Arguments`,
		},
	}
	for _, tt := range tests {
		got := diags(t, tt.bad)
		found := false
		for _, d := range got {
			if strings.HasPrefix(d.Code+" "+d.Pointer, tt.want) && !d.IsWarning() {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want an error %q, got %v", tt.name, tt.want, got)
		}
		if e := diags(t, tt.good).Errors(); len(e) > 0 {
			t.Errorf("%s: the good definition is rejected: %v", tt.name, e)
		}
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	d := diags(t, `{"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[{"Variable":"$.x","IsPresent":true,"Next":"T"}]},
		"T":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","Parameters":{"a":"$.x"},"Next":"P"},
		"P":{"Type":"Pass","Result":{"b.$":"$.y"},"End":true}}}`)
	if len(d.Errors()) > 0 {
		t.Fatalf("errors: %v", d.Errors())
	}
	var codes []string
	for _, x := range d {
		codes = append(codes, x.Code+" "+x.Pointer)
	}
	want := "MISSING_DEFAULT /States/C,MISSING_TIMEOUT /States/T,NO_DOLLAR /States/T/Parameters/a,PASS_RESULT_IS_STATIC /States/P/Result/b.$"
	if strings.Join(codes, ",") != want {
		t.Errorf("warnings = %s\nwant %s", strings.Join(codes, ","), want)
	}
}

// TestSeedNestedLoop checks the published seed 000 state machine.
func TestSeedNestedLoop(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../examples/nested-loop/published.json")
	if err != nil {
		t.Fatal(err)
	}
	r := Definition(data, Standard)
	msg := Message(r.Diagnostics)
	for _, want := range []string{
		"MISSING_TRANSITION_TARGET: Missing 'Next' target: NotifyOverflow at /States/IsNotificationUserCountReached/Choices[0]/Next",
		`MISSING_TRANSITION_TARGET: State "NotifyAlerts" is not reachable. at /States/NotifyAlerts`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("want %q in\n%s", want, msg)
		}
	}
}

func FuzzDefinition(f *testing.F) {
	for _, s := range []string{
		`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.x","NumericLessThanPath":"$.y"}],"Next":"C"}]}}}`,
		`{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% [1,2] %}","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"x.$":"States.Format('{}', $.a)"},"Retry":[{"ErrorEquals":["States.ALL"]}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"T"}],"End":true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Definition(data, Standard)
		_ = Message(r.Diagnostics)
		_ = Response(r)
		if r.OK() && r.Machine == nil {
			t.Fatal("OK without a machine")
		}
	})
}
