package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// Start creates execution e (its ARN, names, definition, type, role, test
// case and input set; Started is set here) and runs it: a Standard one is
// committed to the store before Start returns. The program is e's
// definition's; input is e.Input's value. logging is its state machine's
// logging configuration as the store keeps it. It returns
// store.ErrExists, wrapped, when an execution of that ARN exists.
func (r *Runner) Start(ctx context.Context, e *store.Execution, input any, logging string) error {
	p, err := r.Program(e.Definition)
	if err != nil {
		return err
	}
	express := e.Type == "EXPRESS"
	st := r.storeFor(e.ARN)
	logs := r.logSetup(logging)
	eagerly := !express && st.Eager()
	d, ej, err := r.newDriver(e, p, st, logs, eagerly)
	if err != nil {
		return err
	}
	key, err := r.TokenKey(ctx)
	if err != nil {
		return err
	}
	now := r.cfg.Clock.Now()
	e.Started = now
	info := r.info(e, now, key)
	// Step 0 holds ExecutionStarted alone: the start is committed and
	// answered before the first state is evaluated.
	info.Defer = true
	first := d.Start(info, input, now)
	if !express {
		if err := r.queueStatus(ctx, e.ARN, e.Status); err != nil {
			return err
		}
	}
	if ej != nil {
		// The first state is evaluated while the creation waits for the
		// writer (eager). Step 0's bytes are the driver's, which it reuses
		// for its next step: the creation gets a copy.
		first = first.Clone()
		r.start(e.ARN, d)
		err = st.CreateExecutionWith(ctx, e, first, ej.next)
	} else {
		err = st.CreateExecution(ctx, e, first)
	}
	if err != nil {
		if ej != nil {
			ej.created <- err
		}
		return err
	}
	if r.cfg.Observer != nil {
		r.cfg.Observer.Started(e, first)
	}
	if logs != nil {
		r.writeLog(nil, e.ARN, logs, first)
	}
	if !express && r.cfg.StatusEvents != nil {
		r.cfg.StatusEvents()
	}
	r.register(e.ARN, d)
	if ej != nil {
		ej.created <- nil
	} else {
		r.start(e.ARN, d)
	}
	return nil
}

// newDriver returns the driver of execution e, committing to st: its
// tasks go to the invoker Config.Invoker gives for e, activities to their
// workers. With eagerly, its first step is offered to the creation of its
// execution (see eager), and the eager journal that does it is returned.
func (r *Runner) newDriver(e *store.Execution, p *interp.Program, st store.Store, logs *logSetup, eagerly bool) (*engine.Driver, *eager, error) {
	inv, submit, err := r.cfg.Invoker(e)
	if err != nil {
		return nil, nil, err
	}
	arn := e.ARN
	var journal engine.Journal = st
	var ej *eager
	if eagerly {
		ej = &eager{Journal: st, next: &store.NextStep{}, created: make(chan error, 1)}
		journal = ej
	}
	var d *engine.Driver
	committing, committed := r.hooks(arn, st, logs)
	d = engine.New(p, engine.Config{Invoker: inv, Clock: r.cfg.Clock, Journal: journal, Log: r.log, Budget: r.cfg.Budget, Timers: &r.timers,
		// An idle execution gives up its goroutine: thousands waiting in a
		// Wait or for a callback cost no stacks.
		// A Standard one waiting for a timer a while away keeps nothing
		// at all: it sleeps, dormant here until its timer is due (ended).
		Park: true, Sleep: e.Type != "EXPRESS", OnEnd: func() { r.logEnd(e, d); r.ended(arn, d) },
		Submit:   submit,
		Activity: r.enqueueActivity, ActivityExists: activityExists(r.cfg.Store), Committing: committing, Committed: committed})
	return d, ej, nil
}

// eager is the journal of an execution whose store creates it eagerly
// (store.EagerCreator's Eager): Start runs the driver while the
// creation waits to be written, and the driver's first step (the first
// state, deferred so that Start need not wait for it) is offered to that
// creation, which commits it in its own transaction if it is ready in
// time. Either way the step is durable, and no command of it carried out,
// before the creation has succeeded and Start has registered the driver
// (created); when the creation fails, the driver abandons the execution it
// never had.
type eager struct {
	engine.Journal
	next    *store.NextStep // the creation's (Start reads it)
	created chan error      // Start's outcome
	past    bool            // the first step has gone (the driver's)
	// failed is the creation's failure, for good: the driver must never
	// append to an execution of the same name that exists.
	failed error
}

func (j *eager) AppendStep(ctx context.Context, st *store.Step) error {
	if j.failed != nil {
		return j.failed
	}
	if j.past {
		return j.Journal.AppendStep(ctx, st)
	}
	j.past = true
	offered := j.next.Offer(st)
	select {
	case err := <-j.created:
		if err != nil {
			// The driver ends quietly rather than retry.
			j.failed = fmt.Errorf("%w: %v", engine.ErrNotCreated, err)
			return j.failed
		}
	case <-ctx.Done():
		j.failed = ctx.Err()
		return j.failed
	}
	if offered {
		return nil // committed with the creation
	}
	return j.Journal.AppendStep(ctx, st)
}

// logEnd logs the end of an execution at info level (one line each); an
// execution abandoned while it runs (the server stops) is not logged.
func (r *Runner) logEnd(e *store.Execution, d *engine.Driver) {
	x := d.Execution()
	if x == nil || x.Status() == interp.Running || !r.log.Enabled(r.ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("execution", e.ARN), slog.String("stateMachine", e.StateMachineARN), slog.String("type", e.Type),
		slog.String("status", string(x.Status()))}
	if h := x.History(); len(h) > 0 && !e.Started.IsZero() {
		attrs = append(attrs, slog.Duration("duration", h[len(h)-1].Timestamp.Sub(e.Started)))
	}
	if f := x.Failure(); f != nil {
		attrs = append(attrs, slog.String("error", f.Error), slog.String("cause", f.Cause))
	}
	r.log.LogAttrs(r.ctx, slog.LevelInfo, "execution ended", attrs...)
}

func (r *Runner) info(e *store.Execution, now time.Time, tokenKey []byte) interp.Info {
	started := e.Started
	if started.IsZero() {
		started = now
	}
	return interp.Info{ExecutionARN: e.ARN, Name: e.Name, StateMachineARN: e.StateMachineARN,
		StateMachineName: e.StateMachineName, RoleARN: e.RoleARN, StartTime: started, TestCase: e.TestCase,
		Region: r.cfg.Region, Account: r.cfg.Account, MaxEvents: maxEvents(e.Type), TokenKey: tokenKey, MapRuns: true, Sync: e.Sync}
}

func maxEvents(typ string) int {
	if typ == "EXPRESS" {
		return 0
	}
	return interp.MaxStandardEvents
}

// register makes d the execution's driver in this process: callbacks,
// stops and waits on the execution find it from now on.
func (r *Runner) register(arn string, d *engine.Driver) {
	r.mu.Lock()
	r.running[arn] = d
	r.mu.Unlock()
}

// unregister forgets a registered driver that never ran.
func (r *Runner) unregister(arn string) {
	r.mu.Lock()
	delete(r.running, arn)
	r.mu.Unlock()
}

// start runs a registered driver.
func (r *Runner) start(arn string, d *engine.Driver) {
	r.mu.Lock()
	r.runLocked(d)
	r.mu.Unlock()
}

// ended forgets the driver of an execution that ended (or was abandoned):
// the driver's Config.OnEnd. A driver that was never registered (its
// execution's creation failed, as one of the same name exists) leaves the
// registered one alone. A driver that fell asleep (engine.Config.Sleep)
// leaves its execution dormant, to be rebuilt when its timer is due or an
// input comes (driver), unless its epoch is over.
func (r *Runner) ended(arn string, d *engine.Driver) {
	until, asleep := d.Slept()
	r.mu.Lock()
	ep := r.epochOf[d]
	if r.running[arn] == d {
		delete(r.running, arn)
		if asleep && ep == r.ep && r.ctx.Err() == nil {
			z := newSleeper(nil, until)
			r.dormant[arn] = z
			r.arm(arn, z, time.Until(until))
		}
	}
	delete(r.epochOf, d)
	r.mu.Unlock()
	if r.onEnded != nil && !asleep {
		r.onEnded(arn)
	}
	if ep != nil {
		ep.wg.Done()
	}
}

// driver returns the execution's driver in this process, or nil; a
// dormant execution is woken (rebuilt and run) first.
func (r *Runner) driver(arn string) *engine.Driver {
	r.mu.Lock()
	d, z := r.running[arn], r.dormant[arn]
	r.mu.Unlock()
	if d != nil || z == nil {
		return d
	}
	r.wakeUp(arn, z)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[arn]
}

// storeFor returns the store that keeps the execution of ARN execution.
func (r *Runner) storeFor(execution string) store.Store {
	if arn.TypeOf(execution) == arn.Express {
		return r.cfg.Express
	}
	return r.cfg.Store
}

// WaitExpress waits for the Express execution e that this process runs to
// end, and returns it: as the Express store keeps it, or as its driver
// ended it when that store has forgotten it already (it keeps a bounded
// number of finished executions).
func (r *Runner) WaitExpress(ctx context.Context, e *store.Execution) (*store.Execution, error) {
	d := r.driver(e.ARN)
	if err := r.waitDone(ctx, e.ARN); err != nil {
		return nil, err
	}
	done, err := r.cfg.Express.GetExecution(ctx, e.ARN)
	if errors.Is(err, store.ErrNotFound) && d != nil {
		return summary(e, d.Execution()), nil
	}
	return done, err
}

// summary is the execution e as the interpreter's x ended it.
func summary(e *store.Execution, x *interp.Execution) *store.Execution {
	out := *e
	out.Status = string(x.Status())
	if x.Status() == interp.Succeeded {
		out.Output = value.String(x.Output())
	}
	if f := x.Failure(); f != nil {
		out.Error, out.Cause = f.Error, f.Cause
	}
	if h := x.History(); len(h) > 0 {
		out.Stopped = h[len(h)-1].Timestamp
	}
	return &out
}

// Wait blocks until the execution is no longer running (or ctx ends) and
// returns it as stored: in this process, until its driver has ended; on a
// shared store, while another node runs it, reading it every
// elsewherePoll.
func (r *Runner) Wait(ctx context.Context, arn string) (*store.Execution, error) {
	if err := r.waitDone(ctx, arn); err != nil {
		return nil, err
	}
	return r.waitElsewhere(ctx, arn)
}

// waitDone blocks until the execution of arn is not running in this
// process, or ctx ends; a dormant execution is waited for without waking
// it.
func (r *Runner) waitDone(ctx context.Context, arn string) error {
	for {
		r.mu.Lock()
		d, z := r.running[arn], r.dormant[arn]
		r.mu.Unlock()
		var next <-chan struct{}
		switch {
		case d != nil:
			next = d.Done()
		case z != nil:
			next = z.woke
		default:
			return nil
		}
		select {
		case <-next:
			if d != nil {
				if _, asleep := d.Slept(); !asleep {
					return nil
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// withDriver calls f with the execution's driver in this process (see
// driver), and again with the next one while f says that the one it had
// fell asleep before it took the input; it returns the driver that took
// it, or nil when the execution has no driver here.
func (r *Runner) withDriver(arn string, f func(d *engine.Driver) bool) *engine.Driver {
	for {
		d := r.driver(arn)
		if d == nil || f(d) {
			return d
		}
		<-d.Done() // its execution is dormant once it is done
	}
}

// Stop stops a running execution (status ABORTED) and returns once it has
// ended, or, when another node runs it, once that node has ended it (up to
// 10 s). It returns ErrNotRunningHere when no node runs it.
func (r *Runner) Stop(ctx context.Context, arn, errName, cause string) error {
	// The stop interrupts an evaluation running meanwhile; the answer
	// waits until the execution has ended (its end committed), so that
	// it carries the stop date.
	d := r.withDriver(arn, func(d *engine.Driver) bool { return d.Stop(errName, cause) })
	if d == nil {
		if sh := r.shared(arn); sh != nil {
			return r.stopElsewhere(ctx, sh, arn, errName, cause)
		}
		return ErrNotRunningHere
	}
	select {
	case <-d.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrNotRunningHere is Stop's answer for an execution that no node runs.
var ErrNotRunningHere = errors.New("the execution is not running on this node")
