package engine

import "time"

// Parking (Config.Park): a driver that only waits gives up its goroutine,
// and a timer or an input runs its loop again.

// nudge runs a parked driver again, after an input was queued for it. The
// input is queued first: a driver parks only while its queue is empty
// (checked under mu), so either it sees the input or this sees it parked.
// False: the driver fell asleep (checked the same way), and will not see
// the input.
func (d *Driver) nudge() bool {
	if !d.cfg.Park {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.asleep {
		return false
	}
	d.unpark()
	return true
}

// unpark runs a parked driver's loop on a new goroutine. d.mu is held.
func (d *Driver) unpark() {
	if !d.parked {
		return
	}
	d.parked = false
	if d.wake != nil {
		d.wake.Stop()
		d.wake = nil
	}
	go d.loop()
}

// park gives up the goroutine while the driver only waits: it returns
// false (and does not park) when an input is already queued or the
// context has ended. The driver runs again when its next timer is due or
// an input arrives (nudge), or ends when the context does.
func (d *Driver) park() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.events) > 0 || d.ctx.Err() != nil {
		return false
	}
	d.parked = true
	d.buf, d.inBuf = nil, nil // the next step makes its own
	d.dropCall()
	if _, at, ok := d.timers.Next(); ok {
		d.wake = time.AfterFunc(time.Until(at), func() {
			d.mu.Lock()
			d.unpark()
			d.mu.Unlock()
		})
	}
	return true
}

// parkAfter is how far away a driver's next timer must be for it to park:
// a shorter wait keeps its goroutine rather than paying for a new one.
const parkAfter = 100 * time.Millisecond

// idle reports whether the driver waits long enough to park: on the real
// clock, with no timer due within parkAfter.
func (d *Driver) idle() bool {
	if _, real := d.cfg.Clock.(RealClock); !real {
		return false
	}
	_, at, ok := d.timers.Next()
	return !ok || time.Until(at) > parkAfter
}

// abandonParked ends a parked driver whose context has ended.
func (d *Driver) abandonParked() {
	d.mu.Lock()
	if !d.parked {
		d.mu.Unlock()
		return // running: its loop sees the context end
	}
	d.parked = false
	if d.wake != nil {
		d.wake.Stop()
		d.wake = nil
	}
	d.mu.Unlock()
	d.end()
}
