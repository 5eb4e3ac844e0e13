package history

import (
	"math/rand/v2"
	"testing"

	"github.com/stepd/stepd/value"
)

// TestAppendSeconds checks appendSeconds against the float formatting it
// stands for, on edges and on random times.
func TestAppendSeconds(t *testing.T) {
	ms := []int64{0, 1, 9, 10, 100, 999, 1000, 1001, 1010, 1100, 1764158400000, 1764158400001, 1764158400010, 1764158400120,
		1764158400123, 1764158400999, 1e15 - 1, 1e15, 1<<53 - 1, -1, -1500, 253402300799999}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		ms = append(ms, r.Int64N(1e15))
		ms = append(ms, 1700000000000+r.Int64N(1e12))
	}
	for _, m := range ms {
		want := value.String(value.Float(float64(m) / 1000))
		if got := string(appendSeconds(nil, m)); got != want {
			t.Fatalf("appendSeconds(%d) = %s, want %s", m, got, want)
		}
	}
}
