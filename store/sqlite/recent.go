package sqlite

import (
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
	s    summary // created: the whole row; updated: key, smARN, status, stopped
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

// recent is the windows of the state machines listed lately.
type recent struct {
	mu  sync.Mutex
	sms map[string]*window
}

// apply applies the changes of a committed transaction.
func (r *recent) apply(changes []change) {
	if len(changes) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range changes {
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
	i, found := slices.BinarySearchFunc(w.items, c.s.key, func(s summary, key int64) int { return cmpInt(s.key, key) })
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

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
	var out []*store.Execution
	var keys []int64
	i, _ := slices.BinarySearchFunc(w.items, before, func(s summary, key int64) int { return cmpInt(s.key, key) })
	for i--; i >= 0 && len(out) < n; i-- {
		s := &w.items[i]
		if status != "" && s.status != status {
			continue
		}
		out = append(out, &store.Execution{ARN: s.arn, Name: s.name, StateMachineARN: s.smARN, StateMachineName: s.smName, Type: s.typ,
			Status: s.status, Started: codec.FromNanos(s.started), Stopped: codec.FromNanos(s.stopped)})
		keys = append(keys, s.key)
	}
	if len(out) < n && !w.complete {
		return nil, nil, false // older executions may match
	}
	return out, keys, true
}
