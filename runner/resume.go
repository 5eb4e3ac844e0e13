package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// Resume continues every execution the store has as RUNNING, rebuilding
// each one by replaying its committed inputs through the interpreter, then
// re-dispatching its outstanding tasks and timers.
//
// An execution whose last step says it waits only for timers
// (store.Step.Wake) stays dormant: it is registered but not rebuilt until
// its first timer is due or an input for it arrives (a stop, a callback, a
// caller waiting for it), so that a restart with many executions parked in
// Waits neither replays nor holds them. Describe and History answer from
// the store meanwhile.
//
// Every execution is registered before any resumes, so that a parent's
// re-dispatched .sync task finds its child's driver and waits for it,
// whichever of the two the store lists first.
func (r *Runner) Resume(ctx context.Context) (int, error) {
	type resumed struct {
		arn string
		d   *engine.Driver
	}
	type job struct {
		e     *store.Execution
		steps []*store.Step
	}
	// One scan of the store feeds a replayer per core.
	jobs := make(chan job, 256)
	var (
		mu      sync.Mutex
		all     []resumed
		wg      sync.WaitGroup
		dormant []string
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				var err error
				if j.steps == nil {
					// The scan gave only its last step (it waits for a
					// timer), but this clock cannot let it sleep.
					j.steps, err = r.cfg.Store.Steps(ctx, j.e.ARN)
				}
				var d *engine.Driver
				if err == nil {
					d, err = r.rebuild(ctx, j.e, j.steps)
				}
				if err != nil {
					r.log.Error("cannot resume execution", "execution", j.e.ARN, "err", err)
					continue
				}
				r.register(j.e.ARN, d)
				mu.Lock()
				all = append(all, resumed{j.e.ARN, d})
				mu.Unlock()
			}
		})
	}
	_, realClock := r.cfg.Clock.(engine.RealClock)
	defs := map[string]string{} // one copy of each definition's text
	err := r.cfg.Store.ScanRunning(ctx, func(e *store.Execution, steps []*store.Step) error {
		if r.cfg.Observer != nil {
			r.cfg.Observer.Resumed(e)
		}
		if d, ok := defs[e.Definition]; ok {
			e.Definition = d
		} else {
			defs[e.Definition] = e.Definition
		}
		if n := len(steps); n > 0 && !steps[n-1].Wake.IsZero() {
			if !realClock {
				steps = nil // read them all
			} else {
				r.mu.Lock()
				r.dormant[e.ARN] = newSleeper(e, steps[n-1].Wake)
				r.mu.Unlock()
				dormant = append(dormant, e.ARN)
				return nil
			}
		}
		select {
		case jobs <- job{e, steps}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	if err != nil {
		// Nothing runs: a later Resume starts afresh.
		for _, x := range all {
			r.unregister(x.arn)
		}
		r.mu.Lock()
		for _, arn := range dormant {
			delete(r.dormant, arn)
		}
		r.mu.Unlock()
		return 0, fmt.Errorf("reading the running executions: %w", err)
	}
	for _, x := range all {
		r.start(x.arn, x.d)
	}
	r.mu.Lock()
	for _, arn := range dormant {
		if z := r.dormant[arn]; z != nil {
			r.arm(arn, z, time.Until(z.wake))
		}
	}
	r.mu.Unlock()
	return len(all) + len(dormant), nil
}

// sleeper is a dormant execution (see Resume, and ended for a driver that
// fell asleep): its summary (nil: read when it wakes), when its first
// timer is due, and the timer that wakes it then. woke is closed once it
// has been woken (or forgotten), for those who wait for it (waitDone).
type sleeper struct {
	e     *store.Execution
	wake  time.Time
	timer *time.Timer
	once  sync.Once
	woke  chan struct{}
	// wokeOnce closes woke: apart from once, which a wakeUp holds while it
	// waits for the runner's lock (which forgetting holds).
	wokeOnce sync.Once
}

func newSleeper(e *store.Execution, wake time.Time) *sleeper {
	return &sleeper{e: e, wake: wake, woke: make(chan struct{})}
}

// awoken tells those waiting for z that it has been woken or forgotten.
func (z *sleeper) awoken() { z.wokeOnce.Do(func() { close(z.woke) }) }

// arm sets z's timer to wake it after d. r.mu is held.
func (r *Runner) arm(arn string, z *sleeper, d time.Duration) {
	z.timer = time.AfterFunc(d, func() { r.wakeUp(arn, z) })
}

// wakeUp rebuilds the dormant execution z by replaying its steps, and runs
// it; once only. A store that cannot be read is tried again a second later.
func (r *Runner) wakeUp(arn string, z *sleeper) {
	z.once.Do(func() {
		defer z.awoken()
		r.mu.Lock()
		if z.timer != nil {
			z.timer.Stop()
		}
		r.mu.Unlock()
		e := z.e
		steps, err := r.cfg.Store.Steps(r.ctx, arn)
		if err == nil && e == nil {
			e, err = r.cfg.Store.GetExecution(r.ctx, arn)
		}
		if err != nil {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.ctx.Err() != nil || r.dormant[arn] != z {
				return
			}
			r.log.Error("cannot read a dormant execution's steps; retrying", "execution", arn, "err", err)
			again := newSleeper(z.e, z.wake)
			r.dormant[arn] = again
			r.arm(arn, again, time.Second)
			return
		}
		d, err := r.rebuild(r.ctx, e, steps)
		r.mu.Lock()
		defer r.mu.Unlock()
		// A sleeper forgotten meanwhile (Close, Abandon) is not run.
		if r.dormant[arn] != z || r.ctx.Err() != nil {
			return
		}
		delete(r.dormant, arn)
		if err != nil {
			r.log.Error("cannot resume execution", "execution", arn, "err", err)
			return
		}
		r.running[arn] = d
		r.runLocked(d)
	})
}

// rebuild replays an execution's committed steps into a new driver, which
// re-dispatches the outstanding operations when it runs.
func (r *Runner) rebuild(ctx context.Context, e *store.Execution, steps []*store.Step) (*engine.Driver, error) {
	p, err := r.Program(e.Definition)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return nil, errors.New("no steps")
	}
	logs := r.logSetupOf(ctx, e.StateMachineARN)
	d, _, err := r.newDriver(e, p, r.cfg.Store, logs, false)
	if err != nil {
		return nil, err
	}
	input, err := value.ParseString(e.Input)
	if err != nil {
		return nil, err
	}
	key, err := r.TokenKey(ctx)
	if err != nil {
		return nil, err
	}
	info := r.info(e, steps[0].At, key)
	// An execution started before starts were deferred ran its first
	// states in step 0, which then holds more than ExecutionStarted.
	info.Defer = len(steps[0].Events) == 1
	if err := d.Replay(info, input, steps); err != nil {
		return nil, err
	}
	r.putMapRuns(ctx, r.cfg.Store, d.Execution()) // what a crash may have kept from being stored
	if n, at := d.Execution().RedriveCount(); n > 0 {
		r.putRedrive(ctx, e.ARN, n, at)
	}
	return d, nil
}

// Adopt rebuilds and runs running executions that this process did not
// start: those a shared store's Claim has just handed to this node (see
// store.Shared), whose owner died or left. Like Resume, it replays each
// one's committed steps and registers every one before any runs. It
// returns how many it runs; an execution that cannot be rebuilt is logged
// and left.
func (r *Runner) Adopt(ctx context.Context, execs []*store.Execution) int {
	type adopted struct {
		arn string
		d   *engine.Driver
	}
	var all []adopted
	for _, e := range execs {
		if r.driver(e.ARN) != nil {
			continue // running here already
		}
		steps, err := r.cfg.Store.Steps(ctx, e.ARN)
		var d *engine.Driver
		if err == nil {
			d, err = r.rebuild(ctx, e, steps)
		}
		if err != nil {
			r.log.Error("cannot adopt execution", "execution", e.ARN, "err", err)
			continue
		}
		r.register(e.ARN, d)
		all = append(all, adopted{e.ARN, d})
	}
	for _, x := range all {
		r.start(x.arn, x.d)
	}
	return len(all)
}

// Redrive rebuilds the ended execution e by replay, commits the redrive
// as its next step and runs it on. It returns the redrive's date;
// ErrNotRedrivable when the execution cannot be redriven (its history is
// full), and store.ErrConflict when another writer committed its next
// step first (it runs already).
func (r *Runner) Redrive(ctx context.Context, e *store.Execution) (time.Time, error) {
	if err := r.gone(ctx, e.ARN); err != nil {
		return time.Time{}, err
	}
	steps, err := r.cfg.Store.Steps(ctx, e.ARN)
	if err != nil {
		return time.Time{}, err
	}
	d, err := r.rebuild(ctx, e, steps)
	if err != nil {
		return time.Time{}, err
	}
	ok, err := d.Redrive(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, ErrNotRedrivable
	}
	r.putMapRuns(ctx, r.cfg.Store, d.Execution())
	n, at := d.Execution().RedriveCount()
	r.putRedrive(ctx, e.ARN, n, at)
	r.register(e.ARN, d)
	r.start(e.ARN, d)
	return at, nil
}

// ErrNotRedrivable is Redrive's answer for an execution whose history has
// no room for a redrive.
var ErrNotRedrivable = errors.New("the execution cannot be redriven")

// gone waits until the driver of an execution that has ended has left
// (its end is committed before its driver unregisters).
func (r *Runner) gone(ctx context.Context, executionARN string) error {
	for {
		d := r.driver(executionARN)
		if d == nil {
			return nil
		}
		select {
		case <-d.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
