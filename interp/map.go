package interp

import (
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/value"
)

// runMap runs a Map state: an iteration of its ItemProcessor per item, at
// most MaxConcurrency at a time, whose results make the state's result.
func (th *thread) runMap() {
	ev := th.cur.ev
	th.gen++
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	ev.inspectInput(th, in)
	th.run.read, th.run.write = nil, nil // a retry reads and writes again
	if th.cur.Reader != nil {
		if _, given := th.readerItems(); !given {
			th.startRead(in)
			return
		}
	}
	th.mapOver(in)
}

// mapOver runs a Map state over its items, once its effective input is
// known (TestState's mapItemReaderData stands for an ItemReader's read).
func (th *thread) mapOver(in any) {
	ev := th.cur.ev
	arr, f := ev.mapItems(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	c := &container{owner: th, st: th.cur, isMap: true, input: in, items: arr}
	if f := ev.mapLimits(th, c, in); f != nil {
		th.fail(f)
		return
	}
	th.x.emit(th, "MapStateStarted", "mapStateStartedEventDetails", value.ObjectOf("length", value.Int(int64(len(arr)))))
	if f := ev.mapTolerance(th, c, in); f != nil {
		th.fail(f)
		return
	}
	th.mapStart(c, in)
}

// startMapRun starts the Map Run of Distributed Map container c: its ARN
// and MapRunStarted event.
func (th *thread) startMapRun(c *container) {
	c.distributed = true
	arn := th.x.scope().MapRun(th.x.info.StateMachineName, mapRunLabel(c.st), uuid.FromSource(th.x.rand))
	th.x.emit(th, "MapRunStarted", "mapRunStartedEventDetails", value.ObjectOf("mapRunArn", arn))
	c.runArn = arn
	c.runStarted = th.last
	c.startMapRun()
}

// mapStart starts the iterations of container c over its items (batched
// as its ItemBatcher says): as child executions of a Map Run in a
// Distributed Map, whose Map Run an ItemReader has already started.
func (th *thread) mapStart(c *container, in any) {
	if th.cur.Batcher != nil {
		if f := c.batch(in); f != nil {
			if c.run != nil {
				c.failMap(f, th.last)
				return
			}
			th.fail(f)
			return
		}
	}
	if c.st.ProcessorMode == "DISTRIBUTED" {
		// Iterations run as child executions: their events are not part of
		// this history.
		if c.run == nil {
			th.startMapRun(c)
		}
		c.countItems()
		if c.st.Writer != nil {
			c.iters = make([]iterRecord, len(c.items))
		}
	}
	c.last = th.last
	c.results = make([]any, len(c.items))
	th.run.ctr = c
	if th.mocked(c) {
		return
	}
	if len(c.items) == 0 {
		c.succeed()
		return
	}
	c.fill()
}

// fill starts iterations up to the concurrency limit.
func (c *container) fill() {
	th := c.owner
	for !c.over && len(c.todo) > 0 && (c.maxConc <= 0 || c.running < c.maxConc) {
		ch := c.todo[0]
		c.todo = c.todo[1:]
		c.restart(ch)
	}
	for !c.over && len(c.todo) == 0 && c.next < len(c.items) && (c.maxConc <= 0 || c.running < c.maxConc) {
		i := c.next
		c.next++
		c.running++
		ch := &thread{x: th.x, m: c.st.processor, parent: c, index: i, last: c.last, vars: th.vars,
			item: &mapItem{index: i, value: c.items[i]}, silent: c.distributed || th.silent, child: th.child,
			express: th.express || c.distributed && c.st.ExecutionType == "EXPRESS"}
		c.children = append(c.children, ch)
		if !c.distributed {
			th.x.emit(ch, "MapIterationStarted", "mapIterationStartedEventDetails", c.iterDetails(i))
		}
		input, f := c.items[i], (*Failure)(nil)
		if !c.batched {
			input, f = c.st.ev.itemInput(th, c, ch)
		}
		if c.distributed && f == nil {
			if th.x.info.MapRuns || c.iters != nil {
				c.startChild(ch, input)
			} else {
				c.setStatus(i, Running)
			}
			c.startTimeout(ch)
		}
		if c.iters != nil {
			c.iters[i] = iterRecord{input: input, start: th.x.now}
		}
		if f != nil {
			c.over = true
			th.gen++
			th.fail(f)
			return
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
	return value.ObjectOf("index", value.Int(int64(i)), "name", c.st.name)
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

func mapRunLabel(st *state) string {
	if st.Label != "" {
		return st.Label
	}
	return st.Name
}

// batching is what a Distributed Map's ItemBatcher evaluates to: the
// limits of a batch (0: none) and the BatchInput.
type batching struct {
	maxItems, maxBytes int
	input              any
	hasInput           bool
}

// batch groups the Map's items as its ItemBatcher says: ItemSelector (or
// Parameters) is applied to each item, and each iteration then receives
// {"BatchInput": …, "Items": [...]} with at most maxItems items and at
// most maxBytes bytes of JSON. An item too large for a batch of its own
// fails the state rather than being dropped or sent over the limit.
func (c *container) batch(in any) *Failure {
	th := c.owner
	bt, f := c.st.ev.mapBatcher(th, c, in)
	if f != nil {
		return f
	}
	limit := bt.maxBytes
	if limit <= 0 {
		limit = maxPayload
	}
	empty := c.batchOf(bt, nil)
	base := value.EncodedLen(empty, limit+1)
	var batches []any
	var weights []int64
	var cur []any
	size := base
	for j := range c.items {
		tmp := &thread{x: th.x, index: j, item: &mapItem{index: j, value: c.items[j]}}
		v, f := c.st.ev.itemInput(th, c, tmp)
		if f != nil {
			return f
		}
		n := value.EncodedLen(v, limit+1)
		if base+n > limit {
			return runtimeFailure(c.st.Name, th.run.enteredID, "The item at index %d does not fit in a batch of at most %d bytes.", j, limit)
		}
		sep := 0
		if len(cur) > 0 {
			sep = 1
		}
		if len(cur) > 0 && (bt.maxItems > 0 && len(cur) >= bt.maxItems || size+sep+n > limit) {
			batches = append(batches, c.batchOf(bt, cur))
			weights = append(weights, int64(len(cur)))
			cur, size, sep = nil, base, 0
		}
		cur = append(cur, v)
		size += sep + n
	}
	if len(cur) > 0 {
		batches = append(batches, c.batchOf(bt, cur))
		weights = append(weights, int64(len(cur)))
	}
	c.items, c.batched, c.weights = batches, true, weights
	return nil
}

func (c *container) batchOf(bt batching, items []any) *value.Object {
	if items == nil {
		items = []any{}
	}
	if bt.hasInput {
		return value.ObjectOf("BatchInput", bt.input, "Items", items)
	}
	return value.ObjectOf("Items", items)
}
