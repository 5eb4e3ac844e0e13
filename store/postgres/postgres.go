// Package postgres is the store.Store of `stepd serve` on PostgreSQL, for
// several nodes sharing one database (through github.com/jackc/pgx/v5,
// PostgreSQL's own protocol with pipelined batches, which database/sql
// cannot send).
//
// The tables live in the connection's current schema (the first of its
// search_path), created and migrated by Open: a table stepd_schema holds
// the schema's version, and migrations run in one transaction under an
// advisory lock, so nodes starting at once migrate once.
//
// Executions' writes (CreateExecution, AppendStep) go through one writer
// goroutine with a connection of its own. It takes every write waiting (up
// to maxBatch) and commits them in one transaction (group commit), sending
// the transaction's statements as one pipelined batch: the steps of up to
// maxBatch executions are one multi-row INSERT of arrays, and each
// execution's summary is updated by the same statement only when it
// changes. A step is refused (ErrConflict) unless its Seq follows the last
// committed one; the check is part of the statement (the previous step must
// exist and the primary key (exec, seq) must be free), so that it holds
// against other nodes writing to the same database. A refused request
// writes nothing and the rest of its batch commits; a batch that fails
// otherwise is rolled back and replayed one request per transaction.
//
// Other writes (state machines, activities) are rare and run on the read
// pool in their own transactions.
//
// Steps are rows keyed by (execution, Seq) holding their events packed
// (store/internal/codec), with the range of event ids they hold; a step
// without events holds the empty range just after the previous step's, so
// that a page of history is found by binary search over Seq.
//
// It imports only store and what the backends share (store/internal),
// and must not import the other backends, the engine or anything above
// them.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/batch"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
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

// Store is the PostgreSQL store.
type Store struct {
	pool   *pgxpool.Pool // reads and rare writes
	ws     []*pgx.Conn   // the writers' connections
	reqs   chan *request
	done   chan struct{} // closed by Close
	closed chan struct{} // closed by the writer when it stops

	closeOnce sync.Once
	closeErr  error

	commits atomic.Int64 // transactions committed, for benchmarks
	swept   atomic.Bool  // a claim has taken the executions of every node gone

	cacheMu sync.Mutex
	cache   map[string]execState // by execution ARN; see execState

	node      string        // this node's id, the owner of the executions it runs
	lease     time.Duration // how long a renewal keeps the node's lease
	lost      chan struct{} // closed when the lease is lost
	lostOnce  sync.Once
	stopLease chan struct{} // closed by Close: stop renewing
	leaseDone chan struct{} // closed when the renewer has stopped

	// Woken by the notifications Receive hears: takers waiting for an
	// activity's tasks (Offered), askers waiting for a reply (Ask).
	notifyMu sync.Mutex
	offered  map[string]chan struct{} // by activity ARN
	replies  map[int64]chan struct{}  // by reply key
	claims   atomic.Int64             // claims made, to sweep old replies now and then
}

// Options tunes a Store.
type Options struct {
	// Lease is how long a node's lease lasts without renewal (renewed
	// five times as often); another node claims the running executions of
	// a node whose lease has lapsed. 0 means DefaultLease.
	Lease time.Duration
}

// DefaultLease is the default of Options.Lease: a dead node's executions
// move to another node within it and one claim interval (Lease/5).
const DefaultLease = 5 * time.Second

// errFenced refuses the writes of a node whose lease has lapsed.
var errFenced = fmt.Errorf("postgres store: this node's lease has lapsed; its executions belong to other nodes now: %w", store.ErrConflict)

var _ store.Shared = (*Store)(nil)

// request is one write. A step request (step set) joins the batch's
// multi-row insert; any other queues its statements with queue, whose
// callbacks set refused when it wrote nothing.
type request struct {
	step    *store.Step
	queue   func(b *pgx.Batch, r *request)
	refused error
	err     chan error
	// created is set by a CreateExecution that inserted its execution
	// step0ARN: the cache knows it once the transaction commits.
	created  *execState
	step0ARN string
}

// Open connects to the database named by dsn (a PostgreSQL URL or
// key=value string; its search_path picks the schema), migrates the schema
// and starts the writer.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenOptions(ctx, dsn, Options{})
}

// minPoolConns is the least size of a store's connection pool unless the
// DSN sets pool_max_conns.
const minPoolConns = 16

// OpenOptions is Open with options.
func OpenOptions(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	// pgx's default pool is max(4, cores) connections; a node keeps one
	// listening (Receive) and its scheduler, outbox and retention loops
	// query beside the API's requests, so a small machine's four starve
	// (callbacks and activity hand-overs then wait past their bounds). A
	// pool_max_conns in the DSN still decides.
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, minPoolConns)
	}
	s := &Store{reqs: make(chan *request, 4*maxBatch), done: make(chan struct{}), closed: make(chan struct{}), cache: map[string]execState{},
		node: rand.Text(), lease: opts.Lease, lost: make(chan struct{}), stopLease: make(chan struct{}), leaseDone: make(chan struct{}),
		offered: map[string]chan struct{}{}, replies: map[int64]chan struct{}{}}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	for range writers {
		w, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			s.closeConns()
			return nil, fmt.Errorf("postgres store: connect: %w", err)
		}
		s.ws = append(s.ws, w)
	}
	if _, _, err := migrate(ctx, s.ws[0]); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("postgres store: migrate the schema: %w", err)
	}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO nodes (id, lease_until) VALUES ($1, now() + $2::interval)`, s.node, s.lease.String()); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("postgres store: register the node: %w", err)
	}
	go s.renew(cfg.ConnConfig.Copy())
	var wg sync.WaitGroup
	for _, w := range s.ws {
		wg.Go(func() { s.writer(w) })
	}
	go func() {
		wg.Wait()
		close(s.closed)
	}()
	return s, nil
}

// Commits returns the number of transactions the writer has committed.
func (s *Store) Commits() int64 { return s.commits.Load() }

// writer commits queued requests in batches until Close, then commits what
// is still queued.
func (s *Store) writer(w *pgx.Conn) {
	for {
		var batch []*request
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		case <-s.done:
			for {
				batch = s.more(nil)
				if len(batch) == 0 {
					return
				}
				s.commit(w, batch)
			}
		}
		s.commit(w, s.more(batch))
	}
}

// more adds the waiting requests to batch, up to maxBatch.
func (s *Store) more(batch []*request) []*request {
	for len(batch) < maxBatch {
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// commit runs a batch and answers its callers. A batch holds at most one
// step of an execution per transaction (callers wait for their step before
// they send the next, so two come only from two writers of one execution):
// the others go in the transactions after it.
func (s *Store) commit(w *pgx.Conn, batch []*request) {
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
func (s *Store) commitOrSplit(w *pgx.Conn, batch []*request) {
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

func (a *stepArrays) add(r *request, c *execState) {
	st := r.step
	first, last := c.last+1, c.last // no events: the empty range after the previous step's
	if n := len(st.Events); n > 0 {
		first, last = st.Events[0].ID, st.Events[n-1].ID
	}
	status := c.status
	if st.Status != "" {
		status = st.Status
	}
	dirty := st.Output != "" || st.Error != "" || st.Cause != "" || !st.Stopped.IsZero()
	if status != c.status || dirty || c.dirty {
		a.update = append(a.update, c.id)
	}
	a.exec = append(a.exec, c.id)
	a.seq = append(a.seq, st.Seq)
	a.at = append(a.at, codec.Nanos(st.At))
	a.input = append(a.input, st.Input)
	a.first = append(a.first, first)
	a.last = append(a.last, last)
	a.events = append(a.events, codec.AppendEvents([]byte{}, st.Events))
	a.status = append(a.status, st.Status)
	a.output = append(a.output, st.Output)
	a.errs = append(a.errs, st.Error)
	a.cause = append(a.cause, st.Cause)
	a.stop = append(a.stop, codec.Nanos(st.Stopped))
	a.wake = append(a.wake, codec.Nanos(st.Wake))
	a.reqs = append(a.reqs, r)
	a.after = append(a.after, execState{id: c.id, next: st.Seq + 1, last: last, status: status, dirty: dirty})
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
// the node's row for share until the commit, which proves the lease: a
// node claiming this one's executions deletes the row, so it waits for
// this commit, and this node commits nothing after it. Without the row
// (or with its lease lapsed) it divides by zero, which fails the whole
// transaction: the batch is one implicit transaction that commits at its
// end unless a statement failed, so the refusal has to be an error (no
// other statement of a batch divides).
const fence = `SELECT 1 / (SELECT count(*)::int FROM (SELECT 1 FROM nodes WHERE id = $1 AND lease_until > now() FOR SHARE) n)`

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
func (s *Store) commitAll(w *pgx.Conn, batch []*request) error {
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue(fence, s.node)
	var steps []*request
	for _, r := range batch {
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
	if err := w.SendBatch(ctx, b).Close(); err != nil {
		s.forget(unknown...)
		if isFenced(err) {
			s.loseLease()
			return errFenced
		}
		return fmt.Errorf("postgres store: %w", err)
	}
	s.commits.Add(1)
	for i, r := range a.reqs {
		arn := r.step.ExecutionARN
		if inserted[a.exec[i]] {
			s.remember(arn, a.after[i])
			continue
		}
		// Another writer committed this step first.
		s.forget(arn)
		r.refused = fmt.Errorf("execution %s: step %d is committed already: %w", arn, r.step.Seq, store.ErrConflict)
	}
	for _, r := range batch {
		if r.created != nil {
			s.remember(r.step0ARN, *r.created)
		}
	}
	return nil
}

// readStates reads the state of executions into states.
func (s *Store) readStates(ctx context.Context, w *pgx.Conn, arns []string, states map[string]*execState) error {
	rows, err := w.Query(ctx, selStates, arns)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var arn string
		c := &execState{}
		if err := rows.Scan(&arn, &c.id, &c.next, &c.last, &c.status, &c.dirty); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		c.next++
		states[arn] = c
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return nil
}

// write queues r and waits until its batch is committed. When ctx ends
// first, the write may still commit.
func (s *Store) write(ctx context.Context, r *request) error {
	r.err = make(chan error, 1)
	return batch.Submit(ctx, s.reqs, r, r.err, s.done, s.closed, errClosed)
}

// Close commits the pending writes, stops the writer and closes the
// connections. Later writes return an error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		<-s.closed
		close(s.stopLease)
		<-s.leaseDone
		// Leaving ends the lease now, so that the others claim this
		// node's running executions at their next claim.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := s.pool.Exec(ctx, `UPDATE nodes SET lease_until = now() - interval '1 second' WHERE id = $1`, s.node)
		s.closeErr = errors.Join(err, s.closeConns())
	})
	return s.closeErr
}

// closeConns closes the writers' connections and the pool.
func (s *Store) closeConns() error {
	var errs []error
	for _, w := range s.ws {
		errs = append(errs, w.Close(context.Background()))
	}
	if s.pool != nil {
		s.pool.Close()
	}
	return errors.Join(errs...)
}

// exec runs one statement of a rare write on the pool and returns the
// number of rows it changed.
func (s *Store) exec(ctx context.Context, q string, args ...any) (int64, error) {
	ct, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	return ct.RowsAffected(), nil
}

// CreateStateMachine implements store.Store.
func (s *Store) CreateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := json.Marshal(sm.Tags)
	if err != nil {
		return fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	n, err := s.exec(ctx, `INSERT INTO state_machines (`+smColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT DO NOTHING`,
		sm.ARN, sm.Name, sm.Type, sm.Definition, sm.RoleARN, codec.Nanos(sm.Created), codec.Nanos(sm.Updated), sm.RevisionID, string(tags), sm.Logging)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists)
	}
	return err
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := json.Marshal(sm.Tags)
	if err != nil {
		return fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	n, err := s.exec(ctx, `UPDATE state_machines SET definition=$1, role_arn=$2, updated=$3, revision=$4, tags=$5, logging=$7 WHERE arn=$6`,
		sm.Definition, sm.RoleARN, codec.Nanos(sm.Updated), sm.RevisionID, string(tags), sm.ARN, sm.Logging)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound)
	}
	return err
}

const smColumns = `arn, name, type, definition, role_arn, created, updated, revision, tags, logging`

func scanSM(row pgx.Row) (*store.StateMachine, error) {
	var sm store.StateMachine
	var created, updated int64
	var tags string
	if err := row.Scan(&sm.ARN, &sm.Name, &sm.Type, &sm.Definition, &sm.RoleARN, &created, &updated, &sm.RevisionID, &tags, &sm.Logging); err != nil {
		return nil, err
	}
	sm.Created, sm.Updated = codec.FromNanos(created), codec.FromNanos(updated)
	if err := json.Unmarshal([]byte(tags), &sm.Tags); err != nil {
		return nil, fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	return &sm, nil
}

// GetStateMachine implements store.Store.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := scanSM(s.pool.QueryRow(ctx, `SELECT `+smColumns+` FROM state_machines WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return sm, nil
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	n, err := s.exec(ctx, `DELETE FROM state_machines WHERE arn=$1`, arn)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	return err
}

// query runs a list query and scans its rows.
func query[T any](ctx context.Context, s *Store, scan func(pgx.Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres store: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}

// byName lists a page of a table ordered by (name, arn).
func byName[T any](ctx context.Context, s *Store, kind byte, table, columns string, p store.Page, scan func(pgx.Row) (T, error), key func(T) (name, arn string)) ([]T, string, error) {
	limit := codec.PageLimit(p)
	q, args := `SELECT `+columns+` FROM `+table, []any{}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kind, 0, 2)
		if err != nil {
			return nil, "", err
		}
		q += ` WHERE (name, arn) > ($1, $2)`
		args = append(args, k[0], k[1])
	}
	q += fmt.Sprintf(` ORDER BY name, arn LIMIT $%d`, len(args)+1)
	list, err := query(ctx, s, scan, q, append(args, limit+1)...)
	if err != nil || len(list) <= limit {
		return list, "", err
	}
	list = list[:limit]
	name, arn := key(list[limit-1])
	return list, codec.MakeToken(kind, 0, 0, name, arn), nil
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	return byName(ctx, s, codec.KindStateMachines, "state_machines", smColumns, p, scanSM, func(sm *store.StateMachine) (string, string) { return sm.Name, sm.ARN })
}

// insExecution inserts an execution and its first steps (from the arrays
// $17 on, none when they are empty); it returns the execution's row id, or
// no row when the ARN exists.
const insExecution = `
WITH e AS (
	INSERT INTO executions (arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped, owner)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) ON CONFLICT (arn) DO NOTHING RETURNING id
), s AS (
	INSERT INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped, wake)
	SELECT e.id, st.* FROM e, unnest($17::int8[], $18::int8[], $19::bytea[], $20::int8[], $21::int8[], $22::bytea[],
		$23::text[], $24::text[], $25::text[], $26::text[], $27::int8[], $28::int8[]) AS st
)
SELECT id FROM e`

// CreateExecution implements store.Store.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	return s.CreateExecutionWith(ctx, e, first, nil)
}

// CreateExecutionWith implements store.EagerCreator: the writer takes the
// step next holds when it puts the creation into its batch, and inserts it
// with the first in the creation's statement.
func (s *Store) CreateExecutionWith(ctx context.Context, e *store.Execution, first *store.Step, next *store.NextStep) error {
	if first == nil && next != nil {
		return fmt.Errorf("execution %s: a next step offered without a first", e.ARN)
	}
	return s.write(ctx, &request{queue: func(b *pgx.Batch, r *request) {
		steps := []*store.Step{first}
		if first == nil {
			steps = nil
		} else if next != nil {
			if st := next.Take(); st != nil {
				if st.ExecutionARN != e.ARN || st.Seq != 1 {
					// Nothing is written; an execution that exists
					// refuses the creation first.
					refused := fmt.Errorf("execution %s: step %d of %s offered with its creation, want step 1: %w", e.ARN, st.Seq, st.ExecutionARN, store.ErrConflict)
					b.Queue(`SELECT EXISTS (SELECT 1 FROM executions WHERE arn=$1)`, e.ARN).QueryRow(func(row pgx.Row) error {
						var exists bool
						if err := row.Scan(&exists); err != nil {
							return err
						}
						if r.refused = refused; exists {
							r.refused = fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
						}
						return nil
					})
					return
				}
				steps = append(steps, st)
			}
		}
		row, args := s.creation(e, steps)
		b.Queue(insExecution, args...).Query(func(rows pgx.Rows) error {
			if !rows.Next() {
				r.refused = fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
				return rows.Err()
			}
			if err := rows.Scan(&row.id); err != nil {
				return err
			}
			r.created, r.step0ARN = &row, e.ARN
			return rows.Err()
		})
	}})
}

// creation returns insExecution's arguments for e and its first steps, and
// what the cache will know of the execution once it is inserted (but its
// row id). The row holds the summary after the steps, as AppendStep would
// leave it.
func (s *Store) creation(e *store.Execution, steps []*store.Step) (execState, []any) {
	row := execState{status: e.Status, dirty: e.Output != "" || e.Error != "" || e.Cause != "" || !e.Stopped.IsZero()}
	output, errName, cause, stopped := e.Output, e.Error, e.Cause, e.Stopped
	a := &stepArrays{}
	for _, st := range steps {
		first, last := row.last+1, row.last // no events: the empty range after the previous step's
		if n := len(st.Events); n > 0 {
			first, last = st.Events[0].ID, st.Events[n-1].ID
		}
		row.next, row.last = st.Seq+1, last
		status := row.status
		if st.Status != "" {
			status = st.Status
		}
		dirty := st.Output != "" || st.Error != "" || st.Cause != "" || !st.Stopped.IsZero()
		if status != row.status || dirty || row.dirty {
			row.status, row.dirty = status, dirty
			output, errName, cause, stopped = st.Output, st.Error, st.Cause, st.Stopped
		}
		a.seq = append(a.seq, st.Seq)
		a.at = append(a.at, codec.Nanos(st.At))
		a.input = append(a.input, st.Input)
		a.first = append(a.first, first)
		a.last = append(a.last, last)
		a.events = append(a.events, codec.AppendEvents([]byte{}, st.Events))
		a.status = append(a.status, st.Status)
		a.output = append(a.output, st.Output)
		a.errs = append(a.errs, st.Error)
		a.cause = append(a.cause, st.Cause)
		a.stop = append(a.stop, codec.Nanos(st.Stopped))
		a.wake = append(a.wake, codec.Nanos(st.Wake))
	}
	return row, []any{e.ARN, e.Name, e.StateMachineARN, e.StateMachineName, e.Definition, e.Type, e.RoleARN, e.TestCase, e.Input,
		row.status, output, errName, cause, codec.Nanos(e.Started), codec.Nanos(stopped), s.node,
		a.seq, a.at, a.input, a.first, a.last, a.events, a.status, a.output, a.errs, a.cause, a.stop, a.wake}
}

// Eager implements store.EagerCreator: false, so that executions start as
// they always have on PostgreSQL (the creation alone, then the next step
// appended by the service).
func (s *Store) Eager() bool { return false }

// ReleaseMemory implements store.Store: the connections' memory is the
// server's, and the store keeps no cache worth freeing.
func (s *Store) ReleaseMemory(ctx context.Context) error { return nil }

const execColumns = `arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped`

func scanExec(row pgx.Row) (*store.Execution, error) {
	var e store.Execution
	var started, stopped int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input, &e.Status, &e.Output, &e.Error, &e.Cause, &started, &stopped); err != nil {
		return nil, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return &e, nil
}

type execKeyed struct {
	e   *store.Execution
	key int64
}

func scanExecKey(row pgx.Row) (execKeyed, error) {
	var e store.Execution
	var started, stopped, key int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input, &e.Status, &e.Output, &e.Error, &e.Cause, &started, &stopped, &key); err != nil {
		return execKeyed{}, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return execKeyed{&e, key}, nil
}

// GetExecution implements store.Store.
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	e, err := scanExec(s.pool.QueryRow(ctx, `SELECT `+execColumns+` FROM executions WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return e, nil
}

// ListExecutions implements store.Store.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	return s.executionsByID(ctx, codec.KindExecutions, codec.FilterHash(smARN, status),
		`SELECT `+execColumns+`, id FROM executions WHERE state_machine_arn=$1`, []any{smARN}, status, p)
}

// executionsByID lists a page of executions newest first (by id,
// descending): q selects them with args, status (when given) narrows them
// to one status, and the page's token holds the last id read, checked
// against kind and filter.
func (s *Store) executionsByID(ctx context.Context, kind byte, filter uint64, q string, args []any, status string, p store.Page) ([]*store.Execution, string, error) {
	limit := codec.PageLimit(p)
	if status != "" {
		args = append(args, status)
		q += fmt.Sprintf(` AND status=$%d`, len(args))
	}
	if p.Token != "" {
		before, _, err := codec.ParseToken(p.Token, kind, filter, 0)
		if err != nil {
			return nil, "", err
		}
		args = append(args, before)
		q += fmt.Sprintf(` AND id<$%d`, len(args))
	}
	q += fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)+1)
	rows, err := query(ctx, s, scanExecKey, q, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		next = codec.MakeToken(kind, filter, rows[limit-1].key)
	}
	list := make([]*store.Execution, len(rows))
	for i, r := range rows {
		list[i] = r.e
	}
	return list, next, nil
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	return s.write(ctx, &request{step: st})
}

// execKey returns the row id of an execution.
func (s *Store) execKey(ctx context.Context, arn string) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM executions WHERE arn=$1`, arn).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	return id, nil
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	return query(ctx, s, func(row pgx.Row) (*store.Step, error) {
		st := &store.Step{ExecutionARN: arn}
		var at, stopped, wake int64
		var evs []byte
		if err := row.Scan(&st.Seq, &at, &st.Input, &evs, &st.Status, &st.Output, &st.Error, &st.Cause, &stopped, &wake); err != nil {
			return nil, err
		}
		st.At, st.Stopped, st.Wake = codec.FromNanos(at), codec.FromNanos(stopped), codec.FromNanos(wake)
		st.Events, err = codec.DecodeEvents(evs)
		return st, err
	}, `SELECT seq, at, input, events, status, output, error, cause, stopped, wake FROM step_log WHERE exec=$1 ORDER BY seq`, exec)
}

// ScanRunning implements store.RunningScanner: in one read-only
// transaction of repeatable read (one snapshot), the running executions in
// row-id order, then, beside them, their steps in (execution, Seq) order;
// of an execution whose last step has a wake time only that step is read,
// and of a step's events only their ids (the row's range).
func (s *Store) ScanRunning(ctx context.Context, fn func(*store.Execution, []*store.Step) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer tx.Rollback(ctx)
	// A connection reads one query at a time: the executions first.
	execs, err := tx.Query(ctx, `SELECT `+sqlrow.RunningColumns+`, id FROM executions WHERE status='RUNNING' ORDER BY id`)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	list, err := sqlrow.Collect(execs, sqlrow.ScanRunning)
	execs.Close()
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	steps, err := tx.Query(ctx, `SELECT s.exec, s.seq, s.at, s.input, s.first_event, s.last_event, s.wake
		FROM executions e
		JOIN LATERAL (SELECT seq, wake FROM step_log WHERE exec = e.id ORDER BY seq DESC LIMIT 1) l ON true
		JOIN step_log s ON s.exec = e.id AND (l.wake = 0 OR s.seq = l.seq)
		WHERE e.status='RUNNING' ORDER BY s.exec, s.seq`)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer steps.Close()
	cur := sqlrow.NewStepCursor(steps)
	for _, x := range list {
		st, err := cur.StepsOf(x.Key, x.V.ARN)
		if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if err := fn(x.V, st); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return nil
}

// Events implements store.Store. The rows' event ranges grow with Seq, so
// the first row of a page is found by binary search over Seq and the page
// is read from there in key order.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	from, to, order := int64(0), int64(math.MaxInt64), "ASC"
	switch {
	case reverse && after > 0:
		k, err := s.searchSteps(ctx, exec, func(first, _ int64) bool { return first >= after })
		if err != nil {
			return nil, err
		}
		to, order = k-1, "DESC"
	case reverse:
		order = "DESC"
	case after > 0: // the first page starts at the first step: no search
		if from, err = s.searchSteps(ctx, exec, func(_, last int64) bool { return last > after }); err != nil {
			return nil, err
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT events FROM step_log WHERE exec=$1 AND seq BETWEEN $2 AND $3 ORDER BY seq `+order, exec, from, to)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	var out []store.Event
	for len(out) < limit && rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("postgres store: %w", err)
		}
		evs, err := codec.DecodeEvents(b)
		if err != nil {
			return nil, fmt.Errorf("postgres store: execution %s: %w", arn, err)
		}
		if reverse {
			for i := len(evs) - 1; i >= 0 && len(out) < limit; i-- {
				if after == 0 || evs[i].ID < after {
					out = append(out, evs[i])
				}
			}
			continue
		}
		for _, ev := range evs {
			if ev.ID > after && len(out) < limit {
				out = append(out, ev)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}

// searchSteps returns the Seq of the first step of execution exec for
// which ok(first_event, last_event) holds, or the Seq after its last step
// when there is none; ok must be false for a prefix of the steps and true
// for the rest.
func (s *Store) searchSteps(ctx context.Context, exec int64, ok func(first, last int64) bool) (int64, error) {
	var top *int64
	if err := s.pool.QueryRow(ctx, `SELECT MAX(seq) FROM step_log WHERE exec=$1`, exec).Scan(&top); err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	if top == nil {
		return 0, nil
	}
	lo, hi := int64(0), *top+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		var first, last int64
		if err := s.pool.QueryRow(ctx, `SELECT first_event, last_event FROM step_log WHERE exec=$1 AND seq=$2`, exec, mid).Scan(&first, &last); err != nil {
			return 0, fmt.Errorf("postgres store: step %d of execution %d: %w", mid, exec, err)
		}
		if ok(first, last) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// RunningExecutions implements store.Store.
func (s *Store) RunningExecutions(ctx context.Context) ([]*store.Execution, error) {
	return query(ctx, s, scanExec, `SELECT `+execColumns+` FROM executions WHERE status='RUNNING' ORDER BY id`)
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	n, err := s.exec(ctx, `INSERT INTO activities VALUES ($1,$2,$3) ON CONFLICT DO NOTHING`, a.ARN, a.Name, codec.Nanos(a.Created))
	if err == nil && n == 0 {
		return fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists)
	}
	return err
}

func scanActivity(row pgx.Row) (*store.Activity, error) {
	var a store.Activity
	var created int64
	if err := row.Scan(&a.ARN, &a.Name, &created); err != nil {
		return nil, err
	}
	a.Created = codec.FromNanos(created)
	return &a, nil
}

// GetActivity implements store.Store.
func (s *Store) GetActivity(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := scanActivity(s.pool.QueryRow(ctx, `SELECT arn, name, created FROM activities WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return a, nil
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	n, err := s.exec(ctx, `DELETE FROM activities WHERE arn=$1`, arn)
	if err == nil && n == 0 {
		return fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	return err
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	return byName(ctx, s, codec.KindActivities, "activities", "arn, name, created", p, scanActivity, func(a *store.Activity) (string, string) { return a.Name, a.ARN })
}

// Secret implements store.Store: the first node to ask makes it; an insert
// that keeps the first one stored makes every node read the same.
func (s *Store) Secret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret)
	if err == nil && len(secret) == store.SecretSize {
		return secret, nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres store: reading the secret: %w", err)
	}
	fresh := make([]byte, store.SecretSize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("postgres store: making the secret: %w", err)
	}
	if _, err := s.exec(ctx, `INSERT INTO meta VALUES ('secret', $1) ON CONFLICT DO NOTHING`, fresh); err != nil {
		return nil, fmt.Errorf("postgres store: keeping the secret: %w", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret); err != nil {
		return nil, fmt.Errorf("postgres store: reading the secret: %w", err)
	}
	if len(secret) != store.SecretSize {
		return nil, fmt.Errorf("postgres store: the stored secret has %d bytes, want %d", len(secret), store.SecretSize)
	}
	return secret, nil
}

// renew renews the node's lease every fifth of its length until Close. The
// lease is lost when its row is gone (another node has claimed its
// executions) or when no renewal succeeded for a whole lease.
//
// It renews on a connection of its own, so that a pool busy with reads
// cannot delay a renewal; the connection is made again after a failure.
func (s *Store) renew(cfg *pgx.ConnConfig) {
	defer close(s.leaseDone)
	tick := time.NewTicker(s.lease / 5)
	defer tick.Stop()
	renewed := time.Now()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-s.stopLease:
			return
		case <-s.lost:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.lease/2)
		var ct pgconn.CommandTag
		var err error
		if conn == nil {
			conn, err = pgx.ConnectConfig(ctx, cfg)
		}
		if err == nil {
			ct, err = conn.Exec(ctx, `UPDATE nodes SET lease_until = now() + $2::interval WHERE id = $1`, s.node, s.lease.String())
			if err != nil {
				conn.Close(ctx)
				conn = nil
			}
		}
		cancel()
		switch {
		case err == nil && ct.RowsAffected() == 1:
			renewed = time.Now()
		case err == nil:
			s.loseLease()
		case time.Since(renewed) > s.lease:
			s.loseLease()
		}
	}
}

func (s *Store) loseLease() { s.lostOnce.Do(func() { close(s.lost) }) }

// Lost implements store.Shared.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// Node returns this node's id, the owner of the executions it runs.
func (s *Store) Node() string { return s.node }

// Claim implements store.Shared: in one transaction, while this node's
// lease holds, it removes the nodes whose lease has lapsed (waiting for
// their commits in flight, which hold their row) and takes the running
// executions of nodes that are gone.
func (s *Store) Claim(ctx context.Context) ([]*store.Execution, error) {
	if s.claims.Add(1)%sweepReplies == 0 {
		// Replies whose asker gave up before they came.
		if _, err := s.pool.Exec(ctx, `DELETE FROM replies WHERE sent < now() - interval '10 minutes'`); err != nil {
			return nil, fmt.Errorf("postgres store: sweep replies: %w", err)
		}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	defer tx.Rollback(ctx)
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM nodes WHERE id = $1 AND lease_until > now() FOR SHARE`, s.node).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		s.loseLease()
		return nil, errFenced
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	rows, err := tx.Query(ctx, `DELETE FROM nodes WHERE lease_until < now() RETURNING id`)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	// The executions of the nodes just removed, found by the index on
	// running executions' owners; the first claim of a node also takes
	// those of any node that is gone (a claimer's transaction that failed,
	// executions of schema version 1).
	switch {
	case !s.swept.Load():
		rows, err = tx.Query(ctx, `UPDATE executions e SET owner = $1 WHERE status = 'RUNNING' AND owner <> $1
			AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.owner) RETURNING `+execColumns, s.node)
	case len(gone) > 0:
		rows, err = tx.Query(ctx, `UPDATE executions SET owner = $1 WHERE status = 'RUNNING' AND owner = ANY($2) RETURNING `+execColumns, s.node, gone)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	claimed, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Execution, error) { return scanExec(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	s.swept.Store(true)
	for _, e := range claimed {
		s.forget(e.ARN)
	}
	return claimed, nil
}

// channel is the LISTEN channel of a node.
func channel(node string) string { return "stepd_" + node }

// sendInput inserts a message for the owner of a running execution and
// notifies the owner; replyKey, when not 0, asks for a reply for this
// node under that key.
const sendInput = `WITH i AS (
	INSERT INTO inputs (exec_arn, body, reply_to, reply_key) SELECT arn, $2, $3, $4 FROM executions WHERE arn = $1 AND status = 'RUNNING' RETURNING exec_arn)
	SELECT pg_notify('stepd_' || e.owner, '') FROM executions e JOIN i ON e.arn = i.exec_arn`

// Send implements store.Shared: the message is a row of inputs, and a
// notification wakes its owner.
func (s *Store) Send(ctx context.Context, arn string, msg []byte) error {
	return s.send(ctx, arn, msg, "", 0)
}

func (s *Store) send(ctx context.Context, arn string, msg []byte, replyTo string, replyKey int64) error {
	rows, err := s.pool.Query(ctx, sendInput, arn, msg, replyTo, replyKey)
	if err != nil {
		return fmt.Errorf("postgres store: send to %s: %w", arn, err)
	}
	defer rows.Close()
	sent := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: send to %s: %w", arn, err)
	}
	if !sent {
		return fmt.Errorf("execution %s is not running: %w", arn, store.ErrNotFound)
	}
	return nil
}

// askEvery is how often Ask looks for its reply without a notification
// (Receive not running, or its connection lost).
const askEvery = time.Second

// sweepReplies: every so many claims (seconds), a node deletes the replies
// nobody took for ten minutes.
const sweepReplies = 300

// Ask implements store.Shared. The message names this node and a random
// key; the owner leaves its reply under the key in replies and notifies
// this node, whose Receive wakes the asker.
func (s *Store) Ask(ctx context.Context, arn string, msg []byte) ([]byte, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := int64(binary.LittleEndian.Uint64(b[:])>>1) | 1 // positive, never 0
	woken := s.await(key)
	defer s.unawait(key)
	if err := s.send(ctx, arn, msg, s.node, key); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-woken:
			woken = s.await(key)
		case <-time.After(askEvery):
		}
		var reply []byte
		err := s.pool.QueryRow(ctx, `DELETE FROM replies WHERE key = $1 RETURNING body`, key).Scan(&reply)
		if err == nil {
			return reply, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("postgres store: the reply from the owner of %s: %w", arn, err)
		}
	}
}

// await returns a channel that is closed when a notification of the
// reply under key arrives.
func (s *Store) await(key int64) <-chan struct{} {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	ch := make(chan struct{})
	s.replies[key] = ch
	return ch
}

func (s *Store) unawait(key int64) {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	delete(s.replies, key)
}

// tasksChannel is the channel of activity tasks' offers (the payload is
// the activity's ARN). It is the same for every schema of a database: an
// offer in another schema only wakes takers for nothing.
const tasksChannel = "stepd_tasks"

// Offered implements store.Shared: the channel is closed when Receive
// hears an offer of the activity.
func (s *Store) Offered(activityARN string) <-chan struct{} {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	ch, ok := s.offered[activityARN]
	if !ok {
		ch = make(chan struct{})
		s.offered[activityARN] = ch
	}
	return ch
}

// notified wakes the waiters of a notification; it reports whether it is
// a message for this node's executions.
func (s *Store) notified(n *pgconn.Notification) bool {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	if n.Channel == tasksChannel {
		if ch, ok := s.offered[n.Payload]; ok {
			close(ch)
			delete(s.offered, n.Payload)
		}
		return false
	}
	if k, ok := strings.CutPrefix(n.Payload, "r"); ok {
		key, _ := strconv.ParseInt(k, 10, 64)
		if ch, ok := s.replies[key]; ok {
			close(ch)
			delete(s.replies, key)
		}
		return false
	}
	return true
}

// receiveEvery is how often Receive looks for messages without a
// notification: for those sent to an execution before this node claimed
// it, and those fn failed.
const receiveEvery = time.Second

// Receive implements store.Shared. It listens on the node's channel and,
// on each notification (or every receiveEvery), takes the messages of the
// executions it owns in one transaction, locked so that no other
// receiver takes them, and deletes those fn has handled.
func (s *Store) Receive(ctx context.Context, fn func(ctx context.Context, arn string, msg []byte) ([]byte, error)) error {
	// Close ends it too, so that its connection goes back to the pool
	// before the pool closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: receive: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel(s.node)}.Sanitize()+`; LISTEN `+tasksChannel); err != nil {
		return fmt.Errorf("postgres store: receive: %w", err)
	}
	defer func() {
		// The connection goes back to the pool: stop listening.
		unlisten, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _ = conn.Exec(unlisten, `UNLISTEN *`)
	}()
	for {
		more, err := s.receiveSome(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errFenced) {
			return err
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(receiveEvery):
			}
			continue
		}
		if more {
			continue
		}
		// Wait for a message's notification (the others wake askers and
		// takers), or look again after receiveEvery.
		wait, cancel := context.WithTimeout(ctx, receiveEvery)
		for {
			n, err := conn.Conn().WaitForNotification(wait)
			if err == nil && !s.notified(n) {
				continue
			}
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("postgres store: receive: %w", err)
			}
			break
		}
	}
}

// receiveSome hands up to 100 messages to fn and deletes those it
// handled; more reports that there may be others.
func (s *Store) receiveSome(ctx context.Context, fn func(ctx context.Context, arn string, msg []byte) ([]byte, error)) (more bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	// As a writer's, the transaction holds the node's row: a node that
	// lost its lease receives nothing more.
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM nodes WHERE id = $1 AND lease_until > now() FOR SHARE`, s.node).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		s.loseLease()
		return false, errFenced
	}
	if err != nil {
		return false, err
	}
	rows, err := tx.Query(ctx, `SELECT i.id, i.exec_arn, i.body, i.reply_to, i.reply_key FROM inputs i JOIN executions e ON e.arn = i.exec_arn
		WHERE e.owner = $1 ORDER BY i.id LIMIT 100 FOR UPDATE OF i SKIP LOCKED`, s.node)
	if err != nil {
		return false, err
	}
	type message struct {
		id       int64
		arn      string
		body     []byte
		replyTo  string
		replyKey int64
	}
	msgs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (message, error) {
		var m message
		err := row.Scan(&m.id, &m.arn, &m.body, &m.replyTo, &m.replyKey)
		return m, err
	})
	if err != nil || len(msgs) == 0 {
		return false, err
	}
	var done []int64
	var askers []string
	var keys []int64
	var replies [][]byte
	failed := map[string]bool{} // an execution whose message failed keeps the later ones too
	for _, m := range msgs {
		if failed[m.arn] {
			continue
		}
		reply, err := fn(ctx, m.arn, m.body)
		if err != nil {
			failed[m.arn] = true
			continue
		}
		done = append(done, m.id)
		if m.replyTo != "" {
			askers, keys, replies = append(askers, m.replyTo), append(keys, m.replyKey), append(replies, append([]byte{}, reply...))
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM inputs WHERE id = ANY($1)`, done); err != nil {
		return false, err
	}
	if len(keys) > 0 {
		// The replies, and notifications (sent at the commit) that wake
		// their askers.
		if _, err := tx.Exec(ctx, `WITH r AS (INSERT INTO replies (key, body) SELECT * FROM unnest($1::int8[], $2::bytea[]) ON CONFLICT DO NOTHING)
			SELECT pg_notify('stepd_' || a.node, 'r' || a.key) FROM unnest($3::text[], $1::int8[]) AS a(node, key)`, keys, replies, askers); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	return len(msgs) == 100 && len(failed) == 0, nil
}

// OfferTask implements store.Shared.
func (s *Store) OfferTask(ctx context.Context, t *store.ActivityTask) error {
	// The notification (sent at the commit) wakes the takers waiting on
	// every node (Offered).
	if _, err := s.exec(ctx, `WITH i AS (INSERT INTO activity_tasks (activity_arn, exec_arn, token, input) VALUES ($1, $2, $3, $4)
		ON CONFLICT (token) DO NOTHING RETURNING activity_arn)
		SELECT pg_notify('`+tasksChannel+`', activity_arn) FROM i`,
		t.ActivityARN, t.ExecutionARN, t.Token, t.Input); err != nil {
		return fmt.Errorf("offer an activity task: %w", err)
	}
	return nil
}

// TakeTask implements store.Shared: the oldest row that is queued, or held
// by a node whose lease has lapsed, is marked held by this node in the one
// transaction that locks it; the others skip it.
func (s *Store) TakeTask(ctx context.Context, activityARN string) (*store.ActivityTask, error) {
	t := &store.ActivityTask{ActivityARN: activityARN}
	err := s.pool.QueryRow(ctx, `UPDATE activity_tasks SET taken_by = $2 WHERE id = (
		SELECT t.id FROM activity_tasks t WHERE t.activity_arn = $1
			AND (t.taken_by IS NULL OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.taken_by AND n.lease_until > now()))
		ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING exec_arn, token, input`, activityARN, s.node).Scan(&t.ExecutionARN, &t.Token, &t.Input)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: take an activity task: %w", err)
	}
	return t, nil
}

// DropTask implements store.Shared.
func (s *Store) DropTask(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM activity_tasks WHERE token = $1 AND taken_by = $2`, token, s.node); err != nil {
		return fmt.Errorf("postgres store: drop an activity task: %w", err)
	}
	return nil
}

// ReleaseTask implements store.Shared: the task is queued again, and its
// offer wakes the takers (Offered).
func (s *Store) ReleaseTask(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `WITH u AS (UPDATE activity_tasks SET taken_by = NULL WHERE token = $1 AND taken_by = $2 RETURNING activity_arn)
		SELECT pg_notify('`+tasksChannel+`', activity_arn) FROM u`, token, s.node); err != nil {
		return fmt.Errorf("postgres store: release an activity task: %w", err)
	}
	return nil
}
