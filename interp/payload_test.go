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
// counted before: an output of 262,144 bytes passes every state of a
// chain, one of 262,145 fails the first state with
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
		in := value.ObjectOf("blob", tt.blob)
		x := engine.Run(context.Background(), chain, interp.Info{Name: "limit"}, in, engine.Config{})
		if tt.ok {
			if x.Status() != interp.Succeeded || value.EncodedLen(x.Output(), -1) != limit {
				t.Errorf("%s: %s, output of %d bytes, want SUCCEEDED with %d", tt.name, x.Status(), value.EncodedLen(x.Output(), -1), limit)
			}
			continue
		}
		if f := x.Failure(); x.Status() != interp.Failed || f.Error != interp.ErrDataLimitExceeded || !strings.Contains(f.Cause, "'P0'") {
			t.Errorf("%s: %s %+v, want P0 to fail with %s", tt.name, x.Status(), f, interp.ErrDataLimitExceeded)
		}
	}

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
// and of 250 KiB on (the s-payload workloads) and reports the cost of one
// state: the size check at each state's exit no longer walks the blob, so
// the two cost about the same.
func BenchmarkPassChainPayload(b *testing.B) {
	const states = 100
	for _, size := range []int{16 << 10, 250 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			p := compile(b, passChain(states))
			in := value.ObjectOf("blob", strings.Repeat("x", size))
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
