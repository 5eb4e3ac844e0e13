package histcase_test

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/histcase"
	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

// knownMisses are the recorded cases whose generated case does not
// reproduce the recorded status and output, with the reason.
var knownMisses = map[string]string{
	"base.query_context_object_values":                                       "the recording replaced the value with a literal word (start-time, entered-time), which no replay can produce (a known failure of the recorded case itself)",
	"intrinsic_functions.math_operations.math_random.0":                      "the recording replaced the value with a literal word (RandomNumberGenerated), which no replay can produce (a known failure of the recorded case itself)",
	"intrinsic_functions.math_operations.math_random.1":                      "the recording replaced the value with a literal word (RandomNumberGenerated), which no replay can produce (a known failure of the recorded case itself)",
	"intrinsic_functions.unique_id_generation.uuid":                          "the recording replaced the value with a literal word (generated-uuid), which no replay can produce (a known failure of the recorded case itself)",
	"local_mocking.base_scenarios.map_state_lambda":                          "a Distributed Map whose child executions' histories were not recorded: its ItemProcessor's Lambda task has no responses (the case says so in its notes)",
	"scenarios.base_scenarios.map_state_config_distributed_reentrant_lambda": "a Distributed Map whose child executions' histories were not recorded: its ItemProcessor's Lambda task has no responses (the case says so in its notes)",
	"scenarios.base_scenarios.wait_timestamp_jsonata.INVALID_DATE":           "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_jsonata.NANOSECONDS":            "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_jsonata.NO_T":                   "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_jsonata.NO_Z":                   "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_jsonata.SECONDS":                "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_path.INVALID_TIME":              "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
	"scenarios.base_scenarios.wait_timestamp_path.SECONDS":                   "the recording replaced the input's timestamp with the word timestamp, so the history's input is not what the execution was given",
}

// TestRoundTrip generates a case from the history of every AWS-recorded
// execution case that carries one, runs it as stepd test does and
// compares its outcome with the recorded status and output.
func TestRoundTrip(t *testing.T) {
	cases, err := conformance.Load(shared.CasesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	total, ok := 0, 0
	var misses []string
	for _, src := range cases {
		if src.Kind != "execution" || src.History == nil {
			continue
		}
		total++
		reason := roundTrip(ctx, t, src)
		if reason == "" {
			ok++
			if why, listed := knownMisses[src.Name]; listed {
				t.Errorf("%s reproduces now: remove it from knownMisses (%s)", src.Name, why)
			}
			continue
		}
		misses = append(misses, src.Name)
		if _, listed := knownMisses[src.Name]; !listed {
			t.Errorf("%s: %s", src.Name, reason)
		}
	}
	sort.Strings(misses)
	t.Logf("%d of %d recorded histories reproduce their status and output (%.1f %%); misses: %s", ok, total, 100*float64(ok)/float64(max(total, 1)), strings.Join(misses, ", "))
	if total == 0 {
		t.Fatal("no recorded case carries a history")
	}
	if float64(ok) < 0.95*float64(total) {
		t.Errorf("only %d of %d reproduce: want at least 95 %%", ok, total)
	}
	for name := range knownMisses {
		if !sliceHas(misses, name) && !hasCase(cases, name) {
			t.Errorf("knownMisses lists %s, which is not a recorded case with a history", name)
		}
	}
}

func sliceHas(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func hasCase(cases []*conformance.Case, name string) bool {
	for _, c := range cases {
		if c.Name == name && c.History != nil {
			return true
		}
	}
	return false
}

// roundTrip returns "" when the case generated from src's history
// reproduces src's recorded outcome, else why not.
func roundTrip(ctx context.Context, t *testing.T, src *conformance.Case) string {
	data, err := os.ReadFile(src.File)
	if err != nil {
		t.Fatal(err)
	}
	h, err := histcase.Read(data)
	if err != nil {
		return "reading the history: " + err.Error()
	}
	smName, execName := src.StateMachineName, src.ExecutionName
	if smName == "" {
		smName = "conformance_sm"
	}
	if execName == "" {
		execName = "conformance_exec"
	}
	res, err := histcase.Build(ctx, h, histcase.Options{
		Definition:     src.Definition,
		DefinitionText: src.DefinitionString,
		ExecutionArn:   "arn:aws:states:us-east-1:111111111111:execution:" + smName + ":" + execName,
		Name:           src.Name,
		Type:           src.Type,
	})
	if err != nil {
		return "generating the case: " + err.Error()
	}
	// The generated case, read back as stepd test reads it.
	text := value.Indent(res.Case)
	v, err := value.ParseString(text)
	if err != nil {
		t.Fatalf("%s: the generated case is not JSON: %v", src.Name, err)
	}
	gen, err := conformance.FromValue(v.(*value.Object), src.Name)
	if err != nil {
		return "loading the generated case: " + err.Error()
	}
	// The recording's placeholders stand for the names it ran with.
	gen.Placeholders = src.Placeholders
	got, err := conformance.RunExecution(ctx, gen)
	if err != nil {
		return "running the generated case: " + err.Error()
	}
	// Compare with what AWS recorded (the source case's outcome).
	want := *src
	want.History = nil
	if diffs := conformance.CompareOutcome(&want, got); len(diffs) > 0 {
		var b strings.Builder
		for _, d := range diffs {
			b.WriteString(d.String() + "\n")
		}
		b.WriteString("notes: " + strings.Join(res.Notes, " | "))
		return b.String()
	}
	return ""
}
