// Package engine carries out the effects that the interpreter asks for:
// it invokes tasks, keeps timers on a clock and feeds results back, until the
// execution ends. The interpreter (package interp) decides; the engine acts.
//
// Time comes from a Clock. With a virtual clock (the default for `stepd run`
// and `stepd test`) the engine jumps straight to the next due timer whenever
// no task is in flight, so Waits, retry back-offs and simulated task delays
// cost nothing while their order and timeouts stay exact.
package engine

import (
	"context"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// After behaves like time.After.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// After waits for d.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configure a run.
type Options struct {
	Invoker task.Invoker
	// Clock is the time source. Nil means a virtual clock starting at the
	// execution's start time.
	Clock Clock
}

type done struct {
	id  int64
	res task.Result
}

// Run executes p to completion and returns the finished execution.
// Cancelling ctx stops the execution (status ABORTED).
func Run(ctx context.Context, p *interp.Program, info interp.Info, input any, opts Options) *interp.Execution {
	virtual := opts.Clock == nil
	now := info.StartTime
	if !virtual {
		now = opts.Clock.Now()
		info.StartTime = now
	} else if now.IsZero() {
		now = time.Now()
		info.StartTime = now
	}
	r := &runner{
		ctx:      ctx,
		opts:     opts,
		results:  make(chan done, 16),
		inflight: map[int64]context.CancelFunc{},
	}
	x, cmds := p.Start(info, input, now)
	r.apply(cmds)
	for x.Status() == interp.Running {
		if virtual {
			now = r.stepVirtual(x, now)
			continue
		}
		r.stepReal(x)
	}
	for _, cancel := range r.inflight {
		cancel()
	}
	return x
}

type runner struct {
	ctx      context.Context
	opts     Options
	results  chan done
	inflight map[int64]context.CancelFunc
	timers   Timers
}

func (r *runner) stepVirtual(x *interp.Execution, now time.Time) time.Time {
	if len(r.inflight) == 0 {
		if r.timers.Len() == 0 {
			// Nothing can happen any more: a defect, but never hang.
			r.apply(x.Step(now, interp.Input{Kind: interp.Stop, Error: "States.Runtime", Cause: "the execution is waiting for nothing"}))
			return now
		}
		id, at := r.timers.Pop()
		if at.After(now) {
			now = at
		}
		r.apply(x.Step(now, interp.Input{Kind: interp.TimerFired, ID: id}))
		return now
	}
	select {
	case d := <-r.results:
		r.finished(d.id)
		r.apply(x.Step(now, interp.Input{Kind: interp.TaskDone, ID: d.id, Result: d.res}))
	case <-r.ctx.Done():
		r.apply(x.Step(now, interp.Input{Kind: interp.Stop}))
	}
	return now
}

func (r *runner) stepReal(x *interp.Execution) {
	clock := r.opts.Clock
	var due <-chan time.Time
	_, at, pending := r.timers.Next()
	if pending {
		due = clock.After(at.Sub(clock.Now()))
	}
	if len(r.inflight) == 0 && !pending {
		r.apply(x.Step(clock.Now(), interp.Input{Kind: interp.Stop, Error: "States.Runtime", Cause: "the execution is waiting for nothing"}))
		return
	}
	select {
	case d := <-r.results:
		r.finished(d.id)
		r.apply(x.Step(clock.Now(), interp.Input{Kind: interp.TaskDone, ID: d.id, Result: d.res}))
	case <-due:
		id, _ := r.timers.Pop()
		r.apply(x.Step(clock.Now(), interp.Input{Kind: interp.TimerFired, ID: id}))
	case <-r.ctx.Done():
		r.apply(x.Step(clock.Now(), interp.Input{Kind: interp.Stop}))
	}
}

func (r *runner) finished(id int64) {
	if cancel, ok := r.inflight[id]; ok {
		cancel()
		delete(r.inflight, id)
	}
}

func (r *runner) apply(cmds []interp.Command) {
	for _, c := range cmds {
		switch c.Kind {
		case interp.Invoke:
			ctx, cancel := context.WithCancel(r.ctx)
			r.inflight[c.ID] = cancel
			go func(id int64, req *task.Request) {
				res := r.invoke(ctx, req)
				select {
				case r.results <- done{id: id, res: res}:
				case <-ctx.Done():
				}
			}(c.ID, c.Request)
		case interp.CancelTask:
			r.finished(c.ID)
		case interp.StartTimer:
			r.timers.Add(c.ID, c.At)
		case interp.CancelTimer:
			r.timers.Remove(c.ID)
		}
	}
}

func (r *runner) invoke(ctx context.Context, req *task.Request) (res task.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = task.Result{Error: "States.TaskFailed", Cause: "the task handler panicked"}
		}
	}()
	if r.opts.Invoker == nil {
		return task.Result{Error: "States.Runtime", Cause: "no task handler is configured for resource " + req.Resource}
	}
	return r.opts.Invoker.Invoke(ctx, req)
}
