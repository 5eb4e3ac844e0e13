package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// passChain is a definition of n Pass states, each of which passes its
// input's blob on with its own index, as the s-payload workloads do.
func passChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"P0","States":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"P%d":{"Type":"Pass","Parameters":{"blob.$":"$.blob","i":%d},`, i, i)
		if i == n-1 {
			b.WriteString(`"End":true}`)
		} else {
			fmt.Fprintf(&b, `"Next":"P%d"}`, i+1)
		}
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestDataLimitExact: the 256 KiB limit on a state's output is exact in
// bytes of UTF-8 whether or not the sizes of the output's parts were
// counted before: an output of 262,144 bytes (a string, or an array)
// passes every state of a chain, one of 262,145 fails the first state with
// States.DataLimitExceeded, and so does an output that holds twice a
// string the state before passed on once.
func TestDataLimitExact(t *testing.T) {
	t.Parallel()
	chain := compile(t, passChain(3))
	const limit = 256 * 1024
	frame := len(`{"blob":"","i":0}`)
	odd := strings.Repeat("x", (limit-frame)%2) // 2-byte characters fill the rest
	for _, tt := range []struct {
		name string
		blob string
		ok   bool
	}{
		{"at the limit", strings.Repeat("x", limit-frame), true},
		{"one byte over", strings.Repeat("x", limit-frame+1), false},
		{"at the limit in UTF-8", odd + strings.Repeat("é", (limit-frame)/2), true},
		{"one byte over in UTF-8", odd + "x" + strings.Repeat("é", (limit-frame)/2), false},
		{"at the limit with escapes", odd + strings.Repeat(`"`, (limit-frame)/2), true},
		{"one byte over with escapes", odd + "x" + strings.Repeat(`"`, (limit-frame)/2), false},
	} {
		runLimit(t, chain, tt.name, value.ObjectOf("blob", tt.blob), tt.ok)
	}
	// An array of 131,064 ones is 262,129 bytes: at the limit in the
	// output; a 10 for a 1 is one byte over.
	ones := make([]any, (limit-len(`{"blob":,"i":0}`))/2)
	for i := range ones {
		ones[i] = value.Int(1)
	}
	runLimit(t, chain, "an array at the limit", value.ObjectOf("blob", ones), true)
	over := append([]any{value.Int(10)}, ones[1:]...)
	runLimit(t, chain, "an array one byte over", value.ObjectOf("blob", over), false)
	runLimit(t, chain, "the array at the limit again", value.ObjectOf("blob", ones), true)

	// A passes a blob of 150,000 bytes on; B's output holds it twice.
	twice := compile(t, `{"StartAt":"A","States":{
		"A":{"Type":"Pass","Parameters":{"blob.$":"$.blob"},"Next":"B"},
		"B":{"Type":"Pass","ResultPath":"$.again","End":true}}}`)
	x := engine.Run(context.Background(), twice, interp.Info{Name: "twice"}, value.ObjectOf("blob", strings.Repeat("y", 150_000)), engine.Config{})
	if f := x.Failure(); x.Status() != interp.Failed || f.Error != interp.ErrDataLimitExceeded || !strings.Contains(f.Cause, "'B'") {
		t.Errorf("doubled blob: %s %+v, want B to fail with %s", x.Status(), f, interp.ErrDataLimitExceeded)
	}
}

// BenchmarkPassChainPayload runs 100 Pass states that pass a blob of 16 KiB
// and of 250 KiB on (a string, as the s-payload workloads do, or an array
// of numbers) and reports the cost of one state: the size check at each
// state's exit does not walk the blob again, so the sizes cost about the
// same.
func BenchmarkPassChainPayload(b *testing.B) {
	const states = 100
	for _, kind := range []string{"string", "array"} {
		for _, size := range []int{16 << 10, 250 << 10} {
			b.Run(fmt.Sprintf("%s-%dKiB", kind, size>>10), func(b *testing.B) {
				p := compile(b, passChain(states))
				var blob any = strings.Repeat("x", size)
				if kind == "array" {
					arr := make([]any, size/6) // 5 digits and a comma each
					for i := range arr {
						arr[i] = value.Int(int64(10000 + i%90000))
					}
					blob = arr
				}
				in := value.ObjectOf("blob", blob)
				b.ReportAllocs()
				for b.Loop() {
					x := engine.Run(context.Background(), p, interp.Info{Name: "payload"}, in, engine.Config{})
					if x.Status() != interp.Succeeded {
						b.Fatal(x.Status(), x.Failure())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*states), "ns/state")
			})
		}
	}
}

// runLimit runs the chain on in and checks that it succeeds with an output
// of exactly 256 KiB (ok) or that its first state fails with
// States.DataLimitExceeded.
func runLimit(t *testing.T, chain *interp.Program, name string, in any, ok bool) {
	t.Helper()
	const limit = 256 * 1024
	x := engine.Run(context.Background(), chain, interp.Info{Name: "limit"}, in, engine.Config{})
	if ok {
		if x.Status() != interp.Succeeded || value.EncodedLen(x.Output(), -1) != limit || len(value.String(x.Output())) != limit {
			t.Errorf("%s: %s, output of %d bytes, want SUCCEEDED with %d", name, x.Status(), len(value.String(x.Output())), limit)
		}
		return
	}
	if f := x.Failure(); x.Status() != interp.Failed || f.Error != interp.ErrDataLimitExceeded || !strings.Contains(f.Cause, "'P0'") {
		t.Errorf("%s: %s %+v, want P0 to fail with %s", name, x.Status(), f, interp.ErrDataLimitExceeded)
	}
}
