package engine

import (
	"math"
	"time"
)

// ScaledClock is a clock that runs 1/Scale times as fast as the wall
// clock: with Scale 0.01, a Wait of 60 seconds, a task timeout or a retry
// interval passes in 0.6 s of real time, and the execution's history shows
// 60 seconds. Its time is a pure function of the wall clock, anchored at
// (Real0, Virtual0): Virtual0 + (now - Real0) / Scale, so a server that
// keeps its anchor across restarts keeps one consistent, monotonic time.
type ScaledClock struct {
	Scale    float64 // real seconds per clock second; > 0
	Real0    time.Time
	Virtual0 time.Time
}

// Now returns the clock's time.
func (c *ScaledClock) Now() time.Time { return c.At(time.Now()) }

// At returns the clock's time at the wall clock's real.
func (c *ScaledClock) At(real time.Time) time.Time {
	return c.Virtual0.Add(time.Duration(float64(real.Sub(c.Real0)) / c.Scale))
}

// After waits for d of the clock's time.
func (c *ScaledClock) After(d time.Duration) <-chan time.Time { return time.After(c.scale(d)) }

// scale is the real time that d of the clock's time takes, rounded up so
// that the clock has reached d when it has passed.
func (c *ScaledClock) scale(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(d)*c.Scale)) + time.Microsecond
}
