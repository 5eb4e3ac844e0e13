package validate

import (
	"github.com/stepd/stepd/value"
)

// maxDiagnostics is how many diagnostics a response carries before it is
// truncated.
const maxDiagnostics = 100

// Response renders a result in the shape of the
// ValidateStateMachineDefinition response: result OK or FAIL, diagnostics
// with severity, code, message and location, and truncated.
func Response(r *Result) *value.Object {
	list := make([]any, 0, len(r.Diagnostics))
	for i, d := range r.Diagnostics {
		if i == maxDiagnostics {
			break
		}
		o := value.NewObject(4)
		o.Set("code", d.Code)
		if d.Pointer != "" {
			o.Set("location", d.Pointer)
		}
		o.Set("message", d.Message)
		sev := d.Severity
		if sev == "" {
			sev = "ERROR"
		}
		o.Set("severity", sev)
		list = append(list, o)
	}
	out := value.NewObject(3)
	if r.OK() {
		out.Set("result", "OK")
	} else {
		out.Set("result", "FAIL")
	}
	out.Set("diagnostics", list)
	out.Set("truncated", len(r.Diagnostics) > maxDiagnostics)
	return out
}
