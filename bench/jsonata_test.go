package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/shared"
)

// BenchmarkJSONataVsJSONPath runs the same loop written in JSONata
// (j1-jsonata-loop: Assign, Output and a Condition per iteration) and in
// JSONPath (j2-jsonpath-loop) and reports each one's transitions/s and
// allocations per transition; the JSONata loop's sub-benchmark also
// reports its speed as a fraction of the JSONPath loop's (jsonata/jsonpath,
// measured just before it).
func BenchmarkJSONataVsJSONPath(b *testing.B) {
	ws, err := Load(shared.Dir(b, "bench/workloads"))
	if err != nil {
		b.Fatal(err)
	}
	byName := map[string]*Workload{}
	for _, w := range ws {
		byName[w.Name] = w
	}
	var jsonpathRate float64
	for _, name := range []string{"j2-jsonpath-loop", "j1-jsonata-loop"} {
		w := byName[name]
		if w == nil {
			b.Fatalf("no workload %s", name)
		}
		b.Run(name, func(b *testing.B) {
			rate := benchLoop(b, w, false)
			if name == "j2-jsonpath-loop" {
				jsonpathRate = rate
			} else if jsonpathRate > 0 {
				b.ReportMetric(rate/jsonpathRate, "jsonata/jsonpath")
			}
		})
	}
}

// BenchmarkJSONataLargeVariable reads a variable holding an array of
// about 100 KiB at every iteration of a 1,000-iteration JSONata loop, for
// array sizes from 1 KiB to 100 KiB: the cost per transition must not grow
// with the size (the variable is converted for the evaluator once, when
// assigned).
func BenchmarkJSONataLargeVariable(b *testing.B) {
	for _, kib := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("%dKiB", kib), func(b *testing.B) {
			benchLoop(b, largeVariableLoop(kib), false)
		})
	}
}

// largeVariableLoop is a JSONata loop of 1,000 iterations over a variable
// holding an array of objects of about kib KiB, read by every iteration.
func largeVariableLoop(kib int) *Workload {
	items := make([]string, 0, kib*1024/32)
	for i := range cap(items) {
		items = append(items, fmt.Sprintf(`{"id":%d,"name":"item-%06d"}`, i, i))
	}
	def := `{"QueryLanguage": "JSONata", "StartAt": "Init", "States": {
		"Init": {"Type": "Pass", "Assign": {"i": 0, "big": {"list": [` + strings.Join(items, ",") + `]}}, "Next": "Loop"},
		"Loop": {"Type": "Choice", "Choices": [{"Condition": "{% $i < 1000 %}", "Next": "Body"}], "Default": "Done"},
		"Body": {"Type": "Pass", "Assign": {"i": "{% $i + 1 %}"}, "Output": "{% {'first': $big.list[0].id, 'n': $count($big.list), 'i': $i} %}", "Next": "Loop"},
		"Done": {"Type": "Pass", "Output": "{% $i %}", "End": true}}}`
	return &Workload{Name: fmt.Sprintf("large-variable-%dKiB", kib), Definition: []byte(def), Input: nil, Transitions: 2003}
}

// benchLoop runs w once per iteration, its Tasks through the generic
// invoker or inline, and reports transitions/s and allocations per
// transition; it returns the rate.
func benchLoop(b *testing.B, w *Workload, inline bool) float64 {
	once, err := prepare(w, inline)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		x := once(context.Background())
		if st := x.Status(); st != "SUCCEEDED" {
			b.Fatalf("%s: %s", w.Name, st)
		}
		n += entered(x)
	}
	runtime.ReadMemStats(&after)
	rate := float64(n) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "transitions/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/transition")
	return rate
}
