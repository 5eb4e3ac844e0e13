package engine

import (
	"errors"
	"time"
)

// Sleeping (Config.Sleep): a parked driver still holds its execution's
// state (the interpreter's, its buffers, its maps); a driver that sleeps
// gives that up too. It ends as if abandoned, and Slept tells its owner
// when the execution's next timer is due, for the owner to rebuild it from
// its committed steps then (or sooner, for an input), as after a restart.

// sleepAfter is how far away a driver's next timer must be for it to
// sleep rather than park: a short wait is cheaper kept than replayed.
const sleepAfter = time.Second

// replayPerStep bounds what waking costs: a driver sleeps only through a
// wait of at least replayPerStep for each step it has committed (its
// replay reads and steps them all again), so that a long history waking
// from short waits does not spend its time replaying.
const replayPerStep = time.Millisecond

// ErrSlept is Deliver's answer when the driver fell asleep before it took
// the input: the caller delivers it to the execution's next driver.
var ErrSlept = errors.New("the execution's driver is asleep; it is rebuilt when its timer is due or an input comes")

// sleep makes the driver sleep when it may: it only waits for a timer far
// enough away, with no task in flight, no task token open and no input
// queued (checked under mu, as park does, so that an input queued
// meanwhile is either seen here or refused by nudge). A driver that has
// not stepped since Run does not sleep: one rebuilt for an input takes it
// first.
func (d *Driver) sleep() bool {
	if !d.cfg.Sleep || !d.stepped || d.cfg.Journal == nil || len(d.inflight) > 0 || len(d.tokens) > 0 || d.readyHead < len(d.ready) {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.events) > 0 || d.ctx.Err() != nil {
		return false
	}
	_, at, ok := d.timers.Next()
	if !ok {
		return false
	}
	if wait := time.Until(at); wait < sleepAfter || wait < time.Duration(d.seq)*replayPerStep {
		return false
	}
	d.asleep, d.sleepsUntil = true, at
	return true
}

// Slept reports whether the driver ended by falling asleep (Config.Sleep),
// and when its execution's next timer is due: the execution is still
// running, committed up to its last step, and its owner must rebuild it
// by then.
func (d *Driver) Slept() (until time.Time, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sleepsUntil, d.asleep
}

// ended is Deliver's answer once the driver is done: ErrSlept when it fell
// asleep, ErrEnded otherwise.
func (d *Driver) ended() error {
	if _, asleep := d.Slept(); asleep {
		return ErrSlept
	}
	return ErrEnded
}
