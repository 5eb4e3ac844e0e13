package intrinsic

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

// knownFailures lists the intrinsic_functions cases this package does not
// reproduce, with the reason. The test fails when a listed case passes, so
// the list stays true.
var knownFailures = map[string]string{}

// Values the recording normalised: accept any value of the right shape.
const (
	randomPlaceholder = "RandomNumberGenerated"
	uuidPlaceholder   = "generated-uuid"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestConformanceCases evaluates every intrinsic_functions case whose
// machine is one Pass state with Parameters {"FunctionResult.$": call}
// against the case's input, and compares with the recorded output.
func TestConformanceCases(t *testing.T) {
	casesDir := shared.CasesDir(t)
	files := shared.Cases(t, "intrinsic_functions.*.json")
	var passed, skipped int
	var failed []string
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		reason, ok := runCase(t, file)
		switch {
		case !ok:
			skipped++
			continue
		case reason == "":
			passed++
			if why, known := knownFailures[name]; known {
				t.Errorf("%s passes but is listed as a known failure (%s): remove it from knownFailures", name, why)
			}
		default:
			failed = append(failed, name)
			if _, known := knownFailures[name]; !known {
				t.Errorf("%s: %s", name, reason)
			}
		}
	}
	for name := range knownFailures {
		if !slices.Contains(failed, name) {
			if _, err := os.Stat(filepath.Join(casesDir, name+".json")); err != nil {
				t.Errorf("known failure %s is not a case", name)
			}
		}
	}
	t.Logf("intrinsic_functions cases: %d passed, %d failed, %d skipped (not a single JSONPath intrinsic call)", passed, len(failed), skipped)
	if passed == 0 {
		t.Errorf("no case passed")
	}
}

// runCase runs one case file. ok is false when the case does not have the
// simple shape this test handles; reason is empty when the case passes.
func runCase(t *testing.T, file string) (reason string, ok bool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := value.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c := value.AsObject(doc)
	get := func(o *value.Object, path ...string) any {
		var v any = o
		for _, k := range path {
			v, _ = value.AsObject(v).Get(k)
		}
		return v
	}
	states := value.AsObject(get(c, "definition", "States"))
	if states == nil || states.Len() != 1 {
		return "", false
	}
	_, st := states.At(0)
	params := value.AsObject(get(value.AsObject(st), "Parameters"))
	if get(value.AsObject(st), "Type") != "Pass" || params == nil || params.Len() != 1 {
		return "", false
	}
	expr, isStr := get(params, "FunctionResult.$").(string)
	if !isStr || !IsCall(expr) {
		return "", false
	}

	input := get(c, "input")
	placeholders := value.AsObject(get(c, "placeholders"))
	r := testResolver{input: input, context: contextObject(c, input)}
	call, err := Parse(expr)
	if err != nil {
		return "parse: " + err.Error(), true
	}
	got, err := call.Eval(r)
	if get(c, "expected", "status") != "SUCCEEDED" {
		if err == nil {
			return "succeeded with " + value.String(got) + ", want " + value.String(get(c, "expected", "error")), true
		}
		return "", true
	}
	if err != nil {
		return "eval: " + err.Error(), true
	}
	want := get(c, "expected", "output", "FunctionResult")
	switch want {
	case randomPlaceholder:
		return checkRandom(call, input, got), true
	case uuidPlaceholder:
		if s, _ := got.(string); !uuidRE.MatchString(s) {
			return "got " + value.String(got) + ", want a UUID", true
		}
		return "", true
	}
	gotText := withPlaceholders(value.String(got), placeholders)
	if wantText := value.String(want); gotText != wantText {
		return "got " + gotText + ", want " + wantText, true
	}
	return "", true
}

// contextObject builds the context object ($$) of the case's execution.
func contextObject(c *value.Object, input any) *value.Object {
	runObj, _ := c.Get("run")
	run := value.AsObject(runObj)
	str := func(k string) string {
		v, _ := run.Get(k)
		s, _ := v.(string)
		return s
	}
	sm, exec := str("stateMachineName"), str("executionName")
	prefix := "arn:aws:states:us-east-1:111111111111:"
	return value.ObjectOf(
		"Execution", value.ObjectOf(
			"Id", prefix+"execution:"+sm+":"+exec,
			"Input", input,
			"Name", exec,
			"RoleArn", str("roleArn"),
			"StartTime", "2024-01-01T00:00:00.000Z",
			"RedriveCount", value.Int(0),
		),
		"State", value.ObjectOf("EnteredTime", "2024-01-01T00:00:00.000Z", "Name", "State_0", "RetryCount", value.Int(0)),
		"StateMachine", value.ObjectOf("Id", prefix+"stateMachine:"+sm, "Name", sm),
	)
}

// withPlaceholders replaces the run's concrete names in text by the
// recording's placeholders, as the corpus README prescribes.
func withPlaceholders(text string, placeholders *value.Object) string {
	text = strings.ReplaceAll(text, "arn:aws:states:us-east-1:", "arn:<partition>:states:<region>:")
	type pair struct{ concrete, token string }
	var pairs []pair
	for token, v := range placeholders.All {
		if s, ok := v.(string); ok && s != "" {
			pairs = append(pairs, pair{s, token})
		}
	}
	// Longest first, so that a name inside another is not replaced early.
	slices.SortFunc(pairs, func(a, b pair) int { return len(b.concrete) - len(a.concrete) })
	for _, p := range pairs {
		text = strings.ReplaceAll(text, p.concrete, p.token)
	}
	return text
}

// checkRandom checks a States.MathRandom result against its bounds.
func checkRandom(call *Call, input any, got any) string {
	if call.Name != "States.MathRandom" {
		return "random placeholder for " + call.Name
	}
	n, ok := got.(value.Number)
	i, isInt := n.Int64()
	if !ok || !isInt {
		return "got " + value.String(got) + ", want an integer"
	}
	var bounds [2]int64
	for k := range bounds {
		a := call.Args[k]
		var v any = a.Value
		if a.Kind == ArgPath {
			v, _ = testResolver{input: input}.Resolve(a.Path)
		}
		b, _ := v.(value.Number)
		bounds[k] = int64(roundHalfUp(b.Float64()))
	}
	if i < bounds[0] || i >= bounds[1] {
		return "got " + value.String(got) + ", out of the bounds " + value.String([]any{value.Int(bounds[0]), value.Int(bounds[1])})
	}
	return ""
}
