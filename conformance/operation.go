package conformance

// This file compares the cases of single API operations with what stepd
// answers: CreateStateMachine rejections (invalid-definition),
// ValidateStateMachineDefinition and TestState.

import "github.com/stepd/stepd/value"

// DefinitionError is a rejected CreateStateMachine call: the error code
// (InvalidDefinition) and message.
type DefinitionError struct {
	Code, Message string
}

// CompareInvalidDefinition compares an invalid-definition case's expected
// rejection with the engine's; got is nil when the engine accepted the
// definition.
func CompareInvalidDefinition(c *Case, got *DefinitionError) []Diff {
	want := str(c.Expected, "error")
	msg := str(c.Expected, "message")
	if got == nil {
		return []Diff{{Where: "CreateStateMachine", Want: want + ": " + msg, Got: "(definition accepted)"}}
	}
	m := newMatcher(c)
	var diffs []Diff
	if want != "" && want != got.Code {
		diffs = append(diffs, Diff{Where: "error", Want: want, Got: got.Code})
	}
	if !m.matchString(msg, got.Message) {
		diffs = append(diffs, Diff{Where: "message", Want: msg, Got: got.Message})
	}
	return diffs
}

// CompareValidation compares a validate-definition case's expected
// ValidateStateMachineDefinition response (result, diagnostics) with the
// engine's, member by member.
func CompareValidation(c *Case, got *value.Object) []Diff {
	return compareMembers(newMatcher(c), c.Expected, got)
}

// NormalizeTestState turns a TestState response in the API's shape into
// the corpus's: output, and the inspectionData members that the API
// returns as JSON text (input, afterInputPath, result, ...), parsed.
// Values that are not text, or not JSON, are kept.
func NormalizeTestState(resp *value.Object) *value.Object {
	out := value.NewObject(resp.Len())
	for k, v := range resp.All {
		switch k {
		case "output":
			v = parseText(v)
		case "inspectionData":
			if in, ok := v.(*value.Object); ok {
				n := value.NewObject(in.Len())
				for ik, iv := range in.All {
					n.Set(ik, parseText(iv))
				}
				v = n
			}
		}
		out.Set(k, v)
	}
	return out
}

func parseText(v any) any {
	if s, ok := v.(string); ok {
		if pv, err := value.ParseString(s); err == nil {
			return pv
		}
	}
	return v
}

// CompareTestState compares a test-state case's expected TestState
// response (or rejection: error and message) with the engine's. got is
// the response in the API's shape (JSON text is parsed, see
// NormalizeTestState) or, for a rejected call, {"error": code,
// "message": text}.
func CompareTestState(c *Case, got *value.Object) []Diff {
	return compareMembers(newMatcher(c), c.Expected, NormalizeTestState(got))
}

// compareMembers compares two response objects member by member: the
// expected members in order, then the members only the engine gave.
func compareMembers(m *matcher, want, got *value.Object) []Diff {
	var diffs []Diff
	for k, wv := range want.All {
		gv, ok := got.Get(k)
		switch {
		case !ok && wv != nil:
			diffs = append(diffs, Diff{Where: k, Want: value.String(wv), Got: "(none)"})
		case !ok:
		case k == "cause":
			if g, isText := gv.(string); isText && !m.matchCause(wv, g) || !isText && !m.match(wv, gv) {
				diffs = append(diffs, Diff{Where: k, Want: showCause(wv), Got: showCause(gv)})
			}
		default:
			if p := m.diff(wv, gv, member("$", k)); p != "" {
				diffs = append(diffs, Diff{Where: k, Path: p, Want: value.String(wv), Got: value.String(gv)})
			}
		}
	}
	for k, gv := range got.All {
		if !want.Has(k) && gv != nil {
			diffs = append(diffs, Diff{Where: k, Want: "(none)", Got: value.String(gv)})
		}
	}
	return diffs
}
