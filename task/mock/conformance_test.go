package mock

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

type confCase struct {
	name string
	doc  *value.Object
}

func loadCases(t *testing.T) []confCase {
	t.Helper()
	files := shared.Cases(t, "*.json")
	cases := make([]confCase, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases = append(cases, confCase{strings.TrimSuffix(filepath.Base(f), ".json"), v.(*value.Object)})
	}
	return cases
}

func member(v any, path ...string) any {
	for _, k := range path {
		o, _ := v.(*value.Object)
		v, _ = o.Get(k)
	}
	return v
}

// TestConformanceMocksParse parses the mocks of every conformance case.
func TestConformanceMocksParse(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range loadCases(t) {
		mocks := member(c.doc, "mocks")
		if mocks == nil {
			continue
		}
		n++
		cfg, err := FromValue(mocks)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		sm, _ := member(c.doc, "run", "stateMachineName").(string)
		if _, err := cfg.Invoker(sm, ""); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if n < 80 {
		t.Errorf("only %d cases with mocks", n)
	}
}

// TestConformanceTaskResults replays the Task invocations recorded in the
// conformance histories against the mock invoker: for each TaskScheduled
// (or LambdaFunctionScheduled) event, the invoker gets the recorded
// parameters and must produce the recorded TaskSucceeded output or
// TaskFailed error and cause.
func TestConformanceTaskResults(t *testing.T) {
	t.Parallel()
	checked := map[string]int{}
	for _, c := range loadCases(t) {
		mocks := member(c.doc, "mocks")
		history, _ := member(c.doc, "expected", "history").([]any)
		if mocks == nil || len(history) == 0 {
			continue
		}
		cfg, err := FromValue(mocks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sm, _ := member(c.doc, "run", "stateMachineName").(string)
		inv := mustInvoker(t, cfg, sm, "")
		ph := newPlaceholders(member(c.doc, "placeholders"))
		for _, call := range recordedCalls(history) {
			got := inv.Invoke(context.Background(), &task.Request{
				Resource:         ph.concrete(call.resource).(string),
				StateName:        call.state,
				StateMachineName: sm,
				Attempt:          call.attempt,
				Input:            ph.concrete(call.input),
			})
			where := c.name + ": " + call.state + " #" + itoa(call.attempt)
			if call.err == "States.DataLimitExceeded" {
				continue // the interpreter's verdict on the result size
			}
			if call.err != "" {
				if got.Error != call.err || !causeMatches(call.cause, ph.placeholder(got.Cause)) {
					t.Errorf("%s: got %s / %s, want %s / %s", where, got.Error, got.Cause, call.err, value.String(call.cause))
				}
			} else if got.Failed() || !matches(call.output, ph.placeholder(got.Output), "") {
				t.Errorf("%s: got %+v (output %s), want %s", where, got, value.String(got.Output), value.String(call.output))
			}
			checked[call.kind]++
		}
	}
	t.Logf("checked %v", checked)
	for _, kind := range []string{"lambda:invoke", "direct", "service"} {
		if checked[kind] < 10 {
			t.Errorf("only %d %s invocations checked", checked[kind], kind)
		}
	}
}

func itoa(i int) string { return value.String(value.Int(int64(i))) }

type recordedCall struct {
	kind, state, resource string
	attempt               int
	input                 any
	output                any
	err                   string
	cause                 any
}

// recordedCalls pairs each scheduled task in a history with its outcome.
func recordedCalls(history []any) []recordedCall {
	byID := map[string]*value.Object{}
	for _, e := range history {
		o := e.(*value.Object)
		if id, ok := o.Get("id"); ok && id != nil {
			byID[value.String(id)] = o
		}
	}
	prev := func(o *value.Object) *value.Object {
		p, _ := o.Get("previousEventId")
		if p == nil {
			return nil
		}
		return byID[value.String(p)]
	}
	// walk follows previousEventId until an event of one of the types.
	walk := func(o *value.Object, types ...string) *value.Object {
		for o = prev(o); o != nil; o = prev(o) {
			typ, _ := o.Get("type")
			for _, t := range types {
				if typ == t {
					return o
				}
			}
		}
		return nil
	}
	var calls []recordedCall
	index := map[*value.Object]int{}
	attempts := map[string]int{}
	for _, e := range history {
		o := e.(*value.Object)
		typ, _ := o.Get("type")
		var call recordedCall
		switch typ {
		case "TaskScheduled":
			d := member(o, "taskScheduledEventDetails")
			rt, _ := member(d, "resourceType").(string)
			r, _ := member(d, "resource").(string)
			call = recordedCall{kind: "service", resource: "arn:aws:states:::" + rt + ":" + r, input: member(d, "parameters")}
			if call.resource == invokeARN {
				call.kind = "lambda:invoke"
			}
		case "LambdaFunctionScheduled":
			d := member(o, "lambdaFunctionScheduledEventDetails")
			r, _ := member(d, "resource").(string)
			call = recordedCall{kind: "direct", resource: r, input: member(d, "input")}
		case "TaskSucceeded", "TaskFailed", "LambdaFunctionSucceeded", "LambdaFunctionFailed":
			s := walk(o, "TaskScheduled", "LambdaFunctionScheduled")
			i, ok := index[s]
			if !ok {
				continue
			}
			for _, d := range []string{"taskSucceededEventDetails", "taskFailedEventDetails", "lambdaFunctionSucceededEventDetails", "lambdaFunctionFailedEventDetails"} {
				if det, ok := o.Get(d); ok {
					calls[i].output = member(det, "output")
					calls[i].err, _ = member(det, "error").(string)
					calls[i].cause = member(det, "cause")
				}
			}
			continue
		default:
			continue
		}
		entered := walk(o, "TaskStateEntered")
		if entered == nil {
			continue // ids lost (sorted parallel branches)
		}
		call.state, _ = member(entered, "stateEnteredEventDetails", "name").(string)
		call.attempt = attempts[call.state]
		attempts[call.state]++
		index[o] = len(calls)
		calls = append(calls, call)
	}
	// Keep the calls whose outcome was recorded.
	out := calls[:0]
	for _, c := range calls {
		if c.output != nil || c.err != "" {
			out = append(out, c)
		}
	}
	return out
}

// placeholders maps between the recording's placeholders and the concrete
// values of a case.
type placeholders struct{ toConcrete, toPlaceholder *strings.Replacer }

func newPlaceholders(m any) placeholders {
	o, _ := m.(*value.Object)
	type pair struct{ ph, val string }
	var pairs []pair
	for k, v := range o.All {
		if s, ok := v.(string); ok {
			pairs = append(pairs, pair{k, s})
		}
	}
	// Longer placeholders first, so "<lambda_function_name>" goes before
	// "lambda_function_name".
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].ph) > len(pairs[j].ph) })
	fwd := []string{"arn:<partition>:", "arn:aws:", ":<region>:", ":us-east-1:"}
	var rev []string
	for _, p := range pairs {
		fwd = append(fwd, p.ph, p.val)
	}
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].val) > len(pairs[j].val) })
	for _, p := range pairs {
		rev = append(rev, p.val, p.ph)
	}
	rev = append(rev, "arn:aws:", "arn:<partition>:", ":us-east-1:", ":<region>:")
	return placeholders{strings.NewReplacer(fwd...), strings.NewReplacer(rev...)}
}

func (p placeholders) concrete(v any) any    { return replaceStrings(v, p.toConcrete) }
func (p placeholders) placeholder(v any) any { return replaceStrings(v, p.toPlaceholder) }

func replaceStrings(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return r.Replace(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replaceStrings(e, r)
		}
		return out
	case *value.Object:
		out := value.NewObject(x.Len())
		for k, e := range x.All {
			out.Set(r.Replace(k), replaceStrings(e, r))
		}
		return out
	}
	return v
}

var wildcardRE = regexp.MustCompile(`^<[^<>]+>$`)

// matches compares a recorded value with ours under the corpus's
// normalisation rules: "<...>" and the words date, datetime, timestamp
// stand for any value, and an HTTP metadata value that the recording
// replaced by its own member name stands for any value. Member order
// counts.
func matches(want, got any, name string) bool { return match(want, got, name, false) }

func match(want, got any, name string, meta bool) bool {
	if s, ok := want.(string); ok && (wildcardRE.MatchString(s) || s == "date" || s == "datetime" || s == "timestamp" || (meta && s == name)) {
		return true
	}
	switch w := want.(type) {
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok || g.Len() != w.Len() {
			return false
		}
		for i := 0; i < w.Len(); i++ {
			wk, wv := w.At(i)
			gk, gv := g.At(i)
			if wk != gk || !match(wv, gv, wk, meta || wk == "SdkHttpMetadata" || wk == "SdkResponseMetadata") {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !match(w[i], g[i], "", meta) {
				return false
			}
		}
		return true
	}
	return value.Equal(want, got)
}

// causeMatches compares a recorded cause (text, or the parsed object when
// AWS's cause was JSON) with ours.
func causeMatches(want any, got any) bool {
	s, _ := got.(string)
	if _, ok := want.(*value.Object); ok {
		v, err := value.ParseString(s)
		return err == nil && matches(want, v, "")
	}
	return matches(want, s, "")
}
