package interp

// container runs the children of a Parallel or Map state.
type container struct {
	owner    *thread
	st       *state
	isMap    bool
	children []*thread
	results  []any
	done     int
	running  int
	next     int // next item to start (Map)
	items    []any
	maxConc  int
	failed   int
	// tolerated failures (Map).
	tolCount    int
	tolPercent  float64
	hasTol      bool
	last        int64 // chain for starting children
	distributed bool  // DISTRIBUTED mode: iterations are child executions
	runStarted  int64 // id of MapRunStarted
	input       any   // effective input (after InputPath / Parameters)
	over        bool
	batched     bool // items are ItemBatcher's batches, ItemSelector applied
	// weights holds the number of items in each batch (nil: one each).
	weights []int64
	// kst holds each child execution's status as the Map Run counts it
	// ("" not started yet).
	kst    []Status
	runArn string
	// iters records each iteration as a child execution, for the
	// ResultWriter (nil without one).
	iters   []iterRecord
	written bool // the ResultWriter has written the results
	shaped  bool // a WriterConfig alone has shaped them (nothing written)
	// run is the Map Run of a Distributed Map, kids its child executions
	// by item (nil until started).
	run     *MapRun
	kids    []*ChildExecution
	childSM string // the children's state machine ARN
	// ok marks the children that succeeded, and todo the ones a redrive
	// runs again (redrive.go).
	ok   []bool
	todo []*thread
}

func (c *container) childSucceeded(ch *thread, output any) {
	if c.over {
		return
	}
	c.results[ch.index] = output
	if c.ok == nil {
		c.ok = make([]bool, len(c.results))
	}
	c.ok[ch.index] = true
	if c.iters != nil {
		c.iters[ch.index].stop, c.iters[ch.index].failure = c.owner.x.now, nil // a redriven iteration may have failed before
	}
	c.done++
	c.running--
	x := c.owner.x
	if c.distributed {
		c.endChild(ch, Succeeded, output, nil)
		if c.done == len(c.items) {
			c.succeed()
			return
		}
		c.fill()
		return
	}
	if c.isMap {
		last := ch.last
		x.emit(ch, "MapIterationSucceeded", "mapIterationSucceededEventDetails", c.iterDetails(ch.index))
		c.last = last
		if c.done == len(c.items) {
			c.succeed()
			return
		}
		c.fill()
		return
	}
	if c.done == len(c.children) {
		c.succeed()
	}
}

func (c *container) childFailed(ch *thread, f *Failure) {
	if c.over {
		return
	}
	x := c.owner.x
	last := ch.last
	if c.distributed {
		status := Failed
		if ch.timedOut {
			status = TimedOut
		}
		c.endChild(ch, status, nil, f)
	}
	if c.isMap {
		if !c.distributed {
			x.emit(ch, "MapIterationFailed", "mapIterationFailedEventDetails", c.iterDetails(ch.index))
		}
		if c.iters != nil {
			c.iters[ch.index].stop, c.iters[ch.index].failure = x.now, f
		}
		c.failed++
		c.done++
		c.running--
		if c.hasTol && c.tolerates() {
			c.last = last
			if c.done == len(c.items) {
				c.succeed()
				return
			}
			c.fill()
			return
		}
		if c.hasTol || c.distributed {
			// A Map Run fails as its tolerance (none: 0) is exceeded,
			// not with its child execution's error.
			f = &Failure{Error: ErrExceedToleratedFailures, Cause: "The specified tolerated failure threshold was exceeded"}
		}
	}
	if !c.isMap && ch.cur != nil && ch.cur.Type == "Task" {
		// AWS aborts the Task state whose failure fails a Parallel
		// branch (a Fail state ends its branch and is not aborted); the
		// Parallel state's next event still follows the TaskFailed.
		x.emit(ch, "TaskStateAborted", "", nil)
	}
	c.failMap(f, last)
}

// exceeded fails a Map whose failures exceed the tolerance that an
// UpdateMapRun has just lowered.
func (c *container) exceeded() {
	c.failMap(&Failure{Error: ErrExceedToleratedFailures, Cause: "The specified tolerated failure threshold was exceeded"}, c.owner.last)
}

// failMap fails the Parallel or Map state with f; last is the event its
// next event follows.
func (c *container) failMap(f *Failure, last int64) {
	x := c.owner.x
	if c.distributed {
		c.endMapRun("FAILED")
	}
	c.over = true
	c.cancelAll()
	th := c.owner
	th.last = last
	th.run.ctr, th.run.failedCtr = nil, c
	// The Failed event is only written when no retrier applies.
	if c.distributed {
		th.last = c.runStarted
		x.emit(th, "MapRunFailed", "mapRunFailedEventDetails", errorDetails(f))
		th.run.failEvent = "MapStateFailed"
	} else if c.isMap {
		th.run.failEvent = "MapStateFailed"
	} else {
		th.run.failEvent = "ParallelStateFailed"
	}
	th.fail(f)
}

// halt stops the children without events, as their execution (a Map
// Run's child execution) timed out; a Map Run they started is aborted.
func (c *container) halt() {
	if c.distributed {
		c.cancelAll()
		return
	}
	c.over = true
	for _, ch := range c.children {
		if !ch.dead {
			ch.halt()
		}
	}
}

func (c *container) cancelAll() {
	c.over = true
	for _, ch := range c.children {
		if !ch.dead {
			if c.distributed {
				// A child execution is stopped: its history ends with
				// ExecutionAborted alone, as a stopped execution's.
				ch.halt()
				c.endChild(ch, Aborted, nil, nil)
				continue
			}
			ch.cancelWork()
		}
	}
	if c.run != nil && c.run.Status == "RUNNING" {
		// The Map state was cancelled (a sibling branch failed, the
		// execution ended): its Map Run is aborted.
		if x := c.owner.x; x.status == Running {
			x.emit(c.owner, "MapRunAborted", "", nil)
		}
		c.endMapRun("ABORTED")
	}
}

// abortMapRuns aborts the Map Runs still running when the execution ends
// (stopped, timed out), with their running child executions.
func (x *Execution) abortMapRuns() {
	for _, r := range x.mapRuns {
		if r.Status == "RUNNING" {
			r.c.cancelAll()
		}
	}
}

func (c *container) succeed() {
	c.over = true
	th := c.owner
	if c.iters != nil && !c.written && !c.shaped {
		th.startWrite(c)
		return
	}
	x := th.x
	th.run.ctr = nil
	th.gen++
	switch {
	case c.distributed:
		th.last = c.runStarted
		c.endMapRun("SUCCEEDED")
		x.emit(th, "MapRunSucceeded", "", nil)
		x.emit(th, "MapStateSucceeded", "", nil)
		th.last = c.runStarted
	default:
		th.last = x.nextID
		if c.isMap {
			x.emit(th, "MapStateSucceeded", "", nil)
		} else {
			x.emit(th, "ParallelStateSucceeded", "", nil)
		}
		th.last = x.nextID - 1
	}
	if c.iters != nil {
		th.stateResult(th.run.write.output)
		return
	}
	th.stateResult(c.results)
}
