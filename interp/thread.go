package interp

import (
	"fmt"
	"time"

	"github.com/stepd/stepd/jsonata"
	"github.com/stepd/stepd/value"
)

// thread runs one sequence of states: the whole machine, one Parallel
// branch or one Map iteration.
type thread struct {
	x      *Execution
	m      *machine
	parent *container
	index  int
	gen    int  // bumped whenever the thread leaves a state; stale ops are ignored
	dead   bool // cancelled or finished
	silent bool // events are not recorded in the execution's history (Distributed Map child executions)
	// child is the child execution whose history records the thread's
	// events (a Distributed Map's iterations and the threads under them).
	child *ChildExecution
	// express is set in the threads of an EXPRESS child execution of a
	// Distributed Map.
	express bool
	// timeout is the timer of a Map Run's child execution's
	// TimeoutSeconds; timedOut is set once it fired.
	timeout  *op
	timedOut bool

	cur  *state   // the state the thread is in
	run  stateRun // the current state's run
	last int64    // previous event id for the next event of this thread

	vars *scope
	item *mapItem // for Map iterations: $$.Map.Item
	// jv hands the thread's variables and $states to JSONata
	// evaluations; made at the thread's first.
	jv *jsonataVars
}

// stateRun is what one run of a state needs, from its Entered event until
// the thread leaves the state (its retries included). begin resets it.
type stateRun struct {
	input       any // the raw input of the state
	enteredID   int64
	enteredPrev int64 // the previousEventId of the Entered event
	enteredAt   time.Time

	retries    []int // per retrier
	retryCount int

	effInput any        // a Wait state's effective input (after InputPath)
	task     taskRun    // a Task state's invocation (zero in other states)
	ctr      *container // a running Parallel or Map state
	// failedCtr is the container of a Parallel or Map state that failed,
	// kept for a redrive.
	failedCtr *container
	read      *readRun  // a Distributed Map's ItemReader
	write     *writeRun // a Distributed Map's ResultWriter
	// failEvent is written when a failed Parallel/Map state is not retried.
	failEvent string
	// assigned is recorded on the StateExited event.
	assigned *value.Object
	// exited is set once the state has exited and the thread waits in the
	// run queue for its next state: cancelling it then aborts nothing.
	exited bool
}

type mapItem struct {
	index int
	value any
}

// scope holds workflow variables. Inner scopes (Parallel branches, Map
// iterations) read their parent's variables.
type scope struct {
	vars   map[string]any
	parent *scope
	// slots cache the JSONata evaluator's form of variables that
	// expressions have read, by name; set empties a variable's.
	slots map[string]*jsonata.Slot
}

// slot returns the JSONata slot of a variable of the scope.
func (s *scope) slot(name string) *jsonata.Slot {
	sl := s.slots[name]
	if sl == nil {
		if s.slots == nil {
			s.slots = map[string]*jsonata.Slot{}
		}
		sl = &jsonata.Slot{}
		s.slots[name] = sl
	}
	return sl
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(name string, v any) {
	if s.vars == nil {
		s.vars = map[string]any{}
	}
	s.vars[name] = v
	if sl := s.slots[name]; sl != nil {
		*sl = jsonata.Slot{} // drop the old value's form now
	}
}

// token returns the task token of the Task state the thread is in, if any.
func (th *thread) token() string {
	return th.run.task.token
}

func (th *thread) begin(st *state, input any) {
	th.gen++
	th.cur = st
	th.run = stateRun{input: input}
	th.inspect("input", input)
	e := th.x.emitForm(th, st.enteredEvent, "stateEnteredEventDetails", enteredForm, input, st.name, nil)
	th.run.enteredID = e.ID
	th.run.enteredPrev = e.PreviousEventID
	th.run.enteredAt = th.x.now
	th.runState()
}

// contextAt is what a thread's Context object depends on, at one moment.
type contextAt struct {
	cur       *state
	enteredAt time.Time
	retry     int
	token     string
	item      *mapItem
	// express is set in the child executions of a Distributed Map whose
	// ExecutionType is EXPRESS: AWS gives their $$.Execution no
	// RedriveCount (Express executions are not redriven).
	express bool
}

// contextObject builds $$ for the current state.
func (th *thread) contextObject() any {
	return th.x.contextObject(th.contextAt())
}

// contextAt is what the thread's Context object depends on now.
func (th *thread) contextAt() contextAt {
	return contextAt{th.cur, th.run.enteredAt, th.run.retryCount, th.token(), th.item, th.express}
}

// contextObject builds $$ as it was at a.
func (x *Execution) contextObject(a contextAt) any {
	if x.ctxExecution == nil {
		e := value.NewObject(6)
		e.Set("Id", x.info.ExecutionARN)
		e.Set("Input", x.input)
		e.Set("StartTime", formatTime(x.info.StartTime))
		e.Set("Name", x.info.Name)
		e.Set("RoleArn", x.info.RoleARN)
		if x.test == nil && !x.info.Sync { // TestState's and StartSyncExecution's contexts have no RedriveCount
			e.Set("RedriveCount", value.Int(int64(x.redrives)))
		}
		x.ctxExecution = e
		x.ctxExpress = nil
		x.ctxStateMachine = value.ObjectOf("Id", x.info.StateMachineARN, "Name", x.info.StateMachineName)
	}
	c := value.NewObject(5)
	if a.express {
		if x.ctxExpress == nil {
			x.ctxExpress = value.NewObject(x.ctxExecution.Len())
			for k, v := range x.ctxExecution.All {
				if k != "RedriveCount" {
					x.ctxExpress.Set(k, v)
				}
			}
		}
		c.Set("Execution", x.ctxExpress)
	} else {
		c.Set("Execution", x.ctxExecution)
	}
	c.Set("StateMachine", x.ctxStateMachine)
	st := value.NewObject(3)
	if a.cur != nil {
		st.Set("Name", a.cur.name)
		st.Set("EnteredTime", x.formatTime(a.enteredAt))
		if a.cur.Type == "Task" || a.cur.Type == "Parallel" || a.cur.Type == "Map" {
			st.Set("RetryCount", count(a.retry))
		}
	}
	c.Set("State", st)
	token := a.token
	if token != "" {
		c.Set("Task", value.ObjectOf("Token", token))
	}
	if a.item != nil {
		c.Set("Map", value.ObjectOf("Item", value.ObjectOf("Index", count(a.item.index), "Value", a.item.value)))
	}
	if t := x.test; t != nil && t.Context != nil {
		// TestState's context stands for the whole Context object (an
		// empty one leaves $$ empty); only a task token is kept.
		given := t.Context.Clone()
		if token != "" && !given.Has("Task") {
			given.Set("Task", value.ObjectOf("Token", token))
		}
		return given
	}
	return c
}

// formatTime is formatTime, remembering the last time it formatted: the
// states of a step share its time.
func (x *Execution) formatTime(t time.Time) string {
	if !t.Equal(x.timeAt) || x.timeText == "" {
		x.timeAt, x.timeText = t, formatTime(t)
	}
	return x.timeText
}

// counts are small counts as JSON numbers, boxed once.
var counts = func() (c [64]any) {
	for i := range c {
		c[i] = value.Int(int64(i))
	}
	return c
}()

// count returns n as a JSON number.
func count(n int) any {
	if n >= 0 && n < len(counts) {
		return counts[n]
	}
	return value.Int(int64(n))
}

// formatTime renders t as AWS does in the Context object, in UTC with
// milliseconds: "2006-01-02T15:04:05.000Z".
func formatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	hour, minute, sec := t.Clock()
	b := make([]byte, 0, 24)
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1e6, 3)
	b = append(b, 'Z')
	return string(b)
}

// appendDigits appends n (0 <= n < 10^width) with width digits.
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	for range width {
		b = append(b, '0')
	}
	for i := len(b) - 1; i >= start && n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}

// exit leaves the current state with output and moves on.
func (th *thread) exit(output any, next *state) {
	st := th.cur
	// Counting stops past the limit: a value that shares one large part
	// many times may stand for far more JSON than it holds.
	if !th.x.withinLimit(output) {
		th.run.assigned = nil
		th.fail(&Failure{Error: ErrDataLimitExceeded, Cause: fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Name)})
		return
	}
	if th.run.assigned == nil {
		th.x.emitForm(th, st.exitedEvent, "stateExitedEventDetails", exitedForm, st.name, output, nil)
		th.moveOn(output, next)
		return
	}
	d := value.NewObject(5)
	if a := th.run.assigned; a != nil {
		for k, v := range a.All {
			th.setVar(k, v)
		}
		d.Set("assignedVariables", assignedDetails(a))
		d.Set("assignedVariablesDetails", truncatedFalse())
		th.run.assigned = nil
	}
	d.Set("name", st.name)
	d.Set("output", output)
	d.Set("outputDetails", truncatedFalse())
	th.x.emitText(th, st.exitedEvent, "stateExitedEventDetails", d, "output")
	th.moveOn(output, next)
}

// moveOn continues with the next state, or finishes the thread when next is
// nil. The continuation is queued rather than called, so long runs of
// synchronous states do not deepen the stack.
func (th *thread) moveOn(output any, next *state) {
	if t := th.x.test; t != nil && th == th.x.root {
		t.stop(th.x, output, next)
		return
	}
	th.gen++
	th.run.exited = true
	th.x.runq = append(th.x.runq, pending{th: th, st: next, input: output})
}

func (th *thread) finish(output any) {
	th.dead = true
	th.dropForms()
	if th.parent == nil {
		th.x.succeed(th, output)
		return
	}
	th.parent.childSucceeded(th, output)
}

// runState executes the current state until it finishes or blocks.
func (th *thread) runState() {
	st := th.cur
	if st.NotImplemented != "" {
		// A definition AWS accepts, with what stepd cannot run: the
		// validator's WARNING, now as the execution's failure.
		th.propagate(runtimeFailure(st.Name, th.run.enteredID, "%s", st.NotImplemented))
		return
	}
	switch st.Type {
	case "Pass":
		th.runPass()
	case "Succeed":
		th.runSucceed()
	case "Fail":
		th.runFail()
	case "Choice":
		th.runChoice()
	case "Wait":
		th.runWait()
	case "Task":
		th.runTask()
	case "Parallel":
		th.runParallel()
	case "Map":
		th.runMap()
	default:
		th.propagate(&Failure{Error: ErrRuntime, Cause: fmt.Sprintf("unsupported state type %q", st.Type)})
	}
}

// addAssigned records variables to assign when the state exits: AWS
// evaluates every field of a state with the variables as they were when it
// was entered.
func (th *thread) addAssigned(o *value.Object) {
	if o == nil {
		return
	}
	if th.run.assigned == nil {
		th.run.assigned = o
		return
	}
	m := th.run.assigned.Clone()
	for k, v := range o.All {
		m.Set(k, v)
	}
	th.run.assigned = m
}

// dropForms lets go of the JSONata evaluator forms that the thread kept
// (of $states and of the variables of its own scope), once it ends; they
// are made again if it is run again (a redrive).
func (th *thread) dropForms() {
	th.jv = nil
	if th.vars != nil && (th.parent == nil || th.vars != th.parent.owner.vars) {
		th.vars.slots = nil
	}
}

func (th *thread) setVar(name string, v any) {
	if th.vars == nil || (th.parent != nil && th.vars == th.parent.owner.vars) {
		th.vars = &scope{parent: th.vars}
	}
	th.vars.set(name, v)
}

// halt withdraws whatever the thread is waiting for, without events.
func (th *thread) halt() {
	th.withdraw()
	if th.run.ctr != nil {
		th.run.ctr.halt()
	}
}

// cancelWork withdraws whatever the thread is waiting for.
func (th *thread) cancelWork() {
	if th.cur != nil && !th.dead && !th.run.exited {
		// A state still in progress is aborted; one that has exited
		// (a Choice or Pass whose successor is queued) is not.
		th.x.emit(th, th.cur.Type+"StateAborted", "", nil)
	}
	th.withdraw()
	if th.run.ctr != nil {
		th.run.ctr.cancelAll()
	}
}

// withdraw ends the thread (a new generation: late results are ignored)
// and cancels its task, timers and S3 reads and writes; its container, if
// any, is the caller's to end.
func (th *thread) withdraw() {
	th.gen++
	th.dead = true
	th.dropForms()
	x := th.x
	x.cancel(th.run.task.taskOp)
	x.cancel(th.run.task.timeoutOp)
	x.cancel(th.run.task.heartbeatOp)
	if th.run.read != nil {
		x.cancel(th.run.read.op)
	}
	if th.run.write != nil {
		x.cancel(th.run.write.op)
	}
}
