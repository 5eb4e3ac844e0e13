package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/batch"
	"github.com/stepd/stepd/store/internal/codec"
)

// maxBatch is the most write requests committed in one transaction.
const maxBatch = 1024

// maxCache is the most executions the writers' cache holds.
const maxCache = 100000

// writers is the number of writer goroutines, each with a connection: one
// prepares and sends its batch while another's commits.
const writers = 2

// errClosed is returned by writes after Close.
var errClosed = errors.New("postgres store: closed")

// request is one write. A step request (step set) joins the batch's
// multi-row insert; any other queues its statements with queue, whose
// callbacks set refused when it wrote nothing.
type request struct {
	step    *store.Step
	queue   func(b *pgx.Batch, r *request)
	refused error
	err     chan error
	// landed is set on a step refused because its Seq is taken: the step
	// there may be this one, committed by a transaction whose answer was
	// lost (see stepLanded).
	landed *execState
	// created is set by a CreateExecution that inserted its execution
	// step0ARN: the cache knows it once the transaction commits.
	created  *execState
	step0ARN string
	// member is the membership the request was made under: the writer
	// refuses it (errFenced) once the node has rejoined under another,
	// and an execution it creates is owned by member's node.
	member *membership
}

// A wconn is a writer's connection, made again after it broke (a database
// that restarted, a network that failed).
type wconn struct {
	c   *pgx.Conn
	cfg *pgx.ConnConfig
}

// writeTimeout bounds a writer's transaction, so that a database that
// stopped answering (a frozen host) fails the batch, and the connection,
// instead of holding the writer; the drivers retry their steps.
const writeTimeout = 30 * time.Second

// ready makes the connection again if it broke.
func (w *wconn) ready() error {
	if w.c != nil && !w.c.IsClosed() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, w.cfg)
	if err != nil {
		return fmt.Errorf("postgres store: the writer cannot reach the database: %w: %w", err, store.ErrUnavailable)
	}
	w.c = c
	return nil
}

// Commits returns the number of transactions the writer has committed.
func (s *Store) Commits() int64 { return s.commits.Load() }

// writer commits queued requests in batches until Close, then commits what
// is still queued.
func (s *Store) writer(w *wconn) {
	batch.Run(s.reqs, s.done, maxBatch, func(b []*request) { s.commit(w, b) })
}

// commit runs a batch and answers its callers. A batch holds at most one
// step of an execution per transaction (callers wait for their step before
// they send the next, so two come only from two writers of one execution):
// the others go in the transactions after it.
func (s *Store) commit(w *wconn, batch []*request) {
	if err := w.ready(); err != nil {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	for len(batch) > 0 {
		var now, later []*request
		seen := map[string]bool{}
		for _, r := range batch {
			if r.step != nil {
				if seen[r.step.ExecutionARN] {
					later = append(later, r)
					continue
				}
				seen[r.step.ExecutionARN] = true
			}
			now = append(now, r)
		}
		s.commitOrSplit(w, now)
		batch = later
	}
}

// commitOrSplit runs a batch in one transaction and answers its callers.
// When the transaction fails other than by refusals, every request of the
// batch is run again in a transaction of its own.
func (s *Store) commitOrSplit(w *wconn, batch []*request) {
	err := s.commitAll(w, batch)
	if errors.Is(err, errFenced) {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	if err == nil {
		for _, r := range batch {
			r.err <- r.refused
		}
		return
	}
	if len(batch) == 1 {
		batch[0].err <- err
		return
	}
	for _, r := range batch {
		r.refused = nil
		if err := s.commitAll(w, []*request{r}); err != nil {
			r.err <- err
		} else {
			r.err <- r.refused
		}
	}
}

// execState is what the writers know of an execution they wrote: its row
// id, the Seq its next step must have, the id of its last event and its
// summary, so that a step is one row inserted, without reading the
// execution first. The database has the last word: a step the cache
// expects is still refused when its (exec, seq) is taken, and a step the
// cache does not expect is checked against the database.
type execState struct {
	id     int64
	next   int64
	last   int64
	status string
	dirty  bool // the row has an output, error, cause or stop time
}

// insSteps inserts steps, at most one per execution, from arrays, each
// only when its (exec, seq) is free, and updates the summary of the
// executions listed in $13 whose step it inserted. It returns the
// executions whose step it inserted.
const insSteps = `
WITH ins AS (
	INSERT INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped, wake)
	SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::bytea[], $5::int8[], $6::int8[], $7::bytea[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::int8[], $14::int8[])
	ON CONFLICT DO NOTHING RETURNING exec, status, output, error, cause, stopped
), upd AS (
	UPDATE executions e SET status = COALESCE(NULLIF(ins.status, ''), e.status),
		output = ins.output, error = ins.error, cause = ins.cause, stopped = ins.stopped
	FROM ins WHERE ins.exec = ANY($13::int8[]) AND e.id = ins.exec
)
SELECT exec FROM ins`

// selStates reads the state of executions the cache does not know.
const selStates = `
SELECT e.arn, e.id, COALESCE(l.seq, -1), COALESCE(l.last_event, 0), e.status,
	e.output <> '' OR e.error <> '' OR e.cause <> '' OR e.stopped <> 0
FROM executions e LEFT JOIN LATERAL (SELECT seq, last_event FROM step_log WHERE exec = e.id ORDER BY seq DESC LIMIT 1) l ON true
WHERE e.arn = ANY($1)`

// stepArrays are the columns of insSteps, and what the cache will know
// of each execution once they commit.
type stepArrays struct {
	exec, seq, at, first, last, stop []int64
	wake                             []int64
	input, events                    [][]byte
	status, output, errs, cause      []string
	update                           []int64
	reqs                             []*request
	after                            []execState
}

// add adds the step of r, the next of execution c.
func (a *stepArrays) add(r *request, c *execState) {
	after, changed := a.row(r.step, c)
	if changed {
		a.update = append(a.update, c.id)
	}
	a.exec = append(a.exec, c.id)
	a.reqs = append(a.reqs, r)
	a.after = append(a.after, after)
}

// row adds the columns of st, the next step of execution c, and returns
// what c becomes once st is inserted and whether st changes the summary
// of the execution's row.
func (a *stepArrays) row(st *store.Step, c *execState) (after execState, changed bool) {
	first, last := c.last+1, c.last // no events: the empty range after the previous step's
	if n := len(st.Events); n > 0 {
		first, last = st.Events[0].ID, st.Events[n-1].ID
	}
	status := c.status
	if st.Status != "" {
		status = st.Status
	}
	dirty := st.Output != "" || st.Error != "" || st.Cause != "" || !st.Stopped.IsZero()
	a.seq = append(a.seq, st.Seq)
	a.at = append(a.at, codec.Nanos(st.At))
	a.input = append(a.input, st.Input)
	a.first = append(a.first, first)
	a.last = append(a.last, last)
	a.events = append(a.events, codec.AppendEvents([]byte{}, st.Events))
	a.status = append(a.status, st.Status)
	a.output = append(a.output, st.Output)
	a.errs = append(a.errs, toText(st.Error))
	a.cause = append(a.cause, toText(st.Cause))
	a.stop = append(a.stop, codec.Nanos(st.Stopped))
	a.wake = append(a.wake, codec.Nanos(st.Wake))
	return execState{id: c.id, next: st.Seq + 1, last: last, status: status, dirty: dirty}, status != c.status || dirty || c.dirty
}

// cached returns the cache's state of an execution, or nil.
func (s *Store) cached(arn string) *execState {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if c, ok := s.cache[arn]; ok {
		return &c
	}
	return nil
}

// remember keeps an execution's state in the cache; the state of an
// execution that has ended is forgotten.
func (s *Store) remember(arn string, c execState) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if c.status != "RUNNING" {
		delete(s.cache, arn)
		return
	}
	if len(s.cache) >= maxCache {
		clear(s.cache)
	}
	s.cache[arn] = c
}

// forget drops executions from the cache.
func (s *Store) forget(arns ...string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	for _, arn := range arns {
		delete(s.cache, arn)
	}
}

// fence is the first statement of every writer's transaction. It locks
// the node's row (holdLease: FOR KEY SHARE) until the commit, which proves
// the lease: a
// node claiming this one's executions deletes the row, so it waits for
// this commit, and this node commits nothing after it. Without the row
// (or with its lease lapsed) it divides by zero, which fails the whole
// transaction: the batch is one implicit transaction that commits at its
// end unless a statement failed, so the refusal has to be an error (no
// other statement of a batch divides).
const fence = `SELECT 1 / (SELECT count(*)::int FROM (` + holdLease + `) n)`

// isFenced reports whether err is fence's refusal.
func isFenced(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22012" // division_by_zero
}

// commitAll commits the batch in one transaction, setting each request's
// refusal; it returns an error, having committed nothing, when the
// transaction failed.
//
// The transaction is one pipelined batch without BEGIN or COMMIT, which
// PostgreSQL runs as one implicit transaction: one round trip per commit
// (the state of executions the cache does not know is read before, on its
// own; steps are only ever added, so what it reads can only become too
// old, and a step it then lets through is refused by the primary key).
func (s *Store) commitAll(w *wconn, batch []*request) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	b := &pgx.Batch{}
	m := s.member.Load()
	b.Queue(fence, m.node)
	var steps []*request
	for _, r := range batch {
		if r.member != m {
			// Queued before the node rejoined: its lease is lost.
			r.refused = errFenced
			continue
		}
		if r.step == nil {
			r.queue(b, r)
		} else {
			steps = append(steps, r)
		}
	}
	// The steps whose Seq the cache expects go straight in; the state of
	// the others' executions is read first.
	states := make(map[string]*execState, len(steps))
	var unknown []string
	for _, r := range steps {
		c := s.cached(r.step.ExecutionARN)
		if c == nil || c.next != r.step.Seq {
			unknown = append(unknown, r.step.ExecutionARN)
			continue
		}
		states[r.step.ExecutionARN] = c
	}
	if len(unknown) > 0 {
		if err := s.readStates(ctx, w, unknown, states); err != nil {
			return err
		}
	}
	a := &stepArrays{}
	for _, r := range steps {
		st := r.step
		c := states[st.ExecutionARN]
		switch {
		case c == nil:
			r.refused = fmt.Errorf("execution %s: %w", st.ExecutionARN, store.ErrNotFound)
		case st.Seq != c.next:
			r.refused = fmt.Errorf("execution %s: step %d, want %d: %w", st.ExecutionARN, st.Seq, c.next, store.ErrConflict)
			if st.Seq < c.next {
				r.landed = c
			}
		default:
			a.add(r, c)
		}
	}
	inserted := map[int64]bool{}
	if len(a.reqs) > 0 {
		b.Queue(insSteps, a.exec, a.seq, a.at, a.input, a.first, a.last, a.events, a.status, a.output, a.errs, a.cause, a.stop, a.update, a.wake).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				inserted[id] = true
			}
			return rows.Err()
		})
	}
	if err := w.c.SendBatch(ctx, b).Close(); err != nil {
		// The transaction may have committed all the same (its answer
		// lost with the connection): the cache is read again.
		s.forget(unknown...)
		for _, r := range steps {
			s.forget(r.step.ExecutionARN)
		}
		if isFenced(err) {
			m.lose()
			return errFenced
		}
		return fmt.Errorf("postgres store: %w", classify(err))
	}
	s.commits.Add(1)
	for i, r := range a.reqs {
		arn := r.step.ExecutionARN
		if inserted[a.exec[i]] {
			s.remember(arn, a.after[i])
			continue
		}
		// Another writer committed this step first, or this one did in a
		// transaction whose answer was lost.
		s.forget(arn)
		r.refused = fmt.Errorf("execution %s: step %d is committed already: %w", arn, r.step.Seq, store.ErrConflict)
		r.landed = &execState{id: a.exec[i]}
	}
	for _, r := range steps {
		if r.landed == nil {
			continue
		}
		ok, err := stepLanded(ctx, w.c, r.landed.id, r.step)
		if err != nil {
			return fmt.Errorf("postgres store: %w", classify(err))
		}
		if ok {
			r.refused = nil
		}
	}
	for _, r := range batch {
		if r.created != nil {
			s.remember(r.step0ARN, *r.created)
		}
	}
	return nil
}

// readStates reads the state of executions into states.
func (s *Store) readStates(ctx context.Context, w *wconn, arns []string, states map[string]*execState) error {
	rows, err := w.c.Query(ctx, selStates, arns)
	if err != nil {
		return fmt.Errorf("postgres store: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var arn string
		c := &execState{}
		if err := rows.Scan(&arn, &c.id, &c.next, &c.last, &c.status, &c.dirty); err != nil {
			return fmt.Errorf("postgres store: %w", classify(err))
		}
		c.next++
		states[arn] = c
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: %w", classify(err))
	}
	return nil
}

// stepLanded reports whether the step at st's Seq of execution exec is st
// itself, to the byte: a writer whose transaction committed but whose
// answer was lost (the connection broke after COMMIT) is asked to write
// the step again, and finds it there.
func stepLanded(ctx context.Context, c *pgx.Conn, exec int64, st *store.Step) (bool, error) {
	var at int64
	var events []byte
	err := c.QueryRow(ctx, `SELECT at, events FROM step_log WHERE exec = $1 AND seq = $2`, exec, st.Seq).Scan(&at, &events)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return at == codec.Nanos(st.At) && bytes.Equal(events, codec.AppendEvents([]byte{}, st.Events)), nil
}

// write queues r and waits until its batch is committed. When ctx ends
// first, the write may still commit.
func (s *Store) write(ctx context.Context, r *request) error {
	r.err = make(chan error, 1)
	r.member = s.member.Load()
	return batch.Submit(ctx, s.reqs, r, r.err, s.done, s.closed, errClosed)
}
