package engine

import (
	"context"
	"fmt"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/interp"
)

// Budget bounds the work of one evaluation. A JSONata evaluation that
// exceeds Time, Steps or Alloc is interrupted and its state fails with
// States.QueryEvaluationError naming the limit; a JSONPath path or an
// intrinsic function that exceeds ValueBytes or PathNodes fails its state
// with States.Runtime. Zero fields take the defaults; a negative Time,
// Steps or Alloc means no limit.
type Budget struct {
	// Time bounds the wall-clock time of one JSONata evaluation.
	Time time.Duration
	// Steps bounds the steps of one JSONata evaluation: function calls,
	// and the items a filter or a sort visits.
	Steps int64
	// Alloc bounds the bytes allocated while one JSONata evaluation runs:
	// a bound for runaway values (a string doubled thirty times), set far
	// above what an evaluation needs. Go has no per-goroutine figure, so
	// an evaluation is charged its share of the process's allocations:
	// each millisecond's, divided by the number of evaluations running
	// then (see watcher).
	Alloc int64
	// ValueBytes and PathNodes bound JSONPath and intrinsic functions
	// (interp.Budget).
	ValueBytes int
	PathNodes  int
}

// The default budget of a JSONata evaluation.
const (
	DefaultEvalTime  = 2 * time.Second
	DefaultEvalSteps = 10_000_000
	DefaultEvalAlloc = 128 << 20
)

func (b Budget) resolved() Budget {
	if b.Time == 0 {
		b.Time = DefaultEvalTime
	}
	if b.Steps == 0 {
		b.Steps = DefaultEvalSteps
	}
	if b.Alloc == 0 {
		b.Alloc = DefaultEvalAlloc
	}
	return b
}

// clockReading is a time the meter reported for an event during a step:
// the Call-th reading of the step (counting from 0), Offset after the
// step's time. Only readings that moved the time are kept.
type clockReading struct {
	Call   int
	Offset time.Duration
}

// interruptRecord is an evaluation that was interrupted during a step:
// the Eval-th of the step (counting from 0), and why.
type interruptRecord struct {
	Eval int
	interp.Interrupt
}

// meter is an execution's interp.Meter. Live, it reads the clock for each
// event and keeps the readings that moved the time by a millisecond or
// more, and it interrupts a JSONata evaluation that exceeds the budget or
// runs when a stop is requested; the driver records both with the step.
// Replaying, it reports the recorded readings and interruptions, and
// interrupts nothing else: what a live evaluation did not exceed, the same
// evaluation replayed does not either.
type meter struct {
	budget Budget
	clock  Clock // nil: the virtual clock, which evaluations do not move
	record bool
	// stop is the stop requested while the driver was busy (Driver.Stop).
	stop atomic.Pointer[interp.Interrupt]

	at    time.Time // the step's time
	last  time.Time // the last time reported
	nows  int       // readings in this step
	evals int       // evaluations begun in this step

	readings   []clockReading
	interrupts []interruptRecord

	replaying        bool
	scriptReadings   []clockReading
	scriptInterrupts []interruptRecord

	ev evalCtx // the evaluation running (evaluations do not nest)
}

func newMeter(b Budget, clock Clock, record bool) *meter {
	return &meter{budget: b.resolved(), clock: clock, record: record}
}

// step starts a step at time at.
func (m *meter) step(at time.Time) {
	m.at, m.last, m.nows, m.evals = at, at, 0, 0
}

// take returns what the step recorded; the slices are reused by the next
// step.
func (m *meter) take() ([]clockReading, []interruptRecord) {
	r, i := m.readings, m.interrupts
	m.readings, m.interrupts = m.readings[:0], m.interrupts[:0]
	return r, i
}

// replay makes the next step report what rec recorded, at its time at.
func (m *meter) replay(at time.Time, readings []clockReading, interrupts []interruptRecord) {
	m.step(at)
	m.replaying, m.scriptReadings, m.scriptInterrupts = true, readings, interrupts
}

// live ends replay.
func (m *meter) live() {
	m.replaying, m.scriptReadings, m.scriptInterrupts = false, nil, nil
}

// Now implements interp.Meter.
func (m *meter) Now() time.Time {
	k := m.nows
	m.nows++
	if m.replaying {
		if len(m.scriptReadings) > 0 && m.scriptReadings[0].Call == k {
			m.last = m.at.Add(m.scriptReadings[0].Offset)
			m.scriptReadings = m.scriptReadings[1:]
		}
		return m.last
	}
	if m.clock == nil {
		return time.Time{}
	}
	t := m.clock.Now()
	if t.Sub(m.last) < time.Millisecond {
		return m.last
	}
	m.last = t
	if m.record {
		m.readings = append(m.readings, clockReading{Call: k, Offset: t.Sub(m.at)})
	}
	return t
}

// Clockless implements interp.Clockless: with the virtual clock, and
// nothing to replay, Now reports nothing for the whole step.
func (m *meter) Clockless() bool { return m.clock == nil && !m.replaying }

// Begin implements interp.Meter.
func (m *meter) Begin() context.Context {
	c := &m.ev
	*c = evalCtx{Context: context.Background(), m: m}
	switch {
	case m.replaying:
		c.replay = true
		if len(m.scriptInterrupts) > 0 && m.scriptInterrupts[0].Eval == m.evals {
			in := m.scriptInterrupts[0].Interrupt
			m.scriptInterrupts = m.scriptInterrupts[1:]
			c.hit = &in
		}
	default:
		c.hit = m.stop.Load()
	}
	return c
}

// End implements interp.Meter.
func (m *meter) End() *interp.Interrupt {
	c := &m.ev
	if c.watched {
		watch.leave()
	}
	k := m.evals
	m.evals++
	if c.hit != nil && m.record && !m.replaying {
		m.interrupts = append(m.interrupts, interruptRecord{Eval: k, Interrupt: *c.hit})
	}
	return c.hit
}

// evalCtx is the context of one JSONata evaluation. gnata asks for Err
// at every function call and at every item of a filter, a sort or a range:
// Err counts those steps, and from the first one on also watches the
// time, the bytes allocated and stop requests.
type evalCtx struct {
	context.Context
	m       *meter
	hit     *interp.Interrupt
	replay  bool
	steps   int64
	watched bool
	start   time.Time
	seq     uint64 // the watcher's sample when the watch began
	base    uint64 // the watcher's share at the first sample after it
	hasBase bool
}

func (c *evalCtx) Err() error {
	if c.hit != nil {
		return c.hit
	}
	if c.replay {
		return nil
	}
	b := &c.m.budget
	c.steps++
	if b.Steps > 0 && c.steps > b.Steps {
		return c.interrupt(fmt.Sprintf("the evaluation exceeded its budget of %s steps.", thousands(b.Steps)))
	}
	if s := c.m.stop.Load(); s != nil {
		c.hit = s
		return s
	}
	if !c.watched {
		c.watched = true
		c.start = time.Now()
		c.seq = watch.enter()
		return nil
	}
	if seq := watch.seq.Load(); seq > c.seq {
		share := watch.share.Load()
		if !c.hasBase {
			c.base, c.hasBase = share, true
		} else if b.Alloc > 0 && share-c.base > uint64(b.Alloc) {
			return c.interrupt(fmt.Sprintf("the evaluation exceeded its budget of %s bytes allocated.", thousands(b.Alloc)))
		}
		if b.Time > 0 && watch.now.Load()-c.start.UnixNano() > int64(b.Time) {
			return c.interrupt(fmt.Sprintf("the evaluation exceeded its budget of %v of time.", b.Time))
		}
	}
	return nil
}

func (c *evalCtx) interrupt(cause string) error {
	c.hit = &interp.Interrupt{Cause: cause}
	return c.hit
}

// thousands formats n with commas: 10,000,000.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// watch samples the time and the bytes the process has allocated, every
// millisecond while evaluations that have taken a step run, so that an
// evaluation's checks cost a few atomic loads. It sleeps once none has run
// for watchIdle, so that a busy server does not wake it for every
// evaluation.
//
// The bytes a period allocated are shared out among the evaluations
// running at its end: share grows by the period's bytes divided by their
// number, and an evaluation is charged how much share grew while it ran.
// Charging each the whole process's allocations instead cut off a
// legitimate evaluation because others ran beside it: four evaluations of
// 40 MB each, side by side, were each charged about 160 MB. A lone runaway
// is charged all it allocates, as before; beside n quiet evaluations it is
// charged a 1/(n+1) part and so stopped later, at about (n+1) times the
// budget. Allocations of other work (API requests, commits) made while
// evaluations run are still shared out among them.
var watch watcher

type watcher struct {
	active atomic.Int64
	seq    atomic.Uint64 // samples taken
	now    atomic.Int64  // UnixNano of the last sample
	share  atomic.Uint64 // bytes allocated per running evaluation, summed over the samples
	asleep atomic.Bool

	once sync.Once
	wake chan struct{}
}

// watchPeriod is how often the watcher samples; after watchIdle periods
// without an evaluation it sleeps.
const (
	watchPeriod = time.Millisecond
	watchIdle   = 100
)

// enter registers a running evaluation and returns the sample count.
func (w *watcher) enter() uint64 {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		go w.run()
	})
	w.active.Add(1)
	if w.asleep.Load() && w.asleep.CompareAndSwap(true, false) {
		w.wake <- struct{}{}
	}
	return w.seq.Load()
}

func (w *watcher) leave() { w.active.Add(-1) }

func (w *watcher) run() {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	t := time.NewTicker(watchPeriod)
	defer t.Stop()
	idle := 0
	var last uint64 // the process's allocations at the last sample
	for {
		if w.active.Load() > 0 {
			idle = 0
		} else if idle++; idle > watchIdle {
			t.Stop()
			w.asleep.Store(true)
			if w.active.Load() == 0 || !w.asleep.CompareAndSwap(true, false) {
				// Asleep: an evaluation that enters wakes it. (If one
				// entered meanwhile and claimed the wake, its token is
				// in the channel already.)
				<-w.wake
			}
			idle = 0
			t.Reset(watchPeriod)
		}
		metrics.Read(sample)
		allocs := sample[0].Value.Uint64()
		if n := w.active.Load(); n > 0 && last > 0 {
			w.share.Add((allocs - last) / uint64(n))
		}
		last = allocs
		w.now.Store(time.Now().UnixNano())
		w.seq.Add(1)
		<-t.C
	}
}
