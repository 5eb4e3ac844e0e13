package uuid

import (
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := New()
		if !form.MatchString(u) {
			t.Fatalf("%q is not a version 4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("%q repeated", u)
		}
		seen[u] = true
	}
}

type counter uint64

func (c *counter) Uint64() uint64 { *c++; return uint64(*c) * 0x9e3779b97f4a7c15 }

func TestFromSource(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	var a, b counter
	u1, u2 := FromSource(&a), FromSource(&b)
	if !form.MatchString(u1) || u1 != u2 {
		t.Fatalf("%q and %q: want the same version 4 UUID from the same draws", u1, u2)
	}
	if u3 := FromSource(&a); u3 == u1 {
		t.Fatalf("the next draws gave the same UUID %q", u3)
	}
	if got, want := FromSource(fixed{0x0123456789abcdef, 0xfedcba9876543210}), "01234567-89ab-4def-bedc-ba9876543210"; got != want {
		t.Fatalf("FromSource = %q, want %q", got, want)
	}
}

// fixed returns its values in turn.
type fixed []uint64

func (f fixed) Uint64() uint64 { v := f[0]; copy(f, f[1:]); return v }
