package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// Journal is where a driver commits the steps of its execution: a
// store.Store (durable or in memory) meets it.
type Journal interface {
	// AppendStep commits the next step; it returns once the step is kept.
	AppendStep(ctx context.Context, s *store.Step) error
}

// ErrNotCreated is what a Journal answers when the execution it journals
// was never created (a driver run while its execution's creation was being
// written, which failed): the driver ends, quietly, without retrying.
var ErrNotCreated = errors.New("the execution was not created")

// Config configures a Driver, and Run (which uses only Invoker, Clock,
// Budget and Log).
type Config struct {
	Invoker task.Invoker
	// Clock is the time source. Nil means a virtual clock starting at the
	// execution's start time, which jumps to the next due timer whenever
	// no task is in flight.
	Clock Clock
	// Journal, when set, receives every step (its input, random values
	// drawn, events and the execution's summary) before any of the step's
	// commands is carried out: a transactional outbox. The first step is
	// returned by Start for the caller to create the execution with. With a
	// journal, cancelling Run's context abandons the execution as
	// committed (it resumes by replay); without one, it stops the
	// execution (ABORTED).
	Journal Journal
	// Submit makes the response of a task that has a task token (a
	// .waitForTaskToken integration, or an activity when Activity is nil)
	// only submit it: its token completes it, through Deliver. When false,
	// the response completes the task (a mock answers for the whole task,
	// as in Step Functions Local).
	Submit bool
	// Activity, when set, offers an activity's task (its request's
	// Pattern is task.Activity) to its workers instead of invoking it;
	// workers answer through Deliver (TaskStarted, then the result), or
	// the offer fails through Post.
	Activity func(d *Driver, id int64, req *task.Request)
	// ActivityExists, when set, tells whether an activity exists, asked
	// when a Task is about to schedule one (interp.Info.Activities): one
	// that does not fails the state at once. Its answers "no" are
	// recorded with the step and handed back on replay. It runs on the
	// driver's goroutine, during the step; an error counts as "it exists".
	ActivityExists func(ctx context.Context, activityARN string) (bool, error)
	// Log receives warnings (nil: slog.Default()).
	Log *slog.Logger
	// Park lets a driver on the real clock give up its goroutine while it
	// only waits (for timers, callbacks, activity workers, a stop): Run
	// then returns before the execution ends, and the driver runs again on
	// a goroutine of its own when a timer is due or an input arrives. A
	// server parks its idle executions so that thousands waiting cost no
	// goroutine stacks. Done, and OnEnd, tell when the driver has ended.
	Park bool
	// Sleep, with Park and a journal, lets a driver whose execution only
	// waits for a timer a while away end instead of parking, keeping
	// nothing: see Slept (sleep.go).
	Sleep bool
	// OnEnd, when set, is called once the driver has ended: the execution
	// ended, or it was abandoned (Run's context ended, a commit failed for
	// good).
	OnEnd func()
	// Budget bounds each evaluation (zero fields: the defaults).
	Budget Budget
	// Timers, when set, counts the timers the driver holds queued (shared
	// by the drivers of a service, for its metrics).
	Timers *atomic.Int64
	// Committing, when set, is called before each attempt to append a
	// step to the journal; an error refuses the attempt as the journal's
	// would (the notice of a status change is queued there, before the
	// change is committed).
	Committing func(ctx context.Context, st *store.Step) error
	// Committed, when set, is called after each attempt to append a step
	// to the journal, with how long it took and its outcome (err nil: the
	// step is kept). It runs on the driver's goroutine, between steps, so
	// it may read x; it must not keep st's buffers, which the driver
	// reuses. This is where metrics, execution logs and the Map Run
	// journal hear of each step.
	Committed func(ctx context.Context, st *store.Step, x *interp.Execution, took time.Duration, err error)
}

// Driver carries out the commands of one execution: it invokes tasks
// (in goroutines, or at once on its own for a task.Immediate invoker), keeps timers on its clock, takes external inputs (stop
// requests, callbacks and heartbeats by task token, activity workers) and
// feeds each to the interpreter, committing every step to its journal
// before acting on it. `stepd run`, TestState and the service's Standard
// and Express executions all run through it.
type Driver struct {
	p   *interp.Program
	cfg Config
	x   *interp.Execution
	arn string
	now time.Time // the virtual clock's time

	rand     *recorder
	meter    *meter
	lookups  lookups
	seq      int64
	lastSeen int    // events already committed
	buf      []byte // the events' JSON of the step being committed (the journal keeps none of it)
	inBuf    []byte // the step's encoded input
	pending  []interp.Command

	// events carries everything the driver waits for but timers: one
	// channel, so that waiting costs one channel operation.
	events   chan event
	done     chan struct{}
	inflight map[int64]context.CancelCauseFunc
	running  sync.WaitGroup // the task goroutines (waitTasks)
	ranTasks atomic.Bool    // running was ever added to
	// ready holds the results of tasks whose invoker answered at once
	// (task.Immediate), called on the driver's goroutine, in order.
	ready     []event
	readyHead int // the next of ready to take
	timers    timerQueue
	tokens    map[string]int64 // task token -> operation, for tasks that wait for one

	// Parking (Config.Park): ctx is Run's; mu guards parked and wake.
	ctx    context.Context
	mu     sync.Mutex
	parked bool
	wake   *time.Timer
	// asleep: the driver ended by sleeping, until sleepsUntil (sleep.go).
	asleep      bool
	sleepsUntil time.Time
	stepped     bool        // a step was taken since Run (sleep.go)
	stopWatch   func() bool // stops the watch on ctx

	callState // calls on the driver's goroutine (call.go)
}

// event is a task's result, or an input from outside. It is kept small:
// task goroutines build one on their (small) stacks.
type event struct {
	id   int64
	res  task.Result
	kind interp.InputKind // TaskDone, or TaskSubmitted for a callback integration
	more bool             // a .sync task's TaskSubmitted: the task goes on
	out  *outside
	// released: answered at once (task.Immediate), so nothing refers to
	// the request any more (interp.Input.Released).
	released bool
}

// outside is an input from outside: a stop request, or a callback for the
// task of a token.
type outside struct {
	token string       // a callback's; empty for a stop
	in    interp.Input // the input (its ID is the token's task)
	reply chan error   // a callback's verdict
}

// Errors of Deliver.
var (
	// ErrEnded: the driver ended before it took the input.
	ErrEnded = errors.New("the execution's driver has ended")
	// ErrTaskClosed: the token's task completed, timed out or was cancelled.
	ErrTaskClosed = errors.New("the task of this token has closed")
	// ErrNoTask: the execution issued no such token.
	ErrNoTask = errors.New("no task is waiting for this token")
)

// New returns a driver for one execution of p; Start or Replay it, then
// Run it.
func New(p *interp.Program, cfg Config) *Driver {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	queue := 16 // task results hand over without waiting for the loop
	if cfg.Park {
		queue = 2 // a server's executions mostly wait: keep them small
	}
	return &Driver{p: p, cfg: cfg, events: make(chan event, queue), done: make(chan struct{}), inflight: map[int64]context.CancelCauseFunc{},
		meter: newMeter(cfg.Budget, cfg.Clock, cfg.Journal != nil), timers: timerQueue{Count: cfg.Timers},
		lookups: lookups{ask: cfg.ActivityExists, log: cfg.Log}}
}

// Start starts the execution at now. With a journal it returns the first
// step (Seq 0), for the caller to create the execution with; the
// execution's random source is the driver's (info.Rand, when set, is
// what it draws from).
func (d *Driver) Start(info interp.Info, input any, now time.Time) *store.Step {
	d.rand = newRecorder(info.Rand, d.cfg.Journal != nil)
	info.Rand = d.rand
	d.meterInfo(&info)
	d.arn, d.now = info.ExecutionARN, now
	d.meter.step(now)
	x, cmds := d.p.Start(info, input, now)
	d.x, d.pending = x, cmds
	if d.cfg.Journal == nil {
		return nil
	}
	st := d.step(0, now, nil)
	st.Wake = d.wakeAt(cmds)
	d.seq = 1
	return st
}

// Replay rebuilds the execution from its committed steps: the first
// step's time, then each step's input and random values, through the
// interpreter. Run then re-dispatches the operations still outstanding:
// timers keep their due time and tasks without a result run again.
func (d *Driver) Replay(info interp.Info, input any, steps []*store.Step) error {
	if len(steps) == 0 {
		return errors.New("replay: no steps")
	}
	d.rand = newRecorder(info.Rand, d.cfg.Journal != nil)
	info.Rand = d.rand
	d.meterInfo(&info)
	d.arn = info.ExecutionARN
	first, err := decodeInput(steps[0].Input)
	if err != nil {
		return fmt.Errorf("step 0: %w", err)
	}
	if !first.Start {
		return errors.New("step 0: not a start record")
	}
	d.rand.replay(first.Rand)
	d.meter.replay(steps[0].At, first.Clock, first.Interrupts)
	d.lookups.replay(first.NoActivity)
	x, _ := d.p.Start(info, input, steps[0].At)
	for _, st := range steps[1:] {
		rec, err := decodeInput(st.Input)
		if err != nil {
			return fmt.Errorf("step %d: %w", st.Seq, err)
		}
		if rec.Start {
			return fmt.Errorf("step %d: a start record after the start", st.Seq)
		}
		d.rand.replay(rec.Rand)
		d.meter.replay(st.At, rec.Clock, rec.Interrupts)
		d.lookups.replay(rec.NoActivity)
		x.Step(st.At, rec.Input)
	}
	d.rand.live()
	d.meter.live()
	d.lookups.live()
	last := steps[len(steps)-1]
	d.x, d.seq, d.now = x, int64(len(steps)), last.At
	d.lastSeen = len(x.History())
	if len(last.Events) > 0 && last.Events[len(last.Events)-1].ID != int64(len(x.History())) {
		d.cfg.Log.Warn("replayed history differs in length from the committed one", "execution", d.arn)
	}
	if d.rand.short > 0 || d.rand.extra > 0 {
		d.cfg.Log.Warn("replay drew random values its steps had not recorded (written before they were) or left recorded ones unused; the rebuilt state may differ from the committed history in them",
			"execution", d.arn, "drawnAfresh", d.rand.short, "unused", d.rand.extra)
	}
	d.pending = x.Pending()
	return nil
}

// meterInfo gives the execution the driver's meter, budget and answers
// whether activities exist.
func (d *Driver) meterInfo(info *interp.Info) {
	info.Meter = d.meter
	info.Activities = &d.lookups
	if info.Budget == (interp.Budget{}) {
		info.Budget = interp.Budget{ValueBytes: d.cfg.Budget.ValueBytes, PathNodes: d.cfg.Budget.PathNodes}
	}
}

// Execution returns the execution; read it only before Run or once Done.
func (d *Driver) Execution() *interp.Execution { return d.x }

// Done is closed when Run returns.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Stop asks the execution to stop (ABORTED, with error and cause); it
// does not wait. A JSONata evaluation running meanwhile is interrupted,
// and the execution ends in the step that ran it. False: the driver fell
// asleep first (see Slept), and the stop is for the execution's next.
func (d *Driver) Stop(errName, cause string) bool {
	d.meter.stop.CompareAndSwap(nil, &interp.Interrupt{Stop: true, Name: errName, Cause: cause})
	return d.send(event{out: &outside{in: interp.Input{Kind: interp.Stop, Error: errName, Cause: cause}}})
}

// UpdateMapRun delivers an UpdateMapRun request (interp.UpdateMapRun's
// Args) to the execution, like a stop; it does not wait. False: the
// driver fell asleep first.
func (d *Driver) UpdateMapRun(args *value.Object) bool {
	return d.send(event{out: &outside{in: interp.Input{Kind: interp.UpdateMapRun, Args: args}}})
}

// Redrive runs an execution that ended without succeeding again from the
// states that did not succeed (interp.Redrive): call it on a replayed
// driver before Run. The step is committed before it returns; false when
// the execution cannot be redriven.
func (d *Driver) Redrive(ctx context.Context) (bool, error) {
	if !d.x.Redrivable() {
		return false, nil
	}
	now := d.now
	if d.cfg.Clock != nil {
		now = d.cfg.Clock.Now()
	}
	d.now = now
	in := interp.Input{Kind: interp.Redrive}
	d.meter.step(now)
	cmds := d.x.Step(now, in)
	if d.cfg.Journal != nil {
		st := d.step(d.seq, now, &in)
		st.Wake = d.wakeAt(cmds)
		if err := d.append(ctx, st); err != nil {
			return false, err
		}
		d.seq++
	}
	d.pending = append(d.pending, cmds...)
	return true, nil
}

// send queues ev for the driver without waiting; it is dropped if the
// driver ends first.
func (d *Driver) send(ev event) bool {
	if _, asleep := d.Slept(); asleep {
		return false
	}
	select {
	case d.events <- ev:
		return d.nudge()
	default:
		go func() {
			select {
			case d.events <- ev:
				d.nudge()
			case <-d.done:
			}
		}()
		return true
	}
}

// Deliver hands the input for the task of token (a result, a heartbeat,
// an activity worker's start) to the driver and waits for its verdict:
// nil once the step it caused is committed, ErrTaskClosed, ErrNoTask, the
// journal's error, or ErrEnded when the driver ended first.
func (d *Driver) Deliver(token string, in interp.Input) error {
	cb := &outside{token: token, in: in, reply: make(chan error, 1)}
	select {
	case d.events <- event{out: cb}:
		if !d.nudge() {
			return ErrSlept
		}
	case <-d.done:
		return d.ended()
	}
	select {
	case err := <-cb.reply:
		return err
	case <-d.done:
		// The driver may have answered and then ended (the input completed
		// the execution): its answer wins.
		select {
		case err := <-cb.reply:
			return err
		default:
		}
		return d.ended()
	}
}

// Post delivers the result of task id from outside (an activity offer
// that failed); it does not wait.
func (d *Driver) Post(id int64, res task.Result) {
	d.send(event{id: id, res: res, kind: interp.TaskDone})
}

// Run carries out the commands of a started or replayed execution until it
// ends, or until ctx is cancelled (see Config.Journal). With Config.Park it
// may return earlier, while the execution waits: the driver then goes on
// by itself; Done tells when it has ended.
func (d *Driver) Run(ctx context.Context) {
	d.ctx = ctx
	if d.cfg.Park {
		d.stopWatch = context.AfterFunc(ctx, d.abandonParked)
	}
	cmds := d.pending
	d.pending = nil
	if !d.apply(ctx, cmds) && !d.loop() {
		return
	}
	// A handler called here kept the driver waiting, and the watchdog took
	// the driver on (call.go): Run still returns only once it has ended,
	// unless it parks.
	if !d.cfg.Park {
		<-d.done
	}
}

// loop steps the execution until it ends, is abandoned or parks. It
// reports true when a handler it called kept it waiting and the watchdog
// took the driver on (call.go): it then returns at once.
func (d *Driver) loop() (moved bool) {
	ctx := d.ctx
	for d.x.Status() == interp.Running {
		in, reply, got := d.next(ctx)
		switch got {
		case parked:
			return false // a timer or an input runs the loop again
		case abandoned, slept:
			d.end()
			return false // the execution resumes by replay
		}
		now := d.now
		if d.cfg.Clock != nil {
			now = d.cfg.Clock.Now()
		}
		if in.Kind == interp.TaskDone {
			d.removeToken(in.ID)
		}
		d.meter.step(now)
		d.stepped = true
		cmds := d.x.Step(now, in)
		if d.cfg.Journal != nil {
			st := d.step(d.seq, now, &in)
			st.Wake = d.wakeAt(cmds)
			err := d.commit(ctx, st, reply)
			if errors.Is(err, ErrNotCreated) {
				d.end() // nothing to resume
				return false
			}
			if err != nil {
				d.cfg.Log.Error("cannot commit a step; the execution stops here and resumes on restart", "execution", d.arn, "err", err)
				d.end()
				return false
			}
			d.seq++
		} else if reply != nil {
			reply <- nil
		}
		if d.apply(ctx, cmds) {
			return true
		}
	}
	d.end()
	return false
}

// end withdraws the tasks in flight and marks the driver ended.
func (d *Driver) end() {
	for _, cancel := range d.inflight {
		cancel(nil) // abandoned, not cancelled: a job a task started goes on
	}
	d.timers.Clear()
	d.dropCall()
	d.stopDog()
	if d.stopWatch != nil {
		d.stopWatch()
	}
	// A driver that fell asleep tells its owner first, so that whoever
	// sees it done finds its execution dormant there.
	asleep := d.asleep
	if asleep && d.cfg.OnEnd != nil {
		d.cfg.OnEnd()
	}
	close(d.done)
	if !asleep && d.cfg.OnEnd != nil {
		d.cfg.OnEnd()
	}
}

// Commit retries: a store that refuses writes for a while (a full disk, a
// database that restarts) is tried again with back-off until it takes the
// step, so executions move on by themselves once it recovers.
const (
	commitRetryFirst = 50 * time.Millisecond
	commitRetryMax   = 5 * time.Second
)

// commit appends st to the journal, retrying with back-off while the
// store fails in a way that may pass. The first outcome goes to reply (a
// callback's caller), so that an API call learns at once that the store
// cannot write. It gives up only when ctx ends or the store says the step
// can never be committed (the execution is gone, or another writer
// committed its place).
func (d *Driver) commit(ctx context.Context, st *store.Step, reply chan error) error {
	wait := commitRetryFirst
	for attempt := 0; ; attempt++ {
		err := d.append(ctx, st)
		if reply != nil {
			if err != nil {
				reply <- fmt.Errorf("the store cannot commit this execution's step (stepd retries it): %w", err)
			} else {
				reply <- nil
			}
			reply = nil
		}
		if err == nil {
			if attempt > 0 {
				d.cfg.Log.Info("the store took the step; the execution moves on", "execution", d.arn, "attempts", attempt+1)
			}
			return nil
		}
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, ErrNotCreated) || ctx.Err() != nil {
			return err
		}
		if attempt == 0 {
			d.cfg.Log.Error("the store cannot commit a step; retrying until it can", "execution", d.arn, "err", err)
		} else {
			d.cfg.Log.Warn("the store still cannot commit a step", "execution", d.arn, "attempts", attempt+1, "err", err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, commitRetryMax)
	}
}

// append makes one attempt to append st to the journal, between the
// Committing and Committed hooks.
func (d *Driver) append(ctx context.Context, st *store.Step) error {
	if d.cfg.Committing != nil {
		if err := d.cfg.Committing(ctx, st); err != nil {
			return err
		}
	}
	if d.cfg.Committed == nil {
		return d.cfg.Journal.AppendStep(ctx, st)
	}
	t0 := time.Now()
	err := d.cfg.Journal.AppendStep(ctx, st)
	d.cfg.Committed(ctx, st, d.x, time.Since(t0), err)
	return err
}

var waitingForNothing = interp.Input{Kind: interp.Stop, Error: "States.Runtime", Cause: "the execution is waiting for nothing"}

// nextResult says what next got.
type nextResult uint8

const (
	gotInput  nextResult = iota // an input to step
	abandoned                   // ctx ended: the execution is left as committed
	parked                      // the driver parked (Config.Park)
	slept                       // the driver fell asleep (Config.Sleep)
)

// next waits for the next input.
func (d *Driver) next(ctx context.Context) (in interp.Input, reply chan error, got nextResult) {
	virtual := d.cfg.Clock == nil
	for {
		if d.readyHead < len(d.ready) {
			// Results at hand go first, but a stop, a callback or the end
			// of ctx still gets through a long run of them. (Two selects
			// of one case each cost less than one of two.)
			if done := ctx.Done(); done != nil {
				select {
				case <-done:
					if d.cfg.Journal != nil {
						return in, nil, abandoned
					}
					return interp.Input{Kind: interp.Stop}, nil, gotInput
				default:
				}
			}
			select {
			case ev := <-d.events:
				if in, reply, ok := d.take(ev); ok {
					return in, reply, gotInput
				}
				continue
			default:
				ev := d.ready[d.readyHead]
				d.ready[d.readyHead] = event{}
				d.readyHead++
				if d.readyHead == len(d.ready) {
					d.ready, d.readyHead = d.ready[:0], 0
				}
				return interp.Input{Kind: ev.kind, ID: ev.id, Result: ev.res, Released: ev.released}, nil, gotInput
			}
		}
		var due <-chan time.Time
		if len(d.inflight) == 0 {
			switch {
			case virtual && d.timers.Len() > 0:
				// Nothing can happen before the next timer: jump to it.
				id, at := d.timers.Pop()
				if at.After(d.now) {
					d.now = at
				}
				return interp.Input{Kind: interp.TimerFired, ID: id}, nil, gotInput
			case d.timers.Len() == 0 && len(d.tokens) == 0:
				// Nothing can happen any more: a defect, but never hang.
				return waitingForNothing, nil, gotInput
			}
		}
		if d.cfg.Park && len(d.inflight) == 0 && !virtual && d.idle() {
			if d.sleep() {
				return in, nil, slept
			}
			if d.park() {
				return in, nil, parked
			}
		}
		if !virtual {
			if _, at, ok := d.timers.Next(); ok {
				due = d.cfg.Clock.After(at.Sub(d.cfg.Clock.Now()))
			}
		}
		select {
		case <-ctx.Done():
			if d.cfg.Journal != nil {
				return in, nil, abandoned
			}
			return interp.Input{Kind: interp.Stop}, nil, gotInput
		case ev := <-d.events:
			if d.cfg.Journal != nil && ctx.Err() != nil {
				// ctx ended as the event came (a task whose context it
				// cancelled answers at once): the execution is abandoned,
				// not moved on by it, and resumes by replay.
				return in, nil, abandoned
			}
			if in, reply, ok := d.take(ev); ok {
				return in, reply, gotInput
			}
		case <-due:
			id, _ := d.timers.Pop()
			return interp.Input{Kind: interp.TimerFired, ID: id}, nil, gotInput
		}
	}
}

// take turns an event into the input to step; ok is false for a callback
// whose token names no open task (its caller has been answered).
func (d *Driver) take(ev event) (in interp.Input, reply chan error, ok bool) {
	out := ev.out
	switch {
	case out == nil:
		if !ev.more {
			d.finished(ev.id, nil)
		}
		return interp.Input{Kind: ev.kind, ID: ev.id, Result: ev.res}, nil, true
	case out.token == "":
		return out.in, nil, true
	}
	id, found := d.tokens[out.token]
	if !found {
		if d.x.Issued(out.token) {
			out.reply <- ErrTaskClosed
		} else {
			out.reply <- ErrNoTask
		}
		return in, nil, false
	}
	in = out.in
	in.ID = id
	return in, out.reply, true
}

// finished forgets task id, which ended (cause nil) or was withdrawn
// (task.ErrCancelled), and ends its context with that cause.
func (d *Driver) finished(id int64, cause error) {
	if cancel, ok := d.inflight[id]; ok {
		cancel(cause)
		delete(d.inflight, id)
	}
}

func (d *Driver) removeToken(id int64) {
	for k, v := range d.tokens {
		if v == id {
			delete(d.tokens, k)
		}
	}
}

// apply carries out the commands of a step. It reports true when a handler
// it called on the driver's goroutine kept it waiting and the watchdog
// took the driver on (call.go): it then returns at once.
func (d *Driver) apply(ctx context.Context, cmds []interp.Command) (moved bool) {
	for i, c := range cmds {
		switch c.Kind {
		case interp.Invoke:
			req := c.Request
			kind := interp.TaskDone
			if req.TaskToken != "" {
				if d.tokens == nil {
					d.tokens = map[string]int64{}
				}
				d.tokens[req.TaskToken] = c.ID
				if d.cfg.Activity != nil && req.Pattern == task.Activity {
					d.cfg.Activity(d, c.ID, req)
					continue
				}
				if d.cfg.Submit {
					kind = interp.TaskSubmitted
				}
			}
			answers := d.answers(req)
			if answers == task.Unknown {
				if d.callHere(ctx, c.ID, kind, req, cmds[i+1:]) {
					return true
				}
				continue
			}
			if answers == task.AtOnce {
				// Answered at once: no goroutine, no hand-over.
				ev := event{id: c.ID, kind: kind}
				invoke(ctx, d.cfg.Invoker, req, &ev.res)
				if ev.res.Failed() {
					ev.kind = interp.TaskDone
				}
				if sub := ev.res.Submitted; sub != nil {
					// The invoker answered for the whole task: its
					// TaskSubmitted first (task.Result.Submitted).
					ev.res.Submitted = nil
					if ev.kind == interp.TaskDone && (req.Pattern == task.WaitForTaskToken || req.Pattern.Job()) {
						d.ready = append(d.ready, event{id: c.ID, kind: interp.TaskSubmitted, res: task.Result{Output: sub}, more: true})
					}
				}
				ev.released = ev.kind == interp.TaskDone
				d.ready = append(d.ready, ev)
				continue
			}
			req.ContextObject() // built here: it reads the execution
			cctx, cancel := context.WithCancelCause(ctx)
			d.inflight[c.ID] = cancel
			if req.Pattern.Job() {
				req = d.withSubmit(cctx, c.ID, req)
			}
			d.running.Add(1)
			d.ranTasks.Store(true)
			go d.runTask(cctx, c.ID, req, kind)
		case interp.CancelTask:
			d.removeToken(c.ID)
			d.finished(c.ID, task.ErrCancelled)
		case interp.StartTimer:
			d.timers.Add(c.ID, c.At)
		case interp.CancelTimer:
			d.timers.Remove(c.ID)
		}
	}
	return false
}

// withSubmit returns a copy of a .sync integration's request whose Submit
// records TaskSubmitted for task id while the invoker goes on waiting for
// its job. The interpreter keeps the original (Pending hands it out again,
// with Submitted set, after a restart).
func (d *Driver) withSubmit(ctx context.Context, id int64, req *task.Request) *task.Request {
	r := *req
	r.Submit = func(output any) {
		ev := event{id: id, kind: interp.TaskSubmitted, res: task.Result{Output: output}, more: true}
		select {
		case d.events <- ev:
		case <-ctx.Done():
		}
	}
	return &r
}

// runTask runs one task in its own goroutine and sends its result. Its
// frames are kept small: a goroutine starts with a small stack, and a task
// handler that allocates near its end pays for growing it.
func (d *Driver) runTask(ctx context.Context, id int64, req *task.Request, kind interp.InputKind) {
	ev := event{id: id, kind: kind}
	invoke(ctx, d.cfg.Invoker, req, &ev.res) // recovers a handler's panic
	d.sendResult(ctx, &ev)
	d.running.Done() // not deferred: a defer grows the frame
}

// waitTasks waits, once the driver has ended, until the invocations it
// started have returned or ctx ends: a task the execution withdrew may
// still be stopping the job it started (a .sync integration), which a
// process that exits next (stepd run) must let finish.
func (d *Driver) waitTasks(ctx context.Context) {
	if !d.ranTasks.Load() {
		return // every task was answered on the driver's goroutine
	}
	done := make(chan struct{})
	go func() { d.running.Wait(); close(done) }()
	if waitingTasks != nil {
		waitingTasks()
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// waitingTasks, when set, is called as waitTasks begins to wait: a test
// hook (export_test.go), so that a test can tell that Run waits for its
// withdrawn tasks without sleeping. Set it only while no driver runs.
var waitingTasks func()

//go:noinline
func (d *Driver) sendResult(ctx context.Context, ev *event) {
	if ev.res.Failed() {
		ev.kind = interp.TaskDone
	}
	// Most often the driver is waiting: hand the result over without
	// making ctx's Done channel.
	select {
	case d.events <- *ev:
		return
	default:
	}
	select {
	case d.events <- *ev:
	case <-ctx.Done():
	}
}

func invoke(ctx context.Context, inv task.Invoker, req *task.Request, res *task.Result) {
	defer func() {
		if p := recover(); p != nil {
			*res = panicked(p)
		}
	}()
	if inv == nil {
		*res = NoHandler(req)
		return
	}
	*res = inv.Invoke(ctx, req)
}

//go:noinline
func panicked(p any) task.Result {
	return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the task handler panicked: %v", p)}
}

// NoHandler is the result of a task that no handler serves.
//
//go:noinline
func NoHandler(req *task.Request) task.Result {
	return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no task handler is configured for resource %s of state %s", req.Resource, req.StateName)}
}

// wakeAt is the Wake of the step that returned cmds (store.Step.Wake): the
// first timer's due time when, once cmds are carried out, the execution
// waits only for timers; zero otherwise. It answers zero, to be safe,
// while a task is still in flight or its token outstanding.
func (d *Driver) wakeAt(cmds []interp.Command) time.Time {
	if d.x.Status() != interp.Running || len(d.inflight) > 0 || len(d.tokens) > 0 {
		return time.Time{}
	}
	for _, c := range cmds {
		if c.Kind == interp.Invoke {
			return time.Time{}
		}
	}
	at, _ := d.x.TimersOnly()
	return at
}

// step builds the journal's step for the events produced since the last
// one; in is nil for the start.
func (d *Driver) step(seq int64, at time.Time, in *interp.Input) *store.Step {
	x := d.x
	evs := x.History()[d.lastSeen:]
	d.lastSeen = len(x.History())
	st := &store.Step{ExecutionARN: d.arn, Seq: seq, At: at, Status: string(x.Status())}
	drawn := d.rand.take()
	readings, interrupts := d.meter.take()
	noActivity := d.lookups.take()
	if in != nil || len(drawn) > 0 || len(readings) > 0 || len(interrupts) > 0 || len(noActivity) > 0 {
		d.inBuf = encodeRecord(d.inBuf[:0], in, drawn, readings, interrupts, noActivity)
		st.Input = d.inBuf
	}
	// One buffer holds every event of the step; each event's JSON is a
	// slice of it.
	buf := d.buf[:0]
	st.Events = make([]store.Event, 0, len(evs))
	for _, ev := range evs {
		start := len(buf)
		buf = ev.AppendJSON(buf, true)
		st.Events = append(st.Events, store.Event{ID: ev.ID, Type: ev.Type, JSON: buf[start:len(buf):len(buf)]})
	}
	d.buf = buf
	if x.Status() != interp.Running {
		st.Stopped = at
		if x.Status() == interp.Succeeded {
			st.Output = value.String(x.Output())
		}
		if f := x.Failure(); f != nil {
			st.Error, st.Cause = f.Error, f.Cause
		}
	}
	return st
}
