package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// The worst expressions of issue 12: each used to hold a core for seconds
// and gigabytes of memory; each now fails its state, naming the limit.
const (
	// doubling doubles a string 30 times (1 GiB).
	doubling = `($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f('x', 30)))`
	// fib calls itself exponentially often.
	fib = `($f := function($n) { $n <= 1 ? $n : $f($n - 1) + $f($n - 2) }; $f(60))`
)

// deepArray is [[[...1...]]] nested depth levels.
func deepArray(depth int) any {
	v, err := value.ParseString(strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth))
	if err != nil {
		panic(err)
	}
	return v
}

// deepObject is {"a":{"a":...1...}} nested depth levels.
func deepObject(depth int) any {
	v, err := value.ParseString(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
	if err != nil {
		panic(err)
	}
	return v
}

func TestEvaluationBudgets(t *testing.T) {
	t.Parallel()
	jsonata := func(expr string) string {
		return `{"QueryLanguage":"JSONata","StartAt":"P","States":{
			"P":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","Arguments":{"n":"{% ` + expr + ` %}"},"End":true,
				"Catch":[{"ErrorEquals":["States.QueryEvaluationError"],"Output":"{% $states.errorOutput %}","Next":"Caught"}]},
			"Caught":{"Type":"Pass","End":true}}}`
	}
	jsonpath := func(params string) string {
		return `{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":` + params + `,"End":true}}}`
	}
	tests := []struct {
		name   string
		def    string
		input  any
		budget engine.Budget
		status interp.Status // SUCCEEDED: caught
		err    string
		cause  string
	}{
		{name: "string doubled (bytes allocated)", def: jsonata(doubling), budget: engine.Budget{Time: -1, Steps: -1},
			status: interp.Succeeded, err: "States.QueryEvaluationError", cause: "exceeded its budget of 134,217,728 bytes allocated"},
		{name: "$string of a deep input, indented (bytes allocated)", def: jsonata(`$string($states.input, true)`), input: deepObject(10_000),
			budget: engine.Budget{Time: -1, Steps: -1}, status: interp.Succeeded, err: "States.QueryEvaluationError", cause: "exceeded its budget of 134,217,728 bytes allocated"},
		{name: "$string of a deep input, indented (time)", def: jsonata(`$string($states.input, true)`), input: deepObject(10_000),
			budget: engine.Budget{Time: 50 * time.Millisecond, Steps: -1, Alloc: -1}, status: interp.Succeeded, err: "States.QueryEvaluationError", cause: "exceeded its budget of 50ms of time"},
		{name: "exponential recursion (steps)", def: jsonata(fib), budget: engine.Budget{Time: -1, Steps: 100_000, Alloc: -1},
			status: interp.Succeeded, err: "States.QueryEvaluationError", cause: "exceeded its budget of 100,000 steps"},
		{name: "exponential recursion (time)", def: jsonata(fib), budget: engine.Budget{Time: 100 * time.Millisecond, Steps: -1, Alloc: -1},
			status: interp.Succeeded, err: "States.QueryEvaluationError", cause: "exceeded its budget of 100ms of time"},
		{name: "$..* over a deep array (bytes of the value)", def: jsonpath(`{"r.$":"$..*"}`), input: deepArray(9999),
			status: interp.Failed, err: "States.Runtime", cause: "The value of '$..*' exceeded its budget of 16,777,216 bytes."},
		{name: "$..*..* over a deep array (values collected)", def: jsonpath(`{"r.$":"$..*..*"}`), input: deepArray(5000),
			status: interp.Failed, err: "States.Runtime", cause: "The JSONPath '$..*..*' collected more than its budget of 1,000,000 values."},
		{name: "intrinsic (bytes of the value)", def: jsonpath(`{"r.$":"States.Array($.s, $.s, $.s, $.s, $.s, $.s, $.s, $.s, $.s, $.s)"}`),
			input: value.ObjectOf("s", strings.Repeat("x", 200_000)), budget: engine.Budget{ValueBytes: 1 << 20},
			status: interp.Failed, err: "States.Runtime", cause: "exceeded its budget of 1,048,576 bytes."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sm, err := asl.Parse([]byte(tc.def))
			if err != nil {
				t.Fatal(err)
			}
			p, err := interp.Compile(sm)
			if err != nil {
				t.Fatal(err)
			}
			input := tc.input
			if input == nil {
				input = value.NewObject(0)
			}
			x := engine.Run(context.Background(), p, interp.Info{Name: "t", StartTime: time.Unix(1000, 0)}, input, engine.Config{Budget: tc.budget})
			if x.Status() != tc.status {
				t.Fatalf("status %s (%v), want %s; history %s", x.Status(), x.Failure(), tc.status, types(x))
			}
			errName, cause := "", ""
			if tc.status == interp.Succeeded {
				out, _ := x.Output().(*value.Object)
				e, _ := out.Get("Error")
				c, _ := out.Get("Cause")
				errName, _ = e.(string)
				cause, _ = c.(string)
			} else {
				errName, cause = x.Failure().Error, x.Failure().Cause
			}
			if errName != tc.err || !strings.Contains(cause, tc.cause) {
				t.Errorf("error %s: %s\nwant %s: ...%s...", errName, cause, tc.err, tc.cause)
			}
		})
	}
}

// Evaluations that run side by side are each charged a share of the
// process's allocations, not all of them: five evaluations that each
// allocate about 50 MB fit a budget of 128 MiB together (charged the whole
// process's 250 MB, most were cut off), and the
// string doubled thirty times is still stopped beside them.
func TestAllocationShared(t *testing.T) {
	// building 100,000 small objects allocates about 50 MB
	const legit = `$count([1..100000].{'a': $})`
	run := func(expr string) *interp.Execution {
		def := `{"QueryLanguage":"JSONata","StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% ` + expr + ` %}","End":true}}}`
		sm, err := asl.Parse([]byte(def))
		if err != nil {
			panic(err)
		}
		p, err := interp.Compile(sm)
		if err != nil {
			panic(err)
		}
		return engine.Run(context.Background(), p, interp.Info{Name: "t", StartTime: time.Unix(1000, 0)}, value.NewObject(0),
			engine.Config{Budget: engine.Budget{Time: -1, Steps: -1}})
	}
	side := func(exprs ...string) []*interp.Execution {
		start := make(chan struct{})
		out := make([]*interp.Execution, len(exprs))
		done := make(chan struct{})
		for i, e := range exprs {
			go func() { <-start; out[i] = run(e); done <- struct{}{} }()
		}
		close(start)
		for range exprs {
			<-done
		}
		return out
	}
	if testing.Short() {
		t.Skip("allocates 1 GB")
	}
	for round := range 2 {
		for i, x := range side(legit, legit, legit, legit, legit) {
			if x.Status() != interp.Succeeded || value.String(x.Output()) != "100000" {
				t.Errorf("round %d, evaluation %d of 5 side by side: %s: %v", round, i, x.Status(), x.Failure())
			}
		}
	}
	x := side(doubling, legit, legit, legit)[0]
	if f := x.Failure(); x.Status() != interp.Failed || !strings.Contains(f.Cause, "bytes allocated") {
		t.Errorf("the doubled string beside three evaluations: %s: %v", x.Status(), f)
	}
}
