package server

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
)

// TestServeClock checks the time scale's check and the clock's anchor:
// kept across restarts at one scale, re-anchored without going back on a
// change, dropped once back at real time.
func TestServeClock(t *testing.T) {
	t.Parallel()
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := serveClock(bad, "", time.Now()); err == nil || !strings.Contains(err.Error(), "--time-scale") {
			t.Errorf("scale %v: %v", bad, err)
		}
	}
	if c, err := serveClock(1, t.TempDir(), time.Now()); err != nil || c != nil {
		t.Errorf("scale 1: %v, %v; want the wall clock", c, err)
	}

	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c1, err := serveClock(0.01, dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	// A restart a minute later at the same scale: the same time function.
	c2, err := serveClock(0.01, dir, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Minute)
	if a, b := c1.(*engine.ScaledClock).At(at), c2.(*engine.ScaledClock).At(at); !a.Equal(b) || !a.Equal(t0.Add(200*time.Minute)) {
		t.Errorf("after a restart: %v, before it %v; want %v", b, a, t0.Add(200*time.Minute))
	}
	// At real time again, 2 minutes in: the clock is 198 minutes ahead and
	// stays so (it never goes back).
	c3, err := serveClock(1, dir, at)
	if err != nil || c3 == nil {
		t.Fatalf("back at scale 1: %v, %v", c3, err)
	}
	if got := c3.(*engine.ScaledClock).At(at.Add(time.Hour)); !got.Equal(t0.Add(200*time.Minute + time.Hour)) {
		t.Errorf("back at scale 1, an hour later: %v", got)
	}
	// Faster than real time from a past anchor: the wall clock is ahead,
	// so scale 1 is the wall clock and the anchor goes.
	slow, err := serveClock(2, dir, at)
	if err != nil {
		t.Fatal(err)
	}
	later := at.Add(48 * time.Hour)
	if wall := slow.(*engine.ScaledClock).At(later); !wall.Before(later) {
		t.Fatalf("at scale 2: %v, want behind the wall clock %v", wall, later)
	}
	if c, err := serveClock(1, dir, later); err != nil || c != nil {
		t.Errorf("scale 1 with the wall clock ahead: %v, %v; want the wall clock", c, err)
	}
	if _, err := os.Stat(filepath.Join(dir, clockFile)); !os.IsNotExist(err) {
		t.Errorf("the anchor stayed: %v", err)
	}
}
