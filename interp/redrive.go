package interp

import (
	"time"

	"github.com/stepd/stepd/value"
)

// Redrive (RedriveExecution): a FAILED, TIMED_OUT or ABORTED execution
// runs again from the states that did not succeed, keeping the results of
// those that did. Each thread resumes at the state it stopped in, with
// that state's input and its retries counted afresh; a Parallel or Map
// state runs again only its branches and iterations that did not succeed
// (a Distributed Map's failed and aborted child executions are redriven in
// their own histories, and the ones never started start), and a Map Run is
// redriven (MapRunRedriven) rather than started anew.

// RedriveCount returns how many times the execution was redriven, and when
// last.
func (x *Execution) RedriveCount() (int, time.Time) { return x.redrives, x.redriveAt }

// Redrivable reports whether the execution can be redriven now: it ended
// without succeeding, and not because its history reached the limit.
func (x *Execution) Redrivable() bool {
	switch x.status {
	case Failed, TimedOut, Aborted:
	default:
		return false
	}
	return x.root != nil && x.root.cur != nil && !x.historyFull
}

// redrive runs the execution again from where it stopped.
func (x *Execution) redrive() {
	if !x.Redrivable() {
		return
	}
	x.status, x.err, x.output = Running, nil, nil
	x.redrives++
	x.redriveAt = x.now
	x.ctxExecution = nil // $$.Execution.RedriveCount
	x.emit(x.root, "ExecutionRedriven", "executionRedrivenEventDetails", value.ObjectOf("redriveCount", value.Int(int64(x.redrives))))
	if x.prog.Def.HasTimeout {
		x.timer(nil, opExecTimeout, x.now.Add(time.Duration(x.prog.Def.TimeoutSeconds)*time.Second))
	}
	x.root.redrive()
	x.drain()
	x.checkHistoryLimit()
}

// redrive resumes a thread that stopped (failed, was cancelled, or was
// left waiting when its execution ended) at its current state.
func (th *thread) redrive() {
	st, input := th.cur, th.run.input
	if st == nil { // an iteration whose input could not be made
		st = th.m.start
	}
	c := th.run.ctr
	if c == nil {
		c = th.run.failedCtr
	}
	th.dead = false
	th.gen++
	if c != nil && (st.Type == "Parallel" || st.Type == "Map") && c.results != nil {
		th.run.ctr, th.run.failedCtr = c, nil
		th.run.retries, th.run.retryCount, th.run.exited = nil, 0, false
		c.redrive()
		return
	}
	th.begin(st, input)
}

// redrive runs again the children of a Parallel or Map state that did not
// succeed.
func (c *container) redrive() {
	x := c.owner.x
	c.over, c.running, c.failed = false, 0, 0
	c.done = 0
	for i := range c.results {
		if c.ok != nil && c.ok[i] {
			c.done++
		}
	}
	if r := c.run; r != nil {
		r.Status, r.Stop = "RUNNING", time.Time{}
		r.RedriveCount++
		r.RedriveDate = x.now
		// The unsuccessful children wait to be redriven.
		for i, s := range c.kst {
			if s == Failed || s == TimedOut || s == Aborted {
				c.setStatus(i, pendingRedrive)
			}
		}
		x.touchRun(r)
		c.owner.last = c.runStarted
		x.emit(c.owner, "MapRunRedriven", "mapRunRedrivenEventDetails", value.ObjectOf("mapRunArn", r.ARN, "redriveCount", value.Int(int64(r.RedriveCount))))
	}
	// The children that stopped start again, at most MaxConcurrency at
	// once for a Map; those never started follow (fill).
	c.todo = nil
	for i, ch := range c.children {
		if c.ok == nil || !c.ok[i] {
			c.todo = append(c.todo, ch)
		}
	}
	if len(c.items) > 0 && c.done == len(c.items) || !c.isMap && c.done == len(c.children) {
		c.succeed()
		return
	}
	if c.isMap {
		c.fill()
		return
	}
	todo := c.todo
	c.todo = nil
	c.running = len(todo)
	for _, ch := range todo {
		if c.over {
			break
		}
		ch.redrive()
	}
}

// restart resumes child ch of a Map, which stopped before succeeding.
func (c *container) restart(ch *thread) {
	c.running++
	if c.run != nil {
		c.setStatus(ch.index, Running)
		ch.timedOut = false
		c.startTimeout(ch)
	}
	if k := ch.child; k != nil {
		x := c.owner.x
		k.Status, k.Failure, k.Stop = Running, nil, time.Time{}
		ch.last = k.nextID
		x.emit(ch, "ExecutionRedriven", "executionRedrivenEventDetails", value.ObjectOf("redriveCount", value.Int(int64(x.redrives))))
	}
	ch.redrive()
}
