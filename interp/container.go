package interp

import (
	"fmt"
	"math"
	"strings"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/value"
)

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
}

func (th *thread) runParallel() {
	st := th.cur
	th.gen++
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	if st.parameters != nil {
		if in, f = th.evalPayload(st.parameters, in); f != nil {
			th.fail(f)
			return
		}
	}
	th.startParallel(in)
}

// startParallel starts the branches of a Parallel state with input in.
func (th *thread) startParallel(in any) {
	st := th.cur
	th.x.emit(th, "ParallelStateStarted", "", nil)
	c := &container{owner: th, st: st, input: in, last: th.last}
	c.results = make([]any, len(st.branches))
	th.run.ctr = c
	for i, b := range st.branches {
		ch := &thread{x: th.x, m: b, parent: c, index: i, last: th.last, vars: th.vars, silent: th.silent}
		c.children = append(c.children, ch)
	}
	c.running = len(c.children)
	if th.mocked(c) {
		return
	}
	for _, ch := range c.children {
		if c.over {
			break
		}
		ch.begin(ch.m.start, in)
	}
	if len(st.branches) == 0 {
		c.succeed()
	}
}

func (th *thread) runMap() {
	st := th.cur
	th.gen++
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	th.inspect("afterInputPath", in)
	items := any(in)
	if v, read := th.readerItems(); read {
		items = v
	} else if st.itemsPath != nil {
		v, err := st.itemsPath.get(th.env(in))
		if err != nil {
			th.fail(th.pathFailure(err))
			return
		}
		items = v
	}
	arr, ok := items.([]any)
	if ok && st.itemsPath != nil {
		th.inspect("afterItemsPath", arr)
	}
	if !ok {
		// AWS names the path as applied to its document: "$$.Execution.Input"
		// reads "$.Execution.Input" of the Context object. TestState, which
		// has no event ids, reports the message alone.
		path := "$"
		if st.itemsPath != nil {
			path = strings.TrimPrefix(st.itemsPath.text, "$")
			if !strings.HasPrefix(path, "$") {
				path = st.itemsPath.text
			}
		}
		f := runtimeFailure(st.Name, th.run.enteredID, "Reference path \"%s\" must point to array.", path)
		if th.x.test != nil {
			f.Cause = fmt.Sprintf("Reference path \"%s\" must point to array.", path)
		}
		th.fail(f)
		return
	}
	c := &container{owner: th, st: st, isMap: true, input: in, items: arr}
	if f := c.limits(th, in); f != nil {
		th.fail(f)
		return
	}
	th.startMap(c)
}

// startMap starts the iterations of a Map state.
func (th *thread) startMap(c *container) {
	arr := c.items
	th.inspect("maxConcurrency", value.Int(int64(c.maxConc)))
	if c.st.jsonata {
		// (JSONPath Maps record these once their paths are evaluated.)
		if c.tolCount >= 0 && c.hasTol {
			th.inspect("toleratedFailureCount", value.Int(int64(c.tolCount)))
		}
		if c.st.ToleratedFailurePercentage.Set {
			th.inspect("toleratedFailurePercentage", value.Float(c.tolPercent))
		}
	}
	th.x.emit(th, "MapStateStarted", "mapStateStartedEventDetails", value.ObjectOf("length", value.Int(int64(len(arr)))))
	if !c.st.jsonata {
		if f := c.tolerance(th, c.input); f != nil {
			th.fail(f)
			return
		}
	}
	if c.st.ProcessorMode == "DISTRIBUTED" {
		// Iterations run as child executions: their events are not part of
		// this history.
		c.distributed = true
		arn := fmt.Sprintf("arn:aws:states:%s:%s:mapRun:%s/%s:%s", th.x.region(), th.x.account(), th.x.info.StateMachineName, mapRunLabel(c.st), uuid.FromSource(th.x.rand))
		th.x.emit(th, "MapRunStarted", "mapRunStartedEventDetails", value.ObjectOf("mapRunArn", arn))
		c.runStarted = th.last
	}
	c.last = th.last
	c.results = make([]any, len(arr))
	th.run.ctr = c
	if th.mocked(c) {
		return
	}
	if len(arr) == 0 {
		c.succeed()
		return
	}
	c.fill()
}

// pathNumber reads a number for a *Path field. AWS also accepts a string
// holding a number.
func (th *thread) pathNumber(r *ref, field, path, kind string, in any) (float64, *Failure) {
	v, err := r.get(th.env(in))
	if err != nil {
		return 0, th.pathFailure(err)
	}
	switch x := v.(type) {
	case value.Number:
		return x.Float64(), nil
	case string:
		if n, err := value.ParseString(x); err == nil {
			if num, ok := n.(value.Number); ok {
				return num.Float64(), nil
			}
		}
	}
	text, isStr := v.(string)
	if !isStr {
		text = value.String(v)
	}
	return 0, runtimeFailure(th.cur.Name, th.run.enteredID, "The %s field refers to value \"%s\" which is not a valid %s: %s", field, text, kind, path)
}

// limits evaluates MaxConcurrency(Path), before the Map state starts.
func (c *container) limits(th *thread, in any) *Failure {
	st := c.st
	if n, ok := st.MaxConcurrency.Value.(value.Number); ok {
		c.maxConc = int(n.Float64())
	}
	if st.maxConcurrencyPath != nil {
		f, fl := th.pathNumber(st.maxConcurrencyPath, "MaxConcurrencyPath", st.MaxConcurrencyPath, "integer", in)
		if fl != nil {
			return fl
		}
		c.maxConc = int(f)
	}
	return nil
}

// tolerance evaluates the tolerated failure count and percentage, once the
// Map state has started.
func (c *container) tolerance(th *thread, in any) *Failure {
	st := c.st
	c.tolCount = -1
	if n, ok := st.ToleratedFailureCount.Value.(value.Number); ok {
		c.tolCount, c.hasTol = int(n.Float64()), true
	}
	if n, ok := st.ToleratedFailurePercentage.Value.(value.Number); ok {
		c.tolPercent, c.hasTol = n.Float64(), true
	}
	if st.toleratedCountPath != nil {
		f, fl := th.pathNumber(st.toleratedCountPath, "ToleratedFailureCountPath", st.ToleratedFailureCountPath, "integer", in)
		if fl != nil {
			return fl
		}
		if f < 0 {
			return runtimeFailure(st.Name, th.run.enteredID, "ToleratedFailureCount cannot be negative.")
		}
		c.tolCount, c.hasTol = int(f), true
	}
	if st.toleratedPctPath != nil {
		f, fl := th.pathNumber(st.toleratedPctPath, "ToleratedFailurePercentagePath", st.ToleratedFailurePercentagePath, "float", in)
		if fl != nil {
			return fl
		}
		c.tolPercent, c.hasTol = f, true
	}
	if c.hasTol && (c.tolPercent < 0 || c.tolPercent > 100) {
		return runtimeFailure(st.Name, th.run.enteredID, "ToleratedFailurePercentage must be between 0 and 100.")
	}
	if c.tolCount >= 0 && c.hasTol {
		th.inspect("toleratedFailureCount", value.Int(int64(c.tolCount)))
	}
	if st.ToleratedFailurePercentage.Set || st.toleratedPctPath != nil {
		th.inspect("toleratedFailurePercentage", value.Float(c.tolPercent))
	}
	return nil
}

// fill starts iterations up to the concurrency limit.
func (c *container) fill() {
	th := c.owner
	for !c.over && c.next < len(c.items) && (c.maxConc <= 0 || c.running < c.maxConc) {
		i := c.next
		c.next++
		c.running++
		ch := &thread{x: th.x, m: c.st.processor, parent: c, index: i, last: c.last, vars: th.vars,
			item: &mapItem{index: i, value: c.items[i]}, silent: c.distributed || th.silent}
		c.children = append(c.children, ch)
		th.x.emit(ch, "MapIterationStarted", "mapIterationStartedEventDetails", c.iterDetails(i))
		input := c.items[i]
		if c.st.jsonata {
			v, f := c.itemInputJSONata(ch)
			if f != nil {
				c.over = true
				th.gen++
				th.fail(f)
				return
			}
			ch.begin(ch.m.start, v)
			continue
		}
		sel := c.st.itemSelector
		if sel == nil {
			sel = c.st.parameters
		}
		if sel != nil {
			e := th.env(c.input)
			e.context = ch.contextObjectFor(th)
			v, err := sel.eval(e)
			if err != nil {
				c.over = true
				th.gen++
				th.fail(th.payloadFailure(err, c.input))
				return
			}
			input = v
		}
		ch.begin(ch.m.start, input)
	}
}

// contextObjectFor returns the parent's context object with this
// iteration's Map.Item, for evaluating ItemSelector.
func (th *thread) contextObjectFor(owner *thread) any {
	c := owner.contextObject().(*value.Object)
	c.Set("Map", value.ObjectOf("Item", value.ObjectOf("Index", value.Int(int64(th.item.index)), "Value", th.item.value)))
	return c
}

func (c *container) iterDetails(i int) *value.Object {
	return value.ObjectOf("index", value.Int(int64(i)), "name", c.st.Name)
}

func (c *container) childSucceeded(ch *thread, output any) {
	if c.over {
		return
	}
	c.results[ch.index] = output
	c.done++
	c.running--
	x := c.owner.x
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
	if c.isMap {
		x.emit(ch, "MapIterationFailed", "mapIterationFailedEventDetails", c.iterDetails(ch.index))
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
		if c.hasTol {
			f = &Failure{Error: ErrExceedToleratedFailures, Cause: "The specified tolerated failure threshold was exceeded"}
		}
	}
	if !c.isMap && ch.cur != nil && ch.cur.Type == "Task" {
		// AWS aborts the Task state whose failure fails a Parallel
		// branch (a Fail state ends its branch and is not aborted); the
		// Parallel state's next event still follows the TaskFailed.
		x.emit(ch, "TaskStateAborted", "", nil)
	}
	c.over = true
	c.cancelAll()
	th := c.owner
	th.last = last
	th.run.ctr = nil
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

func (c *container) tolerates() bool {
	if c.tolCount >= 0 && c.failed <= c.tolCount {
		return true
	}
	if c.tolPercent > 0 && len(c.items) > 0 {
		pct := float64(c.failed) * 100 / float64(len(c.items))
		return pct <= c.tolPercent
	}
	return false
}

func (c *container) cancelAll() {
	c.over = true
	for _, ch := range c.children {
		if !ch.dead {
			ch.cancelWork()
		}
	}
}

func (c *container) succeed() {
	c.over = true
	th := c.owner
	x := th.x
	th.run.ctr = nil
	th.gen++
	switch {
	case c.distributed:
		th.last = c.runStarted
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
	th.containerResult(c, c.results)
}

// containerResult finishes a Parallel or Map state with its results.
func (th *thread) containerResult(c *container, results any) {
	if c.st.jsonata {
		th.completeJSONata(results)
		return
	}
	if c.st.resultSelector != nil {
		var f *Failure
		if results, f = th.evalPayload(c.st.resultSelector, results); f != nil {
			th.fail(f)
			return
		}
	}
	th.complete(results)
}

var _ = math.Inf
var _ = fmt.Sprint

func mapRunLabel(st *state) string {
	if st.Label != "" {
		return st.Label
	}
	return st.Name
}
