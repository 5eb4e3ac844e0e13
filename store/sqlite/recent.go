package sqlite

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// The newest executions of the state machines listed lately are kept in
// memory, so that ListExecutions reads no SQLite page for them: a page of
// 100 executions read from the database cost about 0.6 ms of CPU (the
// index, a row lookup per execution, every column), which made lists the
// largest cost of the API under a mixed load.
//
// The writer keeps the window true: after a transaction commits, and
// before it answers the callers of that transaction, it applies what the
// transaction did to the executions rows (a created execution, a new
// status or stop time, executions deleted), so a list from memory shows
// exactly what a query would have read after the commit. A window is
// filled by one query the first time its state machine is listed; the
// changes the writer applies meanwhile are kept and replayed over what
// the query read, so none is lost whichever came first.
const (
	// recentWindow is how many executions a window is filled with, and
	// how many it keeps when it has grown to twice as many.
	recentWindow = 1000
	// recentMachines is how many state machines have a window; past it,
	// every window is dropped (and filled again when listed).
	recentMachines = 256
)

// summary is an execution as a list shows it.
type summary struct {
	key              int64 // the row key (executions.seq)
	arn, name        string
	smARN, smName    string
	typ, status      string
	started, stopped int64 // codec.Nanos
}

// change is what a committed write did to an executions row.
type change struct {
	kind changeKind
	s    summary // created: the whole row; updated: key, arn, smARN, status, stopped
	// e is the whole row of a created execution; output, errName and
	// cause are an update's.
	e                      *store.Execution
	output, errName, cause string
}

type changeKind uint8

const (
	created changeKind = iota
	updated
	deletedAll // executions were deleted: every window is dropped
)

// window is the newest executions of one state machine, by key.
type window struct {
	items []summary // ascending key
	// complete: no execution of the state machine is older than items[0].
	complete bool
	// loading: the window is being filled; changes wait in log.
	loading bool
	log     []change
}

// recent is the windows of the state machines listed lately, and the
// rows of the executions created lately.
type recent struct {
	mu  sync.Mutex
	sms map[string]*window
	// rows are the executions created lately, by ARN, as committed (a
	// DescribeExecution, or a caller waiting for an execution's end,
	// reads no page for them); order is their ARNs oldest first, and
	// size what their texts take, both kept within recentRows and
	// recentBytes.
	rows  map[string]*store.Execution
	order []string
	size  int
}

// The most executions, and bytes of their texts, that recent keeps rows
// of; a row larger than recentRowMax is not kept.
const (
	recentRows   = 10000
	recentBytes  = 32 << 20
	recentRowMax = 1 << 20
)

// rowSize is what an execution row's texts take.
func rowSize(e *store.Execution) int {
	return len(e.ARN) + len(e.Name) + len(e.StateMachineARN) + len(e.StateMachineName) + len(e.Definition) + len(e.RoleARN) +
		len(e.TestCase) + len(e.Input) + len(e.Output) + len(e.Error) + len(e.Cause)
}

// execution returns a copy of an execution's row when recent has it.
func (r *recent) execution(arn string) (*store.Execution, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.rows[arn]
	if e == nil {
		return nil, false
	}
	c := *e
	return &c, true
}

// keepRow applies a change to the rows.
func (r *recent) keepRow(c change) {
	switch c.kind {
	case created:
		e := *c.e
		// As read back from the database: times in nanoseconds.
		e.Started, e.Stopped = codec.FromNanos(codec.Nanos(e.Started)), codec.FromNanos(codec.Nanos(e.Stopped))
		n := rowSize(&e)
		if n > recentRowMax {
			return
		}
		if r.rows == nil {
			r.rows = map[string]*store.Execution{}
		}
		if old := r.rows[e.ARN]; old != nil {
			r.size -= rowSize(old)
		} else {
			r.order = append(r.order, e.ARN)
		}
		r.rows[e.ARN] = &e
		r.size += n
		for len(r.order) > recentRows || r.size > recentBytes {
			if old := r.rows[r.order[0]]; old != nil {
				r.size -= rowSize(old)
				delete(r.rows, r.order[0])
			}
			r.order = r.order[1:]
		}
	case updated:
		e := r.rows[c.s.arn]
		if e == nil {
			return
		}
		n := rowSize(e)
		u := *e
		u.Status, u.Output, u.Error, u.Cause, u.Stopped = c.s.status, c.output, c.errName, c.cause, codec.FromNanos(c.s.stopped)
		if m := rowSize(&u); m > recentRowMax {
			delete(r.rows, u.ARN) // its place in order goes when it comes first
			r.size -= n
		} else {
			r.rows[u.ARN] = &u
			r.size += m - n
		}
	case deletedAll:
		r.rows, r.order, r.size = nil, nil, 0
	}
}

// apply applies the changes of a committed transaction.
func (r *recent) apply(changes []change) {
	if len(changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range changes {
		r.keepRow(c)
		if c.kind == deletedAll {
			r.sms = nil
			continue
		}
		w := r.sms[c.s.smARN]
		if w == nil {
			continue
		}
		if w.loading {
			w.log = append(w.log, c)
			continue
		}
		w.apply(c)
	}
}

// apply applies one change to a filled window.
func (w *window) apply(c change) {
	i, found := slices.BinarySearchFunc(w.items, c.s.key, func(s summary, key int64) int { return cmp.Compare(s.key, key) })
	switch c.kind {
	case created:
		if found {
			w.items[i] = c.s
			return
		}
		if i == 0 && !w.complete && len(w.items) > 0 {
			return // older than the window
		}
		w.items = slices.Insert(w.items, i, c.s)
		if len(w.items) >= 2*recentWindow {
			w.items = slices.Delete(w.items, 0, len(w.items)-recentWindow)
			w.complete = false
		}
	case updated:
		if found {
			w.items[i].status, w.items[i].stopped = c.s.status, c.s.stopped
		}
	}
}

// list returns up to n executions of smARN with the status (any when
// empty) and a key below before, newest first, from the window; ok is
// false when the window cannot tell (it is being filled, or older
// executions than it holds may match). fill is called, outside the lock,
// to fill a window that does not exist yet.
func (r *recent) list(ctx context.Context, smARN, status string, before int64, n int, fill func(ctx context.Context, smARN string) ([]summary, bool, error)) ([]*store.Execution, []int64, bool) {
	r.mu.Lock()
	w := r.sms[smARN]
	if w == nil {
		if len(r.sms) >= recentMachines {
			r.sms = nil
		}
		if r.sms == nil {
			r.sms = map[string]*window{}
		}
		w = &window{loading: true}
		r.sms[smARN] = w
		r.mu.Unlock()
		items, complete, err := fill(ctx, smARN)
		r.mu.Lock()
		if r.sms[smARN] != w {
			// Dropped meanwhile (a deletion, too many state machines).
			r.mu.Unlock()
			return nil, nil, false
		}
		if err != nil {
			delete(r.sms, smARN)
			r.mu.Unlock()
			return nil, nil, false
		}
		w.items, w.complete, w.loading = items, complete, false
		for _, c := range w.log {
			w.apply(c)
		}
		w.log = nil
	}
	defer r.mu.Unlock()
	if w.loading {
		return nil, nil, false
	}
	i, _ := slices.BinarySearchFunc(w.items, before, func(s summary, key int64) int { return cmp.Compare(s.key, key) })
	// The executions listed are made in one slab.
	slab := make([]store.Execution, 0, min(n, i))
	keys := make([]int64, 0, min(n, i))
	for i--; i >= 0 && len(slab) < n; i-- {
		s := &w.items[i]
		if status != "" && s.status != status {
			continue
		}
		slab = append(slab, store.Execution{ARN: s.arn, Name: s.name, StateMachineARN: s.smARN, StateMachineName: s.smName, Type: s.typ,
			Status: s.status, Started: codec.FromNanos(s.started), Stopped: codec.FromNanos(s.stopped)})
		keys = append(keys, s.key)
	}
	out := make([]*store.Execution, len(slab))
	for j := range slab {
		out[j] = &slab[j]
	}
	if len(slab) < n && !w.complete {
		return nil, nil, false // older executions may match
	}
	return out, keys, true
}
