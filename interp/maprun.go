package interp

import (
	"time"

	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/value"
)

// MapRun is a Distributed Map's Map Run as the interpreter keeps it: its
// status, the limits in force and the counts of its child executions and
// of their items (each item is one child execution, or a batch of items
// is one with an ItemBatcher).
// Execution.TakeMapRuns hands out the ones a step changed.
type MapRun struct {
	ARN         string
	Status      string // RUNNING, SUCCEEDED, FAILED, ABORTED
	Start, Stop time.Time
	// The limits in force (UpdateMapRun changes them): 0 is no limit on
	// concurrency; a count of -1 or a percentage of 0 tolerates nothing.
	MaxConcurrency             int
	ToleratedFailureCount      int64
	ToleratedFailurePercentage float64
	// Executions counts the child executions, Items the items they
	// process (DescribeMapRun's executionCounts and itemCounts).
	Executions, Items MapRunCounts
	RedriveCount      int
	RedriveDate       time.Time

	c     *container
	dirty bool
}

// MapRunCounts are the counts of a Map Run's child executions, or of
// their items, as AWS's MapRunExecutionCounts and MapRunItemCounts define
// them: Pending not started yet, Running, Succeeded, Failed, TimedOut (the
// ItemProcessor's TimeoutSeconds elapsed), Aborted (stopped by the user or
// because the Map Run failed), PendingRedrive (unsuccessful, waiting to
// run again in a redrive of the Map Run), FailuresNotRedrivable (failed,
// timed out or aborted, and never to be redriven: the Map Run succeeded
// or its Map state was left); Total all; ResultsWritten those whose
// results were written, by the ResultWriter or into the state's output.
type MapRunCounts struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total, ResultsWritten int64
	FailuresNotRedrivable, PendingRedrive                                         int64
}

// pendingRedrive is the status of a child execution waiting to run again
// in a redrive (as ListExecutions' statusFilter names it).
const pendingRedrive Status = "PENDING_REDRIVE"

// field is the count of the children in status s ("" not started).
func (m *MapRunCounts) field(s Status) *int64 {
	switch s {
	case Running:
		return &m.Running
	case Succeeded:
		return &m.Succeeded
	case Failed:
		return &m.Failed
	case TimedOut:
		return &m.TimedOut
	case Aborted:
		return &m.Aborted
	case pendingRedrive:
		return &m.PendingRedrive
	}
	return &m.Pending
}

// unsuccessful is the count of the failed, timed out and aborted ones.
func (m *MapRunCounts) unsuccessful() int64 { return m.Failed + m.TimedOut + m.Aborted }

// ChildExecution is one iteration of a Distributed Map seen as the child
// workflow execution AWS runs for it, with its own history.
type ChildExecution struct {
	MapRunARN       string
	ARN, Name       string
	StateMachineARN string
	Express         bool // EXPRESS child executions (ProcessorConfig.ExecutionType)
	Input           any
	Status          Status
	Output          any
	Failure         *Failure
	Start, Stop     time.Time
	// Events holds the child's history events produced since the last
	// TakeMapRuns.
	Events []*history.Event

	nextID    int64
	dirty     bool
	noHistory bool // neither kept nor handed out (Info.MapRuns is off)
}

// TakeMapRuns returns the Map Runs and child executions that changed since
// the last call (with the children's new events), for the caller to store;
// replaying an execution produces them again.
func (x *Execution) TakeMapRuns() ([]*MapRun, []*ChildExecution) {
	runs, children := x.dirtyRuns, x.dirtyChildren
	x.dirtyRuns, x.dirtyChildren = nil, nil
	for _, r := range runs {
		r.dirty = false
	}
	out := make([]*ChildExecution, len(children))
	for i, c := range children {
		c.dirty = false
		cp := *c
		out[i] = &cp
		c.Events = nil
	}
	return runs, out
}

func (x *Execution) touchRun(r *MapRun) {
	if !r.dirty {
		r.dirty = true
		x.dirtyRuns = append(x.dirtyRuns, r)
	}
}

func (x *Execution) touchChild(c *ChildExecution) {
	if !c.dirty {
		c.dirty = true
		x.dirtyChildren = append(x.dirtyChildren, c)
	}
}

// startMapRun records the Map Run of a Distributed Map container, before
// its items are counted (an ItemReader reads them once it has started).
func (c *container) startMapRun() {
	x := c.owner.x
	r := &MapRun{ARN: c.runArn, Status: "RUNNING", Start: x.now, MaxConcurrency: c.maxConc, ToleratedFailureCount: -1, c: c}
	if c.hasTol {
		r.ToleratedFailureCount, r.ToleratedFailurePercentage = int64(c.tolCount), c.tolPercent
	}
	c.run = r
	x.mapRuns = append(x.mapRuns, r)
	x.touchRun(r)
}

// countItems sets the Map Run's totals once its items are known: each
// item one child execution, or each batch one of several items.
func (c *container) countItems() {
	r := c.run
	r.Executions.Total = int64(len(c.items))
	r.Items.Total = r.Executions.Total
	if c.weights != nil {
		r.Items.Total = 0
		for _, w := range c.weights {
			r.Items.Total += w
		}
	}
	r.Executions.Pending, r.Items.Pending = r.Executions.Total, r.Items.Total
	c.kst = make([]Status, len(c.items))
	c.owner.x.touchRun(r)
}

// endMapRun sets the Map Run's final status.
func (c *container) endMapRun(status string) {
	r := c.run
	if r == nil || r.Status != "RUNNING" {
		return
	}
	x := c.owner.x
	r.Status, r.Stop = status, x.now
	for _, m := range []*MapRunCounts{&r.Executions, &r.Items} {
		// The children's results are written to the ResultWriter's
		// bucket or, without one (or with a WriterConfig alone), into the
		// output of a Map Run that succeeds: AWS counts them too
		// (test_sfn_api_map_run's recording: resultsWritten 2 of a Map
		// with no ResultWriter).
		if c.written || ((c.iters == nil || c.shaped) && status == "SUCCEEDED") {
			m.ResultsWritten = m.Succeeded + m.Failed + m.TimedOut
		}
		if status == "SUCCEEDED" {
			// The Map state exits: a redrive of the parent never runs
			// its unsuccessful children again.
			m.FailuresNotRedrivable = m.unsuccessful()
		}
	}
	x.touchRun(r)
}

// weight is the number of items child i processes.
func (c *container) weight(i int) int64 {
	if c.weights == nil {
		return 1
	}
	return c.weights[i]
}

// setStatus moves child i to status s in the Map Run's counts.
func (c *container) setStatus(i int, s Status) {
	r := c.run
	if r == nil || c.kst[i] == s {
		return
	}
	from := c.kst[i]
	c.kst[i] = s
	*r.Executions.field(from)--
	*r.Executions.field(s)++
	w := c.weight(i)
	*r.Items.field(from) -= w
	*r.Items.field(s) += w
	c.owner.x.touchRun(r)
}

// startChild makes iteration ch a child execution: its name, ARN and
// ExecutionStarted event.
func (c *container) startChild(ch *thread, input any) {
	x := c.owner.x
	label := x.info.StateMachineName + "/" + mapRunLabel(c.st)
	if c.childSM == "" { // one string for all the children
		c.childSM = x.scope().StateMachine(label)
	}
	name := uuid.FromSource(x.rand)
	k := &ChildExecution{MapRunARN: c.runArn, Name: name, ARN: x.scope().Execution(label, name), StateMachineARN: c.childSM,
		Express: c.st.ExecutionType == "EXPRESS", Input: input, Status: Running, Start: x.now, noHistory: !x.info.MapRuns}
	if c.kids == nil {
		c.kids = make([]*ChildExecution, len(c.items))
	}
	c.kids[ch.index] = k
	c.setStatus(ch.index, Running)
	if k.noHistory {
		// Named for the ResultWriter only: the iteration's events are
		// not recorded anywhere.
		return
	}
	ch.child = k
	ch.last = 0
	d := value.NewObject(3)
	d.Set("input", input)
	d.Set("inputDetails", truncatedFalse())
	if x.info.RoleARN != "" {
		d.Set("roleArn", x.info.RoleARN)
	}
	x.emitText(ch, "ExecutionStarted", "executionStartedEventDetails", d, "input")
	ch.last = 0 // the first state's Entered event points at 0, as in an execution's history
}

// endChild ends the child execution of iteration ch: SUCCEEDED with
// output, FAILED with f, or ABORTED.
func (c *container) endChild(ch *thread, status Status, output any, f *Failure) {
	x := c.owner.x
	x.cancel(ch.timeout)
	ch.timeout = nil
	k := ch.child
	if k == nil {
		// A child without a record (Info.MapRuns is off).
		if c.run != nil && c.kst[ch.index] == Running {
			c.setStatus(ch.index, status)
		}
		return
	}
	if k.Status != Running {
		return
	}
	switch status {
	case Succeeded:
		d := value.NewObject(2)
		d.Set("output", output)
		d.Set("outputDetails", truncatedFalse())
		x.emitText(ch, "ExecutionSucceeded", "executionSucceededEventDetails", d, "output")
		k.Output = output
	case Failed:
		x.emit(ch, "ExecutionFailed", "executionFailedEventDetails", errorDetails(f))
		k.Failure = f
	case TimedOut:
		// As an execution whose TimeoutSeconds elapsed (timeOut).
		x.emit(ch, "ExecutionTimedOut", "executionTimedOutEventDetails", value.ObjectOf("error", ErrTimeout))
		k.Failure = f
	default:
		x.emit(ch, "ExecutionAborted", "executionAbortedEventDetails", value.NewObject(0))
	}
	k.Status, k.Stop = status, x.now
	c.setStatus(ch.index, status)
	x.touchChild(k)
}

// startTimeout starts the timer of child ch's ItemProcessor TimeoutSeconds
// (the child execution's own TimeoutSeconds), if it has one.
func (c *container) startTimeout(ch *thread) {
	if sm := c.st.processor.sm; sm != nil && sm.HasTimeout {
		x := c.owner.x
		ch.timeout = x.timer(ch, opChildTimeout, x.now.Add(time.Duration(sm.TimeoutSeconds)*time.Second))
	}
}

// childTimedOut ends child execution ch, whose TimeoutSeconds elapsed, as
// TIMED_OUT: like an execution that times out, what it was doing is
// withdrawn without events of its own, and the Map counts it a failure
// (States.Timeout).
func (c *container) childTimedOut(ch *thread) {
	ch.timeout = nil
	if ch.dead || c.over {
		return
	}
	ch.halt()
	ch.timedOut = true
	c.childFailed(ch, &Failure{Error: ErrTimeout})
}

// emitChild appends an event to the history of th's child execution.
func (x *Execution) emitChild(th *thread, typ, detailsName string, details *value.Object) *history.Event {
	k := th.child
	x.clockNow()
	k.nextID++
	e := &history.Event{Timestamp: x.now, Type: typ, ID: k.nextID, DetailsName: detailsName, Details: details, PreviousEventID: th.last}
	th.last = e.ID
	if k.Express {
		// AWS keeps no history of Express executions.
		return e
	}
	k.Events = append(k.Events, e)
	x.touchChild(k)
	return e
}

// updateMapRun applies an UpdateMapRun request to a running Map Run: the
// new limits hold from now on (more children start at once when the
// concurrency grows; a tolerance already exceeded fails the Map Run).
func (x *Execution) updateMapRun(args *value.Object) {
	if args == nil {
		return
	}
	a, _ := args.Get("mapRunArn")
	var r *MapRun
	for _, m := range x.mapRuns {
		if m.ARN == a {
			r = m
		}
	}
	if r == nil || r.Status != "RUNNING" {
		return
	}
	c := r.c
	if v, ok := args.Get("maxConcurrency"); ok {
		if n, ok := v.(value.Number); ok {
			c.maxConc = int(n.Float64())
			r.MaxConcurrency = c.maxConc
		}
	}
	if v, ok := args.Get("toleratedFailureCount"); ok {
		if n, ok := v.(value.Number); ok {
			c.tolCount, c.hasTol = int(n.Float64()), true
			r.ToleratedFailureCount = int64(c.tolCount)
		}
	}
	if v, ok := args.Get("toleratedFailurePercentage"); ok {
		if n, ok := v.(value.Number); ok {
			c.tolPercent, c.hasTol = n.Float64(), true
			r.ToleratedFailurePercentage = c.tolPercent
		}
	}
	x.touchRun(r)
	if c.over {
		return
	}
	if c.failed > 0 && !(c.hasTol && c.tolerates()) {
		c.exceeded()
		return
	}
	c.fill()
}
