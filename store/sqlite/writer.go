package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/batch"
	"github.com/stepd/stepd/store/internal/codec"

	sqlite "modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// maxBatch is the most write requests committed in one transaction.
const maxBatch = 1024

// errClosed is returned by writes after Close.
var errClosed = errors.New("sqlite store: closed")

// pendingStep is a step waiting in the writer for flush: its row's values,
// the input and events as ranges of the writer's arena.
type pendingStep struct {
	key, seq, at, first, last, wake int64
	input                           int // arena[input:events] is the input, -1 for none
	events, end                     int // arena[events:end] are the packed events
	// The summary columns, of a step in ending only.
	status, output, errName, cause string
	stopped                        int64
}

// runRow is the placeholder list of one row of a running step: the
// summary columns hold what a running step's always do.
const runRow = `(?,?,?,?,?,?,?,'RUNNING','','','',0,?)`

// fullRow is the placeholder list of one row of any step.
const fullRow = `(?,?,?,?,?,?,?,?,?,?,?,?,?)`

// runBatch is the most rows one insert of running steps holds; flush
// splits the pending steps into statements of runBatch, then of powers of
// two below it.
const runBatch = 64

type execState struct {
	key    int64
	smARN  string // the state machine's ARN (for recent)
	next   int64  // the Seq the next step must have
	last   int64  // the id of the last event committed, 0 for none
	status string // the executions row's status
	dirty  bool   // the row has an output, error, cause or stop time
	// written, when set, is a step whose summary the executions row
	// already holds (inserted with it): insertStep updates nothing for it.
	written *store.Step
}

// request is one write: fn runs inside the batch transaction.
type request struct {
	fn  func(tx *sql.Tx) error
	err chan error
	// after, when set, runs on the writer once the request's transaction
	// has ended, committed or not, before the caller is answered.
	after func()
}

// refusal is an error of a request that wrote nothing: the transaction
// goes on with the other requests of the batch.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

func (r *refusal) Unwrap() error { return r.err }

func refuse(err error) error { return &refusal{err} }

// writer commits queued requests in batches until Close, then commits what
// is still queued.
func (s *Store) writer() {
	defer close(s.closed)
	batch.Run(s.reqs, s.done, maxBatch, s.commit)
}

// commit runs a batch in one transaction and answers its callers. When a
// request fails other than by a refusal, the transaction is rolled back
// and every request of the batch is run again in a transaction of its
// own.
func (s *Store) commit(batch []*request) {
	if !s.commitAll(batch) {
		for _, r := range batch {
			s.commitAll([]*request{r})
		}
	}
}

// commitAll commits the batch in one transaction and answers its callers;
// it returns false, answering nobody, when a request of a batch of several
// failed and the transaction was rolled back.
func (s *Store) commitAll(batch []*request) bool {
	t0 := time.Now()
	tx, err := s.w.BeginTx(context.Background(), nil)
	defer func() { s.txOf, s.txStmts = nil, nil }()
	s.changes, s.newDefs = s.changes[:0], s.newDefs[:0]
	s.pending, s.ending, s.arena = s.pending[:0], s.ending[:0], s.arena[:0]
	if cap(s.arena) > 16<<20 {
		s.arena = make([]byte, 0, 1<<16) // a batch of large steps had grown it
	}
	if err != nil {
		for _, r := range batch {
			if r.after != nil {
				r.after()
			}
			r.err <- fmt.Errorf("begin: %w", err)
		}
		return true
	}
	errs := make([]error, len(batch))
	for i, r := range batch {
		err := r.fn(tx)
		if err == nil {
			continue
		}
		var ref *refusal // errors.As's target escapes: made only for an error
		if errors.As(err, &ref) {
			errs[i] = ref.err
			continue
		}
		_ = tx.Rollback()
		s.forget()
		if len(batch) > 1 {
			return false
		}
		if r.after != nil {
			r.after()
		}
		r.err <- err
		return true
	}
	if err := s.flush(tx); err != nil {
		_ = tx.Rollback()
		s.forget()
		if len(batch) > 1 {
			return false
		}
		r := batch[0]
		if r.after != nil {
			r.after()
		}
		r.err <- fmt.Errorf("insert steps: %w", err)
		return true
	}
	if err := tx.Commit(); err == nil {
		s.commits.Add(1)
		s.recent.apply(s.changes) // before the callers are answered
		if fn := s.onCommit.Load(); fn != nil {
			(*fn)(len(batch), time.Since(t0))
		}
	} else {
		s.forget()
		err = fmt.Errorf("commit: %w", err)
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	for i, r := range batch {
		if r.after != nil {
			r.after()
		}
		r.err <- errs[i]
	}
	return true
}

// forget drops what the writer knows of the rows of a transaction that
// rolled back: the cached executions, and the definitions it inserted.
func (s *Store) forget() {
	clear(s.cache)
	for _, h := range s.newDefs {
		delete(s.defs, h)
	}
	s.newDefs = s.newDefs[:0]
}

// write queues fn and waits until its batch is committed. When ctx ends
// first, the write may still commit. An error that passes by itself (a
// full disk: see unavailable) is store.ErrUnavailable.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.writeThen(ctx, fn, nil)
}

// writeThen is write with a function that the writer runs once the
// transaction of fn has ended (see request.after).
func (s *Store) writeThen(ctx context.Context, fn func(tx *sql.Tx) error, after func()) error {
	r := &request{fn: fn, err: make(chan error, 1), after: after}
	return unavailable(batch.Submit(ctx, s.reqs, r, r.err, s.done, s.closed, errClosed))
}

// isDuplicate reports whether err is a violation of a primary key or
// unique constraint. SQLite undoes the failing statement only, so a
// request whose first statement fails so has written nothing.
func isDuplicate(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// insertStep writes a step — one row holding its events — and applies its
// summary to the execution c.
func (s *Store) insertStep(tx *sql.Tx, c *execState, st *store.Step) error {
	// A step without events records the empty range after the last event,
	// so that the bounds of the rows grow with Seq (see Events).
	first, last := c.last+1, c.last
	if n := len(st.Events); n > 0 {
		first, last = st.Events[0].ID, st.Events[n-1].ID
	}
	// The row waits for flush, its input and events in the arena.
	p := pendingStep{key: c.key, seq: st.Seq, at: codec.Nanos(st.At), first: first, last: last, wake: codec.Nanos(st.Wake), input: -1}
	if st.Input != nil {
		p.input = len(s.arena)
		s.arena = append(s.arena, st.Input...)
	}
	p.events = len(s.arena)
	s.arena = codec.AppendEvents(s.arena, st.Events)
	p.end = len(s.arena)
	if st.Status == "RUNNING" && st.Output == "" && st.Error == "" && st.Cause == "" && st.Stopped.IsZero() && c.status == "RUNNING" && !c.dirty {
		// The common step: the execution runs on, its summary unchanged.
		s.pending = append(s.pending, p)
		c.next, c.last = st.Seq+1, last
		return nil
	}
	p.status, p.output, p.errName, p.cause, p.stopped = st.Status, st.Output, st.Error, st.Cause, codec.Nanos(st.Stopped)
	s.ending = append(s.ending, p)
	status := c.status
	if st.Status != "" {
		status = st.Status
	}
	dirty := st.Output != "" || st.Error != "" || st.Cause != "" || !st.Stopped.IsZero()
	if status != c.status || dirty || c.dirty {
		if c.written == st {
			c.written = nil
		} else if _, err := s.stmt(tx, s.updExec).Exec(status, st.Output, st.Error, st.Cause, codec.Nanos(st.Stopped), c.key); err != nil {
			return err
		}
		s.changes = append(s.changes, change{kind: updated, s: summary{key: c.key, arn: st.ExecutionARN, smARN: c.smARN, status: status, stopped: codec.Nanos(st.Stopped)},
			output: st.Output, errName: st.Error, cause: st.Cause})
	}
	c.next, c.last, c.status, c.dirty = st.Seq+1, last, status, dirty
	return nil
}

// flush inserts the pending and ending steps in tx: runBatch rows a
// statement, and the rest in statements of fewer rows, each a power of
// two.
func (s *Store) flush(tx *sql.Tx) error {
	for _, g := range []struct {
		rows  []pendingStep
		stmts map[int]*sql.Stmt
		full  bool
	}{{s.pending, s.runStmts, false}, {s.ending, s.fullStmts, true}} {
		for rows := g.rows; len(rows) > 0; {
			n := runBatch
			for n > len(rows) {
				n /= 2
			}
			args := s.args[:0]
			for _, p := range rows[:n] {
				var input []byte
				if p.input >= 0 {
					input = s.arena[p.input:p.events]
				}
				events := s.arena[p.events:p.end:p.end]
				if g.full {
					args = append(args, p.key, p.seq, p.at, input, p.first, p.last, events, p.status, p.output, p.errName, p.cause, p.stopped, p.wake)
				} else {
					args = append(args, p.key, p.seq, p.at, input, p.first, p.last, events, p.wake)
				}
			}
			s.args = args
			if _, err := s.stmt(tx, g.stmts[n]).Exec(args...); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	s.pending, s.ending = s.pending[:0], s.ending[:0]
	clear(s.args)
	return nil
}

// prepareRun prepares the inserts of steps on the writer's connection, for
// each power of two up to runBatch rows: of running steps (runStmts) and
// of any (fullStmts).
func (s *Store) prepareRun(ctx context.Context) error {
	for n := 1; n <= runBatch; n *= 2 {
		for _, v := range []struct {
			stmts map[int]*sql.Stmt
			row   string
		}{{s.runStmts, runRow}, {s.fullStmts, fullRow}} {
			// OR ROLLBACK: a failing row ends the transaction, which the
			// writer rolls back and replays anyway, so SQLite keeps no
			// statement journal to undo the statement's other rows.
			q := `INSERT OR ROLLBACK INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped, wake) VALUES ` +
				strings.TrimSuffix(strings.Repeat(v.row+",", n), ",")
			st, err := s.w.PrepareContext(ctx, q)
			if err != nil {
				return fmt.Errorf("prepare the insert of %d steps: %w", n, err)
			}
			v.stmts[n] = st
		}
	}
	return nil
}

// stmt returns the writer's prepared statement p bound to the batch
// transaction tx, made once per transaction.
func (s *Store) stmt(tx *sql.Tx, p *sql.Stmt) *sql.Stmt {
	if s.txOf != tx {
		s.txOf, s.txStmts = tx, map[*sql.Stmt]*sql.Stmt{}
	}
	ts := s.txStmts[p]
	if ts == nil {
		ts = tx.Stmt(p)
		s.txStmts[p] = ts
	}
	return ts
}

// execState returns an execution's row key, next step number and summary.
func (s *Store) execState(tx *sql.Tx, arn string) (*execState, error) {
	if c := s.cache[arn]; c != nil {
		return c, nil
	}
	// The query reads the execution's steps: those pending go in first.
	if err := s.flush(tx); err != nil {
		return nil, err
	}
	c := &execState{}
	if err := s.stmt(tx, s.selExec).QueryRow(arn).Scan(&c.key, &c.next, &c.last, &c.status, &c.dirty, &c.smARN); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, refuse(fmt.Errorf("execution %s: %w", arn, store.ErrNotFound))
		}
		return nil, err
	}
	c.next++
	s.remember(arn, c)
	return c, nil
}

// remember keeps an execution's state in the writer's cache.
func (s *Store) remember(arn string, c *execState) {
	if len(s.cache) >= 100000 {
		clear(s.cache)
	}
	s.cache[arn] = c
}

// unrefused turns a refusal into a plain error, for a request that has
// already written part of its change.
func unrefused(err error) error {
	if err == nil {
		return nil
	}
	var ref *refusal
	if errors.As(err, &ref) {
		return ref.err
	}
	return err
}
