package validate

import (
	"testing"

	"github.com/stepd/stepd/asl"
)

// TestNotImplementedIsAWarning: a definition that AWS accepts is never an
// ERROR, even where stepd cannot run a field: that field is a WARNING
// (UNSUPPORTED_FEATURE) saying so, the definition is valid and its state
// carries the message an execution fails with (asl.State.NotImplemented).
func TestNotImplementedIsAWarning(t *testing.T) {
	t.Parallel()
	const proc = `"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	for _, def := range []string{
		`{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"ReaderConfig":{"InputType":"MANIFEST"}},` + proc,
		`{"StartAt":"M","States":{"M":{"Type":"Map","ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"},"WriterConfig":{"OutputType":"JSONL","Transformation":"FLATTEN"}},` + proc,
	} {
		r := Definition([]byte(def), Standard)
		if !r.OK() || r.Machine == nil {
			t.Errorf("%s: AWS accepts it, stepd says %v", def, r.Err())
			continue
		}
		var warned []asl.Diagnostic
		for _, d := range r.Diagnostics {
			if d.Code == asl.CodeUnsupported {
				warned = append(warned, d)
			}
		}
		if len(warned) == 0 {
			t.Skipf("stepd runs it now: %s", def)
		}
		st := r.Machine.States["M"]
		if len(warned) != 1 || !warned[0].IsWarning() || st.NotImplemented != warned[0].Message {
			t.Errorf("%s: warnings %+v, state's message %q", def, warned, st.NotImplemented)
		}
	}
}
