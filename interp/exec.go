package interp

import (
	"fmt"
	"time"

	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// Status is an execution status as AWS names it.
type Status string

// Execution statuses.
const (
	Running   Status = "RUNNING"
	Succeeded Status = "SUCCEEDED"
	Failed    Status = "FAILED"
	TimedOut  Status = "TIMED_OUT"
	Aborted   Status = "ABORTED"
)

// Info describes an execution: its identity and start time.
type Info struct {
	ExecutionARN     string
	Name             string
	StateMachineARN  string
	StateMachineName string
	RoleARN          string
	StartTime        time.Time
	// TestCase names the mock test case for task requests, if any.
	TestCase string
	// Region and Account are used in task event details and ARNs.
	Region  string
	Account string
	// MaxEvents fails the execution when its history reaches this many
	// events (AWS: 25,000 for Standard workflows); 0 means no limit.
	MaxEvents int
	// Test runs one state only (the TestState API).
	Test *Test
	// Sync marks an Express execution started by StartSyncExecution: its
	// $$.Execution has no RedriveCount, as AWS records it, where an
	// Express execution started by StartExecution has RedriveCount 0
	// (the AWS-validated snapshots of test_express_sync's and
	// test_express_async's test_query_runtime_memory).
	Sync bool
	// Defer makes Start record only ExecutionStarted and ask, with a
	// StartTimer due at once, to be stepped again (TimerFired) before the
	// first state runs: a server commits the start and answers the
	// caller before any state is evaluated, and a stop finds the
	// execution. Ignored with Test.
	Defer bool
	// TokenKey signs the execution's task tokens (HMAC-SHA256), so that
	// they cannot be forged; the service keeps it in its store so tokens
	// stay valid across restarts. Nil signs with an empty key.
	TokenKey []byte
	// Rand is the execution's source of random values. Nil means a source
	// seeded from ExecutionArn: deterministic, for tests.
	Rand Rand
	// Meter, when set, times events and bounds and interrupts JSONata
	// evaluations (see Meter).
	Meter Meter
	// Activities, when set, is asked whether an activity exists before a
	// Task schedules it; one that does not fails the state with
	// States.Runtime right after TaskStateEntered, as AWS does ("The
	// activity … does not exist."), with no ActivityScheduled event. Nil:
	// every activity exists. It is called synchronously, while Start or
	// Step runs, so its answers are inputs of the step: a journaling
	// engine records them with the step and hands them back on replay.
	Activities Activities
	// Budget bounds what JSONPath paths and intrinsic functions produce.
	Budget Budget
	// MapRuns records each Distributed Map iteration as a child execution
	// with its history, for the caller to store (TakeMapRuns); without
	// it, iterations are child executions only for a ResultWriter, which
	// names them, and keep no history (`stepd run`).
	MapRuns bool
	// Branch, when set, is told of each path taken through a state that
	// the history does not name: the Choice rule (or Default) chosen, the
	// retrier that retried, the catcher that caught (stepd test --cover).
	// It is called synchronously, while Start or Step runs.
	Branch func(Branch)
}

// Branch is one path taken through a state: Kind BranchChoice with the
// index of the Choice rule that matched, BranchDefault, BranchRetry with
// the index of the retrier that retried, or BranchCatch with the index of
// the catcher that caught.
type Branch struct {
	State string
	Kind  BranchKind
	Index int
}

// BranchKind tells what kind of path a Branch is.
type BranchKind uint8

// The kinds of Branch.
const (
	BranchChoice BranchKind = iota + 1
	BranchDefault
	BranchRetry
	BranchCatch
)

// branch reports a path taken to Info.Branch.
func (x *Execution) branch(state string, kind BranchKind, index int) {
	if x.info.Branch != nil {
		x.info.Branch(Branch{State: state, Kind: kind, Index: index})
	}
}

// CommandKind tells the engine what to do.
type CommandKind uint8

// The commands.
const (
	// Invoke runs a task; its result is delivered as a TaskDone input with
	// the same ID.
	Invoke CommandKind = iota + 1
	// StartTimer asks for a TimerFired input with the same ID at At.
	StartTimer
	// CancelTimer withdraws a timer that is no longer needed.
	CancelTimer
	// CancelTask withdraws a running task whose result is no longer needed.
	CancelTask
)

// Command is an effect the interpreter asks the engine to perform.
type Command struct {
	Kind    CommandKind
	ID      int64
	At      time.Time     // StartTimer
	Request *task.Request // Invoke
}

// InputKind says what happened.
type InputKind uint8

// The inputs.
const (
	TaskDone InputKind = iota + 1
	TimerFired
	Stop
	// TaskSubmitted reports that a .waitForTaskToken integration call
	// succeeded (Result holds its response); the task now waits for its
	// token to come back. For a .sync integration it reports that the job
	// was started (task.Request.Submit); the task's result comes later.
	TaskSubmitted
	// TaskStarted reports that an activity worker took the task (Worker).
	TaskStarted
	// TaskHeartbeat reports a heartbeat for a task (SendTaskHeartbeat).
	TaskHeartbeat
	// UpdateMapRun changes a running Map Run's limits (Args: mapRunArn and
	// the members of UpdateMapRun's request that are set).
	UpdateMapRun
	// Redrive runs a FAILED, TIMED_OUT or ABORTED execution again from the
	// states that did not succeed (RedriveExecution).
	Redrive
)

// Input is something that happened to an execution.
type Input struct {
	Kind   InputKind
	ID     int64
	Result task.Result // TaskDone
	// Stop: error and cause recorded on the ExecutionAborted event.
	Error, Cause string
	// Worker names the activity worker (TaskStarted).
	Worker string
	// Released (TaskDone) says that neither the engine nor the invoker
	// refers to the task's Request any more (an invoker that answered at
	// once, see task.Immediate), so the interpreter may reuse its memory.
	Released bool
	// Args holds the request of an UpdateMapRun.
	Args *value.Object
}

// Execution is the state of one running execution. It performs no I/O and
// reads no clock: the engine passes in the current time with every input
// and carries out the commands it returns. It is not safe for concurrent
// use.
type Execution struct {
	prog  *Program
	info  Info
	input any
	now   time.Time

	events []*history.Event
	nextID int64

	root *thread
	ops  opTable
	opID int64
	cmds []Command // the commands of this step; those of earlier steps precede them in the array

	// slab holds the events to come, and opSlab the ops, allocated a batch
	// at a time (see emit).
	slab   []history.Event
	opSlab []op
	// spareOps are task ops whose result came back with Input.Released:
	// nothing refers to them any more, so newOp takes them again (a chain
	// of tasks reuses one op instead of writing a new one per task).
	spareOps []*op
	// timeText is the last time formatted for the Context object.
	timeAt   time.Time
	timeText string
	// sized is the object last found within maxPayload.
	sized *value.Object

	status Status
	output any
	err    *Failure

	// attempts counts task invocations per Task state (by its index), for
	// mock selection.
	attempts []int

	// $$.Execution and $$.StateMachine, made once per execution
	ctxExecution, ctxStateMachine *value.Object
	ctxExpress                    *value.Object // ctxExecution without RedriveCount
	tokens                        int           // task tokens issued
	test                          *testRun

	runq []pending

	// rand is the source of every random value (Info.Rand, or one seeded
	// from the execution ARN).
	rand Rand
	// meter is Info.Meter (nil: none); clockless, that it reports no time
	// during this step (see Clockless).
	meter     Meter
	clockless bool

	// mapRuns are the Map Runs started, in order; dirtyRuns and
	// dirtyChildren what changed since TakeMapRuns (maprun.go).
	mapRuns       []*MapRun
	dirtyRuns     []*MapRun
	dirtyChildren []*ChildExecution

	// redrives counts the redrives, the last at redriveAt; historyFull
	// marks an execution failed by the history limit (not redrivable).
	redrives    int
	redriveAt   time.Time
	historyFull bool
}

// pending is a queued continuation: begin st with input, or finish the
// thread with input when st is nil.
type pending struct {
	th    *thread
	st    *state
	input any
}

// MaxStandardEvents is AWS's limit on a Standard execution's history.
const MaxStandardEvents = 25000

// checkHistoryLimit fails a running execution whose history reached the
// limit.
func (x *Execution) checkHistoryLimit() {
	if x.info.MaxEvents > 0 && x.status == Running && len(x.events) >= x.info.MaxEvents-1 {
		x.historyFull = true
		x.fail(x.root, &Failure{Error: ErrRuntime, Cause: fmt.Sprintf("The execution history reached the limit of %d events.", x.info.MaxEvents)})
	}
}

// drain runs queued continuations until every thread is blocked or done.
func (x *Execution) drain() {
	for i := 0; i < len(x.runq) && x.status == Running; i++ {
		x.checkHistoryLimit()
		if x.status != Running {
			break
		}
		p := x.runq[i]
		x.runq[i] = pending{}
		if i == len(x.runq)-1 {
			// Every queued continuation is taken: the ones p queues reuse
			// the queue from its start, which a long chain of synchronous
			// states would otherwise grow to its length.
			x.runq = x.runq[:0]
			i = -1
		}
		if p.th.dead {
			continue
		}
		if p.st == nil {
			p.th.finish(p.input)
			continue
		}
		p.th.begin(p.st, p.input)
	}
	x.runq = x.runq[:0]
}

// Start begins an execution of p with the given input at time now and
// returns it with the first commands.
func (p *Program) Start(info Info, input any, now time.Time) (*Execution, []Command) {
	x := &Execution{prog: p, info: info, input: input, now: now, status: Running, rand: info.Rand, meter: info.Meter}
	if x.rand == nil {
		x.rand = seededRand(info.ExecutionARN)
	}
	x.checkClock()
	if n := p.histLen.Load(); n > 0 {
		x.events = make([]*history.Event, 0, n)
	}
	details := value.NewObject(3)
	details.Set("input", input)
	details.Set("inputDetails", truncatedFalse())
	if info.RoleARN != "" {
		details.Set("roleArn", info.RoleARN)
	}
	x.emitText(nil, "ExecutionStarted", "executionStartedEventDetails", details, "input")
	if p.Def.HasTimeout {
		x.timer(nil, opExecTimeout, now.Add(time.Duration(p.Def.TimeoutSeconds)*time.Second))
	}
	x.root = &thread{x: x, m: p.root}
	start := p.root.start
	if info.Test != nil {
		x.test = &testRun{Test: *info.Test}
		if info.Test.Inspect {
			x.test.inspection = value.NewObject(8)
		}
		if st := p.root.states[info.Test.State]; st != nil {
			start = st
		}
		if vars := info.Test.Variables; vars != nil {
			x.root.vars = &scope{}
			for k, v := range vars.All {
				x.root.vars.set(k, v)
			}
		}
	}
	if info.Defer && info.Test == nil {
		x.timer(nil, opBegin, now)
		return x, x.takeCommands()
	}
	x.root.begin(start, input)
	x.drain()
	x.checkHistoryLimit()
	return x, x.takeCommands()
}

// Step delivers an input at time now and returns the resulting commands.
func (x *Execution) Step(now time.Time, in Input) []Command {
	if x.now.Before(now) {
		x.now = now
	}
	if x.status != Running {
		if in.Kind == Redrive && x.Redrivable() {
			x.checkClock()
			x.redrive()
			return x.takeCommands()
		}
		return nil
	}
	x.checkClock()
	switch in.Kind {
	case Stop:
		x.abort(in.Error, in.Cause)
	case UpdateMapRun:
		x.updateMapRun(in.Args)
	case TaskSubmitted, TaskStarted, TaskHeartbeat:
		// Progress of a task that goes on waiting.
		o := x.ops.get(in.ID)
		if o == nil || o.kind != opTask {
			return x.takeCommands()
		}
		o.progress(in)
	default:
		o := x.ops.get(in.ID)
		if o == nil {
			return x.takeCommands() // stale
		}
		x.ops.remove(in.ID)
		o.fire(in)
		if in.Released && o.kind == opTask && o.th != nil && o.th.run.task.taskOp != o {
			x.release(o)
		}
	}
	x.drain()
	x.checkHistoryLimit()
	return x.takeCommands()
}

// Pending returns the commands for every operation still outstanding: the
// tasks and timers an engine must (re)start after rebuilding an execution
// from its inputs, e.g. after a restart.
func (x *Execution) Pending() []Command {
	out := make([]Command, 0, x.ops.len())
	x.ops.all(func(o *op) {
		if o.req != nil {
			out = append(out, Command{Kind: Invoke, ID: o.id, Request: o.req})
		} else {
			out = append(out, Command{Kind: StartTimer, ID: o.id, At: o.at})
		}
	})
	return out
}

// TimersOnly reports whether every outstanding operation is a timer (no
// task is outstanding, and at least one timer is), and the earliest due
// time among them: a cheaper question than Pending's.
func (x *Execution) TimersOnly() (first time.Time, ok bool) {
	for _, o := range x.ops.ops {
		if o == nil {
			continue
		}
		if o.req != nil {
			return time.Time{}, false
		}
		if !ok || o.at.Before(first) {
			first, ok = o.at, true
		}
	}
	return first, ok
}

// Status returns the execution status.
func (x *Execution) Status() Status { return x.status }

// Output returns the output of a succeeded execution.
func (x *Execution) Output() any { return x.output }

// Failure returns the error of a failed, timed-out or aborted execution.
func (x *Execution) Failure() *Failure { return x.err }

// History returns the events so far. The slice must not be modified.
func (x *Execution) History() []*history.Event { return x.events }

// Info returns the execution's identity.
func (x *Execution) Info() Info { return x.info }

// command asks the engine for c. The commands of a step are appended to
// an array that the next steps go on filling, so that a step's commands
// cost no allocation of their own.
func (x *Execution) command(c Command) {
	if cap(x.cmds) == 0 {
		x.cmds = make([]Command, 0, 16)
	}
	x.cmds = append(x.cmds, c)
}

// takeCommands returns the step's commands: the returned slice is never
// written again (its capacity ends with it).
func (x *Execution) takeCommands() []Command {
	if x.status != Running && len(x.mapRuns) > 0 {
		x.abortMapRuns()
	}
	c := x.cmds[:len(x.cmds):len(x.cmds)]
	x.cmds = x.cmds[len(x.cmds):]
	if len(c) == 0 {
		c = nil
	}
	if x.status != Running {
		x.prog.histLen.Store(int32(min(len(x.events), maxHistHint)))
		// Withdraw everything still outstanding, in the order it was asked
		// for.
		x.ops.all(func(o *op) {
			if k := o.kind; k == opTask || k == opRead || k == opWrite {
				c = append(c, Command{Kind: CancelTask, ID: o.id})
			} else {
				c = append(c, Command{Kind: CancelTimer, ID: o.id})
			}
		})
		x.ops = opTable{}
	}
	return c
}

// emit appends an event. prev is the thread whose chain it continues (nil
// for execution-level events, which continue the root's chain).
func (x *Execution) emit(th *thread, typ, detailsName string, details *value.Object) *history.Event {
	if th != nil && th.silent {
		if th.child != nil {
			return x.emitChild(th, typ, detailsName, details)
		}
		return &history.Event{Type: typ, ID: th.last}
	}
	x.clockNow()
	x.nextID++
	if len(x.slab) == 0 {
		// As many as the history holds, from 8 to 128: the slabs double
		// as the history grows, so a long one makes few allocations and a
		// short one wastes little.
		x.slab = make([]history.Event, min(max(len(x.events), 8), 128))
	}
	e := &x.slab[0] // zero: set the fields one by one, not the whole struct
	x.slab = x.slab[1:]
	e.Timestamp, e.Type, e.ID = x.now, typ, x.nextID
	if detailsName != "" {
		e.DetailsName = detailsName
	}
	if details != nil {
		e.Details = details
	}
	if th != nil {
		e.PreviousEventID = th.last
		th.last = e.ID
	}
	x.events = append(x.events, e)
	return e
}

// emitText appends an event whose details member text holds a value that
// AWS gives as its JSON text (a state's input or output, a task's
// parameters): it is encoded when the event is read.
func (x *Execution) emitText(th *thread, typ, detailsName string, details *value.Object, text string) *history.Event {
	e := x.emit(th, typ, detailsName, details)
	if e.Details == details {
		e.MarkText(text)
	}
	return e
}

// The forms of the most frequent events' details (see history.Form).
var (
	enteredForm         = &history.Form{Keys: []string{"input", "inputDetails", "name"}, Text: 1, Whole: 1 << 1}
	exitedForm          = &history.Form{Keys: []string{"name", "output", "outputDetails"}, Text: 1 << 1, Whole: 1 << 2}
	lambdaScheduledForm = &history.Form{Keys: []string{"input", "inputDetails", "resource"}, Text: 1, Whole: 1 << 1}
	taskStartedForm     = &history.Form{Keys: []string{"resource", "resourceType"}}
	succeededForm       = &history.Form{Keys: []string{"output", "outputDetails"}, Text: 1, Whole: 1 << 1}
	taskSucceededForm   = &history.Form{Keys: []string{"output", "outputDetails", "resource", "resourceType"}, Text: 1, Whole: 1 << 1}
)

// emitForm appends an event whose details have form f, with the values
// v0… of its members that are not always whole (as many as it has).
func (x *Execution) emitForm(th *thread, typ, detailsName string, f *history.Form, v0, v1, v2 any) *history.Event {
	e := x.emit(th, typ, detailsName, nil)
	if th == nil || !th.silent || th.child != nil {
		// One by one, and only those set: the event is zero, and an array
		// copied whole goes through bulk write barriers.
		e.Form = f
		e.Vals[0] = v0
		if v1 != nil {
			e.Vals[1] = v1
		}
		if v2 != nil {
			e.Vals[2] = v2
		}
	}
	return e
}

// truncatedFalse is the inputDetails or outputDetails of an event whose
// payload is whole. Events are written once and never changed, so they
// all share one object.
func truncatedFalse() *value.Object { return notTruncated }

var notTruncated = value.ObjectOf("truncated", false)

func (x *Execution) succeed(th *thread, output any) {
	x.status = Succeeded
	x.output = output
	d := value.NewObject(2)
	d.Set("output", output)
	d.Set("outputDetails", truncatedFalse())
	x.emitText(th, "ExecutionSucceeded", "executionSucceededEventDetails", d, "output")
}

func (x *Execution) fail(th *thread, f *Failure) {
	x.status = Failed
	x.err = f
	x.emit(th, "ExecutionFailed", "executionFailedEventDetails", errorDetails(f))
}

func (x *Execution) abort(errName, cause string) {
	x.status = Aborted
	x.err = &Failure{Error: errName, Cause: cause}
	d := value.NewObject(2)
	if cause != "" {
		d.Set("cause", cause)
	}
	if errName != "" {
		d.Set("error", errName)
	}
	x.emit(x.root, "ExecutionAborted", "executionAbortedEventDetails", d)
}

func (x *Execution) timeOut() {
	x.status = TimedOut
	x.err = &Failure{Error: ErrTimeout, Cause: "The execution timed out"}
	d := value.NewObject(1)
	d.Set("error", ErrTimeout)
	x.emit(x.root, "ExecutionTimedOut", "executionTimedOutEventDetails", d)
}

func errorDetails(f *Failure) *value.Object {
	d := value.NewObject(2)
	if f.Cause != "" {
		d.Set("cause", f.Cause)
	}
	if f.Error != "" {
		d.Set("error", f.Error)
	}
	return d
}

// op is an outstanding task or timer.
type op struct {
	id   int64
	kind opKind
	th   *thread
	x    *Execution
	gen  int // the thread's generation when the op was made
	// What the op asked the engine for, so that it can be asked again
	// after a restart (Pending).
	req *task.Request
	at  time.Time
	// request is where a task op keeps its request (req points at it),
	// and ctx what its Context object is built from when it is read.
	request task.Request
	ctx     contextAt
}

// ContextObject builds the Context object of a task op's request, as it
// was when the task was scheduled (task.Request.ContextFrom). It reads the
// execution: call it where the execution is stepped, never concurrently.
func (o *op) ContextObject() any { return o.x.contextObject(o.ctx) }

type opKind uint8

const (
	opTask opKind = iota + 1
	opTaskTimeout
	opHeartbeat
	opWait
	opRetry
	opExecTimeout
	opDelayedResult
	opBegin // the first state of a deferred start
	opRead  // a Distributed Map's ItemReader reading from S3
	opWrite // a Distributed Map's ResultWriter writing to S3
	// opChildTimeout: a Map Run's child execution's TimeoutSeconds
	opChildTimeout
)

func (x *Execution) newOp(th *thread, kind opKind) *op {
	x.opID++
	var o *op
	if n := len(x.spareOps); n > 0 {
		o = x.spareOps[n-1] // zeroed by release
		x.spareOps[n-1] = nil
		x.spareOps = x.spareOps[:n-1]
	} else {
		if len(x.opSlab) == 0 {
			x.opSlab = make([]op, min(max(int(x.opID), 4), 64)) // doubling, as the events' slab
		}
		o = &x.opSlab[0] // zero: set the fields one by one
		x.opSlab = x.opSlab[1:]
	}
	o.id, o.kind, o.th, o.x = x.opID, kind, th, x
	if th != nil {
		o.gen = th.gen
	}
	x.ops.add(o)
	return o
}

// release keeps o, a task op that is done and that nothing refers to any
// more, for newOp to take again.
func (x *Execution) release(o *op) {
	*o = op{}
	x.spareOps = append(x.spareOps, o)
}

func (x *Execution) timer(th *thread, kind opKind, at time.Time) *op {
	o := x.newOp(th, kind)
	o.at = at
	x.command(Command{Kind: StartTimer, ID: o.id, At: at})
	return o
}

func (x *Execution) cancel(o *op) {
	if o == nil {
		return
	}
	if !x.ops.remove(o.id) {
		return
	}
	if o.kind == opTask || o.kind == opRead || o.kind == opWrite {
		x.command(Command{Kind: CancelTask, ID: o.id})
	} else {
		x.command(Command{Kind: CancelTimer, ID: o.id})
	}
}

// progress handles a task's intermediate inputs.
func (o *op) progress(in Input) {
	th := o.th
	if th.gen != o.gen || th.dead {
		return
	}
	switch in.Kind {
	case TaskSubmitted:
		th.taskSubmitted(in.Result)
	case TaskStarted:
		th.activityStarted(in.Worker)
	case TaskHeartbeat:
		th.heartbeat()
	}
}

func (o *op) fire(in Input) {
	switch o.kind {
	case opExecTimeout:
		o.x.timeOut()
		return
	case opBegin:
		o.x.root.begin(o.x.prog.root.start, o.x.input)
		return
	case opChildTimeout:
		// Whatever state the child is in (its generation changes with
		// each).
		if o.th.timeout == o {
			o.th.parent.childTimedOut(o.th)
		}
		return
	}
	th := o.th
	if th.gen != o.gen || th.dead {
		return // the thread has moved on
	}
	switch o.kind {
	case opWait:
		th.waitDone()
	case opRetry:
		th.retryNow()
	case opTask:
		th.taskDone(in.Result)
	case opRead:
		th.run.read.answer(th, in.Result)
	case opWrite:
		th.writeDone(in.Result)
	case opDelayedResult:
		th.taskDone(*th.run.task.delayed)
	case opTaskTimeout:
		th.taskTimedOut(ErrTimeout)
	case opHeartbeat:
		th.taskTimedOut(ErrHeartbeatTimeout)
	}
}
