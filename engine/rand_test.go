package engine

import (
	"reflect"
	"testing"
)

// counter is a deterministic source: 1, 2, 3, ...
type counter struct{ n uint64 }

func (c *counter) Uint64() uint64 { c.n++; return c.n }

func draw(r *recorder, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

// TestRecorder checks the random source the driver gives an execution:
// live it records what each step drew; replaying it hands those values
// back in order whatever its own source says, and draws afresh (counted)
// only when a step recorded too few.
func TestRecorder(t *testing.T) {
	live := newRecorder(&counter{}, true)
	step0 := append([]uint64(nil), draw(live, 2)...)
	if got := live.take(); !reflect.DeepEqual(got, step0) || !reflect.DeepEqual(step0, []uint64{1, 2}) {
		t.Fatalf("step 0 recorded %v, drew %v", got, step0)
	}
	if got := live.take(); len(got) != 0 {
		t.Fatalf("a step that drew nothing recorded %v", got)
	}
	step2 := append([]uint64(nil), draw(live, 3)...)
	if got := live.take(); !reflect.DeepEqual(got, []uint64{3, 4, 5}) {
		t.Fatalf("step 2 recorded %v", got)
	}

	// Replay with a source that would give other values.
	re := newRecorder(&counter{n: 1000}, true)
	re.replay(step0)
	if got := draw(re, 2); !reflect.DeepEqual(got, step0) {
		t.Errorf("replayed step 0 drew %v, want %v", got, step0)
	}
	re.replay([]uint64{})
	re.replay(step2)
	if got := draw(re, 3); !reflect.DeepEqual(got, step2) {
		t.Errorf("replayed step 2 drew %v, want %v", got, step2)
	}
	if re.short != 0 || re.extra != 0 {
		t.Errorf("short %d, extra %d after a faithful replay", re.short, re.extra)
	}
	if got := re.take(); len(got) != 0 {
		t.Errorf("replayed values were recorded again: %v", got)
	}
	// A legacy step (nil: nothing recorded) draws afresh; so does a step
	// whose record ran out.
	re.replay(nil)
	if got := draw(re, 2); !reflect.DeepEqual(got, []uint64{1001, 1002}) || re.short != 2 {
		t.Errorf("legacy step drew %v (short %d)", got, re.short)
	}
	re.replay([]uint64{7, 8})
	draw(re, 1)
	re.live()
	if re.extra != 1 {
		t.Errorf("unused recorded values %d, want 1", re.extra)
	}
	// Live again: fresh values, recorded.
	if got := draw(re, 1); got[0] != 1003 || !reflect.DeepEqual(re.take(), []uint64{1003}) {
		t.Errorf("live after replay drew %v", got)
	}
}

// TestRecorderDefaultSource checks that without a source the recorder
// draws from a seeded ChaCha8: two executions draw different values.
func TestRecorderDefaultSource(t *testing.T) {
	a, b := newRecorder(nil, false), newRecorder(nil, false)
	if reflect.DeepEqual(draw(a, 4), draw(b, 4)) {
		t.Fatal("two executions drew the same values")
	}
	if len(a.take()) != 0 {
		t.Fatal("a recorder that does not record kept values")
	}
}
