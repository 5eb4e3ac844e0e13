package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
)

// Calling a handler on the driver's goroutine. A task whose invoker does
// not tell whether it waits (task.HowAnswers is Unknown: a plain function)
// is called where the driver runs, as an Immediate one is: no goroutine,
// no hand-over, one context reused from task to task, and the Context
// object built only if the handler asks for it. A watchdog (one timer per
// driver, running only while such calls are made) looks every callAfter:
// a call it finds running at two looks in a row has kept the driver
// waiting too long, and the watchdog's goroutine takes the driver on from
// where the call left it (the step's remaining commands, then the loop),
// while the call, once it returns, hands its result over as a task
// goroutine does. The resource's later tasks then run on goroutines of
// their own. So timeouts, stops, callbacks and other branches wait at most
// two looks for a handler that blocks, once per resource and driver.

// callAfter is the watchdog's period: a call found running at two looks
// has run for between callAfter and twice that.
const callAfter = time.Millisecond

// The states of Driver.calling.
const (
	callIdle    int32 = iota // no call on the driver's goroutine
	callRunning              // a call runs there and the driver waits for it
	callMoved                // the watchdog took the driver on without it
)

// call is what a call made on the driver's goroutine uses; the driver
// keeps one and reuses it until a call is moved from, which keeps it.
type call struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	// Of the call in progress (read by whoever takes the driver on):
	id       int64
	kind     interp.InputKind
	resource string
	rest     []interp.Command // the step's commands after the call's
	req      task.Request     // the handler's copy of the request
	gate     contextGate
}

// contextGate builds a request's Context object when the handler first
// asks for it. It reads the execution, which is safe while the driver
// waits for the call; the watchdog seals the gate (builds the object)
// before the driver steps the execution again.
type contextGate struct {
	mu   sync.Mutex
	from interface{ ContextObject() any }
	obj  any
}

// ContextObject returns the Context object, built on the first call.
func (g *contextGate) ContextObject() any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.obj == nil && g.from != nil {
		g.obj = g.from.ContextObject()
	}
	return g.obj
}

// answers is how the driver calls req: at once on its goroutine (task.AtOnce),
// on a goroutine of its own (task.Waits), or first on its goroutine and
// moved from if it waits (task.Unknown).
func (d *Driver) answers(req *task.Request) task.Answer {
	if d.cfg.Invoker == nil {
		return task.AtOnce
	}
	a := task.HowAnswers(d.cfg.Invoker, req)
	if a == task.Unknown && (req.Pattern.Job() || d.waits[req.Resource]) {
		return task.Waits
	}
	return a
}

// callHere calls the handler of task id on the driver's goroutine, and
// queues its result as an Immediate invoker's. It reports true when the
// watchdog took the driver on meanwhile: the result has then been sent as
// a task goroutine's, and the caller must return at once, touching
// nothing of the driver's.
func (d *Driver) callHere(ctx context.Context, id int64, kind interp.InputKind, req *task.Request, rest []interp.Command) (moved bool) {
	c := d.call
	if c == nil {
		c = &call{}
		c.ctx, c.cancel = context.WithCancelCause(ctx)
		d.call = c
	}
	c.id, c.kind, c.resource, c.rest = id, kind, req.Resource, rest
	c.req = *req
	if req.Context == nil {
		c.gate.from, c.gate.obj = req.ContextFrom, nil
		c.req.ContextFrom = &c.gate
	}
	d.callGen.Add(1)
	d.calling.Store(callRunning)
	d.arm()
	ev := event{id: id, kind: kind}
	invoke(c.ctx, d.cfg.Invoker, &c.req, &ev.res)
	if d.calling.CompareAndSwap(callRunning, callIdle) {
		if ev.res.Failed() {
			ev.kind = interp.TaskDone
		}
		ev.released = ev.kind == interp.TaskDone // the handler had a copy
		d.ready = append(d.ready, ev)
		c.rest = nil
		return false
	}
	d.sendResult(c.ctx, &ev)
	d.running.Done()
	return true
}

// arm starts the watchdog unless it runs.
func (d *Driver) arm() {
	if d.dogArmed.Load() || !d.dogArmed.CompareAndSwap(false, true) {
		return
	}
	t := d.dog.Load()
	if t == nil {
		// Made stopped and kept before it runs: a watch that ran before
		// the timer was kept would find none to reset.
		t = time.AfterFunc(time.Hour, d.watch)
		t.Stop()
		d.dog.Store(t)
	}
	t.Reset(callAfter)
}

// watch is the watchdog's look (see callAfter), on a goroutine of its own.
func (d *Driver) watch() {
	gen := d.callGen.Load()
	running := d.calling.Load() == callRunning
	if running && gen == d.dogSeen.Load() {
		// The call is counted before it is moved from: once moved, it may
		// return and be Done at once.
		d.running.Add(1)
		d.ranTasks.Store(true)
		if d.calling.CompareAndSwap(callRunning, callMoved) {
			d.dogArmed.Store(false)
			d.moves.Add(1)
			d.takeOn()
			return
		}
		d.running.Done() // it returned meanwhile
	}
	if prev := d.dogSeen.Swap(gen); running || gen != prev {
		d.dog.Load().Reset(callAfter)
		return
	}
	d.dogArmed.Store(false)
	if d.calling.Load() == callRunning { // started as the watchdog stopped
		d.arm()
	}
}

// takeOn carries on the driver whose call was moved from: the call keeps
// its context (now the task's, in flight) and its Context object, built
// now, while nothing steps the execution; then the step's remaining
// commands are applied and the loop goes on, on this goroutine.
func (d *Driver) takeOn() {
	c := d.call
	d.call = nil
	c.gate.mu.Lock()
	if c.gate.obj == nil && c.gate.from != nil {
		c.gate.obj = c.gate.from.ContextObject()
	}
	c.gate.mu.Unlock()
	d.inflight[c.id] = c.cancel
	if d.waits == nil {
		d.waits = map[string]bool{}
	}
	d.waits[c.resource] = true
	rest := c.rest
	c.rest = nil
	if d.apply(d.ctx, rest) {
		return
	}
	d.loop()
}

// dropCall ends the reused call context (it is a child of Run's) when the
// driver ends or parks.
func (d *Driver) dropCall() {
	if d.call != nil {
		d.call.cancel(nil)
		d.call = nil
	}
}

// stopDog stops the watchdog when the driver ends.
func (d *Driver) stopDog() {
	if t := d.dog.Load(); t != nil {
		t.Stop()
	}
}

// callState is what Driver holds for calls on its goroutine.
type callState struct {
	call     *call
	calling  atomic.Int32
	callGen  atomic.Uint64
	dog      atomic.Pointer[time.Timer]
	dogArmed atomic.Bool
	dogSeen  atomic.Uint64
	waits    map[string]bool // resources whose handler was moved from
	moves    atomic.Int64    // calls moved from, for tests
}
