package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/stepd/stepd/engine"
)

// clockFile keeps a scaled clock's anchor in the data directory, so that
// the time of its executions stays consistent across restarts.
const clockFile = "clock.json"

// clockAnchor is what clockFile holds.
type clockAnchor struct {
	Scale    float64   `json:"scale"`
	Real0    time.Time `json:"real0"`
	Virtual0 time.Time `json:"virtual0"`
}

// serveClock returns the server's clock for the time scale: nil (the wall
// clock) at scale 1, else an engine.ScaledClock. With a data directory its
// anchor is kept there: a restart at the same scale goes on with the same
// time function (timers due while the server was down fire at once), and
// a change of scale re-anchors at the time reached, so the histories'
// times never go back. Back at scale 1, the clock returns to the wall
// clock once the wall clock has caught up with it.
func serveClock(scale float64, dir string, now time.Time) (engine.Clock, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return nil, fmt.Errorf("--time-scale (or STEPD_TIME_SCALE, WAIT_TIME_SCALE): want a number above 0, such as 0.01")
	}
	path := ""
	var old *clockAnchor
	if dir != "" {
		path = filepath.Join(dir, clockFile)
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			old = &clockAnchor{}
			if err := json.Unmarshal(b, old); err != nil || old.Scale <= 0 {
				return nil, fmt.Errorf("%s: not a clock anchor (%v); delete it to restart the clock at the wall clock's time", path, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	a := clockAnchor{Scale: scale, Real0: now, Virtual0: now}
	if old != nil {
		if old.Scale == scale {
			a = *old
		} else {
			reached := (&engine.ScaledClock{Scale: old.Scale, Real0: old.Real0, Virtual0: old.Virtual0}).At(now)
			if reached.After(now) {
				a.Virtual0 = reached
			}
		}
	}
	if scale == 1 && !a.Virtual0.After(a.Real0) {
		if old != nil {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	if path != "" && (old == nil || *old != a) {
		b, _ := json.Marshal(a)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
	}
	return &engine.ScaledClock{Scale: a.Scale, Real0: a.Real0, Virtual0: a.Virtual0}, nil
}
