package engine_test

import (
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
)

// TestScaledClock checks that waiting d on a scaled clock lets the clock
// reach d (never less, whatever the rounding).
func TestScaledClock(t *testing.T) {
	now := time.Now()
	c := &engine.ScaledClock{Scale: 0.0001, Real0: now, Virtual0: now.Add(-time.Hour)}
	for _, d := range []time.Duration{time.Nanosecond, 3 * time.Millisecond, 10 * time.Second, time.Hour} {
		before := c.Now()
		<-c.After(d)
		if got := c.Now().Sub(before); got < d {
			t.Errorf("After(%v): the clock moved %v", d, got)
		}
	}
	if got := c.At(now.Add(time.Second)); !got.Equal(now.Add(-time.Hour + 10000*time.Second)) {
		t.Errorf("At(real0+1s) = %v", got)
	}
}
