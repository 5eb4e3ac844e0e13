package interp

import (
	"context"
	"time"
)

// Meter times and bounds an execution's evaluations for the driver that
// runs it (Info.Meter). The interpreter reads no clock and cannot tell a
// runaway evaluation from a long one: the driver can, and the meter is how
// it tells the interpreter. A driver records what its meter reported with
// each step and reports the same again when it replays the step, so the
// rebuilt execution is the committed one; a nil Meter reports nothing (the
// time stays the step's, and no evaluation is interrupted).
type Meter interface {
	// Now returns the time of the event being recorded: the step's time
	// or later, once evaluations have taken time. A zero time leaves the
	// time as it is.
	Now() time.Time
	// Begin starts a JSONata evaluation and returns the context it runs
	// under; End ends it, and reports whether it was interrupted (nil: it
	// was not). Evaluations do not nest.
	Begin() context.Context
	End() *Interrupt
}

// A Meter may also implement Clockless: it reports, before a step
// (Program.Start, Execution.Step), that Now will return the zero time for
// every event of that step (no clock to read and nothing recorded to
// replay), so the interpreter need not ask it for each event.
type Clockless interface {
	Clockless() bool
}

// Interrupt says why an evaluation was interrupted.
type Interrupt struct {
	// Stop is a stop request (StopExecution): the execution ends ABORTED
	// with Name and Cause, as for a Stop input. Otherwise the evaluation
	// exceeded its budget, and the state fails with
	// States.QueryEvaluationError; Cause names the limit.
	Stop        bool
	Name, Cause string
}

// Error returns the cause.
func (i *Interrupt) Error() string { return i.Cause }

// Budget bounds what one JSONPath path or intrinsic function may produce
// (Info.Budget); zero fields take the defaults. A state whose path or
// function exceeds it fails with States.Runtime, naming the limit. The
// limits are deterministic: replay applies them again.
type Budget struct {
	// ValueBytes bounds the JSON size of one path's or function's value.
	ValueBytes int
	// PathNodes bounds the values one path collects on its way (a
	// descendant segment applied to the results of another, say).
	PathNodes int
}

// The default budget.
const (
	DefaultValueBytes = 16 << 20
	DefaultPathNodes  = 1_000_000
)

func (b Budget) valueBytes() int {
	if b.ValueBytes <= 0 {
		return DefaultValueBytes
	}
	return b.ValueBytes
}

func (b Budget) pathNodes() int {
	if b.PathNodes <= 0 {
		return DefaultPathNodes
	}
	return b.PathNodes
}

// evalContext starts an evaluation: the meter's context, or the background.
func (x *Execution) evalContext() context.Context {
	if x.meter == nil {
		return context.Background()
	}
	return x.meter.Begin()
}

// evalEnd ends an evaluation started by evalContext.
func (x *Execution) evalEnd() *Interrupt {
	if x.meter == nil {
		return nil
	}
	return x.meter.End()
}

// interrupted is the failure of an evaluation of field that was
// interrupted: a stop aborts the execution; a budget fails the state.
func (s site) interrupted(field string, in *Interrupt) *Failure {
	if in.Stop {
		return &Failure{Error: in.Name, Cause: in.Cause, abort: true}
	}
	return s.evalFailure(field, "The evaluation of the field '"+field+"' was stopped: "+in.Cause)
}

// clockNow advances the execution's time to the meter's, for an event.
func (x *Execution) clockNow() {
	if x.meter == nil || x.clockless {
		return
	}
	if t := x.meter.Now(); t.After(x.now) {
		x.now = t
	}
}

// checkClock asks the meter, before a step, whether it has a clock for
// this step's events (Clockless).
func (x *Execution) checkClock() {
	c, ok := x.meter.(Clockless)
	x.clockless = ok && c.Clockless()
}
