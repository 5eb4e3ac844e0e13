// Package sqlite is the durable store.Store of `stepd serve`: one SQLite
// database file (modernc.org/sqlite, pure Go) in WAL mode with
// synchronous=FULL, so that a write is on disk when its call returns.
//
// All writes go through one writer goroutine. It takes every write request
// that is waiting (up to maxBatch) and commits them in one transaction, so
// that many executions' steps share one fsync (group commit); each caller
// learns its own outcome. A request that is refused (a step out of order,
// a duplicate name, a missing row) is refused before it writes anything,
// so the rest of its batch commits; when a request fails in a way that may
// have left part of its change in the transaction, the batch is rolled back
// and replayed one request per transaction. Reads use their own
// connections.
//
// Steps are rows of one table in commit order (its integer row id grows
// with every insert), with an index by execution and Seq. A commit thus
// writes the table's last pages and a few index pages, however many
// executions it holds, rather than a page per execution. A step's events
// are packed into its row, so a transition costs that insert (and an
// update of the executions row when the summary changes). The writer holds
// the steps of a batch until it ends and inserts them 64 rows a statement
// (those that leave their execution running, nearly all, with the summary
// columns written as literals). Every row
// records the range of event ids it holds; a step without events records
// the empty range just after the previous step's, so both bounds grow with
// Seq and a page of history starting at an event id is found by binary
// search.
//
// State machines read are cached (StartExecution reads one each time);
// the writer drops an entry once a write of that state machine ends. The
// writer also keeps, as it commits them, the newest executions of the
// state machines listed lately and the rows of the executions created
// lately (recent.go), which ListExecutions and GetExecution read instead
// of the database.
//
// List tokens are opaque, checksummed keys of the last item returned
// (keyset pagination), so that a page does not shift when executions are
// started between calls; a token is only valid for the list it came from.
//
// It imports only store and what the backends share (store/internal),
// and must not import the other backends, the engine or anything above
// them.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/batch"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"

	sqlite "modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// maxBatch is the most write requests committed in one transaction.
const maxBatch = 1024

const schema = `
CREATE TABLE IF NOT EXISTS state_machines (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, definition TEXT NOT NULL,
	role_arn TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, revision TEXT NOT NULL, tags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS state_machines_by_name ON state_machines (name, arn);
CREATE TABLE IF NOT EXISTS executions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, definition TEXT NOT NULL, type TEXT NOT NULL,
	role_arn TEXT NOT NULL, test_case TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
	output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started INTEGER NOT NULL, stopped INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS executions_by_machine ON executions (state_machine_arn, seq DESC);
CREATE INDEX IF NOT EXISTS executions_by_machine_status ON executions (state_machine_arn, status, seq DESC);
CREATE INDEX IF NOT EXISTS executions_running ON executions (seq) WHERE status = 'RUNNING';
CREATE TABLE IF NOT EXISTS step_log (
	id INTEGER PRIMARY KEY, exec INTEGER NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
	first_event INTEGER NOT NULL, last_event INTEGER NOT NULL,
	status TEXT NOT NULL, stopped INTEGER NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, output TEXT NOT NULL,
	input BLOB, events BLOB NOT NULL, wake INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX IF NOT EXISTS step_log_by_exec ON step_log (exec, seq);
CREATE TABLE IF NOT EXISTS activities (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS activities_by_name ON activities (name, arn);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
`

// stepSummary are the columns added to the steps table of older databases
// for the execution's summary after the step; migrate adds them before it
// copies that table into step_log.
var stepSummary = []string{"status TEXT NOT NULL DEFAULT ''", "output TEXT NOT NULL DEFAULT ''", "error TEXT NOT NULL DEFAULT ''",
	"cause TEXT NOT NULL DEFAULT ''", "stopped INTEGER NOT NULL DEFAULT 0"}

// errClosed is returned by writes after Close.
var errClosed = errors.New("sqlite store: closed")

// Store is the SQLite store.
type Store struct {
	db     *reader // readers
	w      *sql.DB // the writer's single connection
	reqs   chan *request
	done   chan struct{} // closed by Close
	closed chan struct{} // closed by the writer when it stops

	sched scheduleTable // schedule.go

	closeOnce sync.Once
	closeErr  error

	refs     rarelyUsed // execution_refs (version.go)
	redrives rarelyUsed // redrives (maprun.go)

	// Statements of the hot write path, prepared once on the writer's
	// connection (parsing SQL per step would dominate the commit path).
	insExec, updExec, selExec *sql.Stmt
	// cache holds, for the writer goroutine only, recent executions' row
	// key, next step number and summary, so that a step costs one insert
	// (the executions row is only rewritten when the summary changes). It
	// is dropped whenever a transaction rolls back.
	cache map[string]*execState
	// txOf is the transaction txStmts belong to (see stmt); writer only.
	txOf    *sql.Tx
	txStmts map[*sql.Stmt]*sql.Stmt
	// pending are the steps of the batch that leave their execution
	// running, inserted together by flush in multi-row statements of
	// runStmts (by row count) before the batch commits; ending are the
	// other steps, inserted the same way by the statements of fullStmts;
	// arena holds their inputs and packed events, args the statements'
	// arguments. Writer only.
	pending, ending     []pendingStep
	arena               []byte
	args                []any
	runStmts, fullStmts map[int]*sql.Stmt

	commits atomic.Int64 // transactions committed, for tests

	// recent holds the newest executions of the state machines listed
	// lately (recent.go); changes is what the writer's transaction did to
	// executions rows, applied to recent once it commits. Writer only.
	recent  recent
	changes []change

	// sms caches the state machines read, by ARN, so that StartExecution,
	// which reads its state machine, costs no query. A write of a state
	// machine drops its entry once committed, and bumps smGen so that a
	// read that began before the write does not cache what it read.
	smMu  sync.Mutex
	sms   map[string]*store.StateMachine
	smGen uint64
	// onCommit, when set, is told of each transaction committed (see
	// ObserveCommits).
	onCommit atomic.Pointer[func(writes int, took time.Duration)]
}

// ObserveCommits makes fn be called, on the writer goroutine, after each
// transaction the writer commits with the number of writes it held (the
// group commit's batch size) and how long it took from its start; fn must
// be cheap. It is for metrics.
func (s *Store) ObserveCommits(fn func(writes int, took time.Duration)) {
	s.onCommit.Store(&fn)
}

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
}

var _ store.Store = (*Store)(nil)

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

// Open opens the database at path, creating it and its schema if needed,
// and starts the writer.
func Open(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=cache_size(-65536)&_pragma=mmap_size(268435456)&_pragma=temp_store(MEMORY)"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, err)
	}
	// A reader's page cache is emptied whenever it starts a read after the
	// writer has committed (always, under load), so a large one only
	// holds memory that is never returned: 4 MiB each, against the
	// writer's 64 MiB. Readers do not map the file: SQLite unmaps a
	// connection's whole mapping whenever it starts a read after a commit,
	// and the munmap, the mmap and the page faults after it cost more than
	// reading the few pages a query needs (BenchmarkAPILoad: 1.2-1.3x
	// requests/s without the mapping).
	r, err := sql.Open("sqlite", strings.NewReplacer("cache_size(-65536)", "cache_size(-4096)", "mmap_size(268435456)", "mmap_size(0)").Replace(dsn))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: newReader(r), w: w, reqs: make(chan *request, 4*maxBatch), done: make(chan struct{}), closed: make(chan struct{}), cache: map[string]*execState{}, sms: map[string]*store.StateMachine{}, runStmts: map[int]*sql.Stmt{}, fullStmts: map[int]*sql.Stmt{},
		arena: make([]byte, 0, 1<<16)} // never nil: a step without events binds an empty blob, not NULL
	s.refs.table, s.redrives.table = "execution_refs", "redrives"
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.insExec, `INSERT INTO executions (` + execColumns + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&s.updExec, `UPDATE executions SET status=?, output=?, error=?, cause=?, stopped=? WHERE seq=?`},
		{&s.selExec, `SELECT e.seq, COALESCE(s.seq, -1), COALESCE(s.last_event, 0), e.status,
			e.output != '' OR e.error != '' OR e.cause != '' OR e.stopped != 0, e.state_machine_arn
			FROM executions e LEFT JOIN step_log s ON s.exec = e.seq AND s.seq = (SELECT MAX(seq) FROM step_log WHERE exec = e.seq)
			WHERE e.arn=?`},
	} {
		if *p.dst, err = w.PrepareContext(ctx, p.sql); err != nil {
			w.Close()
			r.Close()
			return nil, fmt.Errorf("prepare %q: %w", p.sql, err)
		}
	}
	if err := s.prepareRun(ctx); err != nil {
		for _, st := range append([]*sql.Stmt{s.insExec, s.updExec, s.selExec}, append(slices.Collect(maps.Values(s.runStmts)), slices.Collect(maps.Values(s.fullStmts))...)...) {
			st.Close()
		}
		w.Close()
		r.Close()
		return nil, err
	}
	go s.writer()
	return s, nil
}

// migrate creates the schema and moves the steps of databases made before
// the step_log table (a table keyed by execution and Seq, with an index by
// event id) into it.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, schema+mapRunSchema); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, versionSchema); err != nil { // version.go
		return err
	}
	// step_log before Step.Wake.
	var wake int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('step_log') WHERE name='wake'`).Scan(&wake); err != nil {
		return err
	}
	if wake == 0 {
		if _, err := db.ExecContext(ctx, `ALTER TABLE step_log ADD COLUMN wake INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	if err := migrateOps(ctx, db); err != nil {
		return err
	}
	var old int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='steps'`).Scan(&old); err != nil || old == 0 {
		return err
	}
	for _, col := range stepSummary {
		name, _, _ := strings.Cut(col, " ")
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('steps') WHERE name=?`, name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE steps ADD COLUMN `+col); err != nil {
				return err
			}
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := copySteps(ctx, tx); err != nil {
		return fmt.Errorf("move steps: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE steps`); err != nil {
		return err
	}
	return tx.Commit()
}

// copySteps copies the rows of the old steps table into step_log, giving
// steps without events the empty range after the previous step's events.
func copySteps(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped FROM steps ORDER BY exec, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	prevExec, prevLast := int64(-1), int64(0)
	for rows.Next() {
		var exec, seq, at, first, last, stopped int64
		var input, events []byte
		var status, output, errName, cause string
		if err := rows.Scan(&exec, &seq, &at, &input, &first, &last, &events, &status, &output, &errName, &cause, &stopped); err != nil {
			return err
		}
		if exec != prevExec {
			prevExec, prevLast = exec, 0
		}
		if last < first {
			first, last = prevLast+1, prevLast
		}
		prevLast = last
		if events == nil {
			events = []byte{} // an empty blob scans as nil
		}
		if _, err := ins.ExecContext(ctx, exec, seq, at, input, first, last, events, status, output, errName, cause, stopped); err != nil {
			return err
		}
	}
	return rows.Err()
}

// writer commits queued requests in batches until Close, then commits what
// is still queued.
func (s *Store) writer() {
	defer close(s.closed)
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
				s.commit(batch)
			}
		}
		s.commit(s.more(batch))
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
	s.changes = s.changes[:0]
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
		var ref *refusal
		if errors.As(err, &ref) {
			errs[i] = ref.err
			continue
		}
		if err != nil {
			_ = tx.Rollback()
			clear(s.cache)
			if len(batch) > 1 {
				return false
			}
			if r.after != nil {
				r.after()
			}
			r.err <- err
			return true
		}
	}
	if err := s.flush(tx); err != nil {
		_ = tx.Rollback()
		clear(s.cache)
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
		clear(s.cache)
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

// write queues fn and waits until its batch is committed. When ctx ends
// first, the write may still commit.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.writeThen(ctx, fn, nil)
}

// writeThen is write with a function that the writer runs once the
// transaction of fn has ended (see request.after).
func (s *Store) writeThen(ctx context.Context, fn func(tx *sql.Tx) error, after func()) error {
	r := &request{fn: fn, err: make(chan error, 1), after: after}
	return batch.Submit(ctx, s.reqs, r, r.err, s.done, s.closed, errClosed)
}

// Eager implements store.EagerCreator: a creation waits for the writer's
// group commit, by when the next step is often ready.
func (s *Store) Eager() bool { return true }

// ReleaseMemory lets SQLite free the pages its connections' caches hold
// (PRAGMA shrink_memory), for a server gone idle: the writer's cache
// grows to 64 MiB under load and would otherwise keep it.
func (s *Store) ReleaseMemory(ctx context.Context) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`PRAGMA shrink_memory`)
		return err
	})
	return errors.Join(err, s.db.eachConn(ctx, func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `PRAGMA shrink_memory`)
		return err
	}))
}

// Close commits the pending writes, stops the writer and closes the
// database. Later writes return an error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		<-s.closed
		errs := []error{s.insExec.Close(), s.updExec.Close(), s.selExec.Close()}
		for _, st := range s.runStmts {
			errs = append(errs, st.Close())
		}
		for _, st := range s.fullStmts {
			errs = append(errs, st.Close())
		}
		s.closeErr = errors.Join(append(errs, s.w.Close(), s.db.Close())...)
	})
	return s.closeErr
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

// Page tokens, times and packed events are store/internal/codec's, shared
// with the PostgreSQL store.
const (
	kindStateMachines = codec.KindStateMachines
	kindExecutions    = codec.KindExecutions
	kindActivities    = codec.KindActivities
)

type scanner interface{ Scan(...any) error }

// CreateStateMachine implements store.Store.
func (s *Store) CreateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := json.Marshal(sm.Tags)
	if err != nil {
		return fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO state_machines (`+smColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`, sm.ARN, sm.Name, sm.Type, sm.Definition, sm.RoleARN, codec.Nanos(sm.Created), codec.Nanos(sm.Updated), sm.RevisionID, string(tags), sm.Logging)
		if isDuplicate(err) {
			return refuse(fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists))
		}
		return err
	}, func() { s.forgetSM(sm.ARN) })
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := json.Marshal(sm.Tags)
	if err != nil {
		return fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	arn := sm.ARN
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE state_machines SET definition=?, role_arn=?, updated=?, revision=?, tags=?, logging=? WHERE arn=?`, sm.Definition, sm.RoleARN, codec.Nanos(sm.Updated), sm.RevisionID, string(tags), sm.Logging, sm.ARN)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound))
		}
		return nil
	}, func() { s.forgetSM(arn) })
}

const smColumns = `arn, name, type, definition, role_arn, created, updated, revision, tags, logging`

func scanSM(row scanner) (*store.StateMachine, error) {
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

// GetStateMachine implements store.Store: from the cache when it holds
// the state machine, else from the database (and then into the cache).
// The caller gets its own copy either way.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	s.smMu.Lock()
	cached, gen := s.sms[arn], s.smGen
	s.smMu.Unlock()
	if cached != nil {
		return copySM(cached), nil
	}
	sm, err := scanSM(s.db.QueryRowContext(ctx, `SELECT `+smColumns+` FROM state_machines WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	s.smMu.Lock()
	if s.smGen == gen {
		if len(s.sms) >= 10000 {
			clear(s.sms)
		}
		s.sms[arn] = copySM(sm)
	}
	s.smMu.Unlock()
	return sm, nil
}

// forgetSM drops a state machine from the cache after a write of it.
func (s *Store) forgetSM(arn string) {
	s.smMu.Lock()
	delete(s.sms, arn)
	s.smGen++
	s.smMu.Unlock()
}

// copySM returns a copy of sm that shares nothing mutable with it.
func copySM(sm *store.StateMachine) *store.StateMachine {
	c := *sm
	c.Tags = maps.Clone(sm.Tags)
	return &c
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM state_machines WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound))
		}
		return nil
	}, func() { s.forgetSM(arn) })
}

// query runs a list query and scans its rows.
func query[T any](ctx context.Context, db *reader, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// byName lists a page of a table ordered by (name, arn).
func byName[T any](ctx context.Context, db *reader, kind byte, table, columns string, p store.Page, scan func(scanner) (T, error), key func(T) (name, arn string)) ([]T, string, error) {
	limit := codec.PageLimit(p)
	q, args := `SELECT `+columns+` FROM `+table, []any{}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kind, 0, 2)
		if err != nil {
			return nil, "", err
		}
		q += ` WHERE (name, arn) > (?, ?)`
		args = append(args, k[0], k[1])
	}
	q += ` ORDER BY name, arn LIMIT ?`
	list, err := query(ctx, db, scan, q, append(args, limit+1)...)
	if err != nil || len(list) <= limit {
		return list, "", err
	}
	list = list[:limit]
	name, arn := key(list[limit-1])
	return list, codec.MakeToken(kind, 0, 0, name, arn), nil
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	return byName(ctx, s.db, kindStateMachines, "state_machines", smColumns, p, scanSM, func(sm *store.StateMachine) (string, string) { return sm.Name, sm.ARN })
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
		if _, err := s.stmt(tx, s.updExec).Exec(status, st.Output, st.Error, st.Cause, codec.Nanos(st.Stopped), c.key); err != nil {
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

// CreateExecution implements store.Store. The new row's key comes from
// the insert, and a new execution has no steps, so its state for the step
// cache needs no query.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	return s.CreateExecutionWith(ctx, e, first, nil)
}

// CreateExecutionWith implements store.EagerCreator: the step next holds
// when the writer runs the creation goes into the same transaction.
func (s *Store) CreateExecutionWith(ctx context.Context, e *store.Execution, first *store.Step, next *store.NextStep) error {
	if first == nil && next != nil {
		return fmt.Errorf("execution %s: a next step offered without a first", e.ARN)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := s.stmt(tx, s.insExec).Exec(e.ARN, e.Name, e.StateMachineARN, e.StateMachineName, e.Definition, e.Type, e.RoleARN, e.TestCase, e.Input, e.Status, e.Output, e.Error, e.Cause, codec.Nanos(e.Started), codec.Nanos(e.Stopped))
		if isDuplicate(err) {
			return refuse(fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists))
		}
		if err != nil {
			return err
		}
		// From here on a failure rolls the batch back: the row is written.
		key, err := res.LastInsertId()
		if err != nil {
			return unrefused(err)
		}
		s.changes = append(s.changes, change{kind: created, s: summary{key: key, arn: e.ARN, name: e.Name, smARN: e.StateMachineARN, smName: e.StateMachineName,
			typ: e.Type, status: e.Status, started: codec.Nanos(e.Started), stopped: codec.Nanos(e.Stopped)}, e: e})
		if first == nil {
			return nil
		}
		c := &execState{key: key, smARN: e.StateMachineARN, status: e.Status, dirty: e.Output != "" || e.Error != "" || e.Cause != "" || !e.Stopped.IsZero()}
		s.remember(e.ARN, c)
		if err := s.insertStep(tx, c, first); err != nil {
			return unrefused(err)
		}
		if next == nil {
			return nil
		}
		st := next.Take()
		if st == nil {
			return nil
		}
		if st.ExecutionARN != e.ARN || st.Seq != c.next {
			return fmt.Errorf("execution %s: step %d of %s offered with its creation, want step %d: %w", e.ARN, st.Seq, st.ExecutionARN, c.next, store.ErrConflict)
		}
		return unrefused(s.insertStep(tx, c, st))
	})
}

// unrefused turns a refusal into a plain error, for a request that has
// already written part of its change.
func unrefused(err error) error {
	var ref *refusal
	if errors.As(err, &ref) {
		return ref.err
	}
	return err
}

const execColumns = `arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped`

func scanExec(row scanner) (*store.Execution, error) {
	var e store.Execution
	var started, stopped int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input, &e.Status, &e.Output, &e.Error, &e.Cause, &started, &stopped); err != nil {
		return nil, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return &e, nil
}

// listColumns are the summary columns that ListExecutions reads (the
// store contract leaves definitions, inputs and outputs out of a list),
// followed by the row key.
const listColumns = `arn, name, state_machine_arn, state_machine_name, type, status, started, stopped, seq`

// scanListed scans an execution's summary (listColumns).
func scanListed(row scanner) (execKeyed, error) {
	var e store.Execution
	var started, stopped, key int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Type, &e.Status, &started, &stopped, &key); err != nil {
		return execKeyed{}, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return execKeyed{&e, key}, nil
}

type execKeyed struct {
	e   *store.Execution
	key int64
}

// GetExecution implements store.Store.
// Executions created lately come from memory (recent.go).
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if e, ok := s.recent.execution(arn); ok {
		return e, nil
	}
	e, err := scanExec(s.db.QueryRowContext(ctx, `SELECT `+execColumns+` FROM executions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ListExecutions implements store.Store: from the state machine's window
// of recent executions when it holds the page (recent.go), else from the
// database.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	filter := codec.FilterHash(smARN, status)
	limit := codec.PageLimit(p)
	before := int64(math.MaxInt64)
	if p.Token != "" {
		b, _, err := codec.ParseToken(p.Token, kindExecutions, filter, 0)
		if err != nil {
			return nil, "", err
		}
		before = b
	}
	if list, keys, ok := s.recent.list(ctx, smARN, status, before, limit+1, s.fillRecent); ok {
		next := ""
		if len(list) > limit {
			list = list[:limit]
			next = codec.MakeToken(kindExecutions, filter, keys[limit-1])
		}
		return list, next, nil
	}
	return bySeq(ctx, s.db, kindExecutions, filter, `SELECT `+listColumns+` FROM executions WHERE state_machine_arn=?`,
		[]any{smARN}, status, p, scanListed, func(r execKeyed) (*store.Execution, int64) { return r.e, r.key })
}

// fillRecent reads the newest executions of a state machine for its
// window; complete says that there are no others.
func (s *Store) fillRecent(ctx context.Context, smARN string) ([]summary, bool, error) {
	rows, err := query(ctx, s.db, scanListed, `SELECT `+listColumns+` FROM executions WHERE state_machine_arn=? ORDER BY seq DESC LIMIT ?`, smARN, recentWindow+1)
	if err != nil {
		return nil, false, err
	}
	complete := len(rows) <= recentWindow
	rows = rows[:min(len(rows), recentWindow)]
	items := make([]summary, len(rows))
	for i, r := range rows {
		e := r.e
		items[len(rows)-1-i] = summary{key: r.key, arn: e.ARN, name: e.Name, smARN: e.StateMachineARN, smName: e.StateMachineName, typ: e.Type,
			status: e.Status, started: codec.Nanos(e.Started), stopped: codec.Nanos(e.Stopped)}
	}
	return items, complete, nil
}

// bySeq lists a page of rows newest first (by seq, descending): q selects
// them with args, status (when given) narrows them to one status, and the
// page's token holds the last seq read, checked against kind and filter.
func bySeq[R, T any](ctx context.Context, db *reader, kind byte, filter uint64, q string, args []any, status string, p store.Page,
	scan func(scanner) (R, error), item func(R) (T, int64)) ([]T, string, error) {
	limit := codec.PageLimit(p)
	if status != "" {
		q += ` AND status=?`
		args = append(args, status)
	}
	if p.Token != "" {
		before, _, err := codec.ParseToken(p.Token, kind, filter, 0)
		if err != nil {
			return nil, "", err
		}
		q += ` AND seq<?`
		args = append(args, before)
	}
	rows, err := query(ctx, db, scan, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	list := make([]T, len(rows))
	var last int64
	for i, r := range rows {
		list[i], last = item(r)
	}
	next := ""
	if more {
		next = codec.MakeToken(kind, filter, last)
	}
	return list, next, nil
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		c, err := s.execState(tx, st.ExecutionARN)
		if err != nil {
			return err
		}
		if st.Seq != c.next {
			return refuse(fmt.Errorf("execution %s: step %d, want %d: %w", st.ExecutionARN, st.Seq, c.next, store.ErrConflict))
		}
		return s.insertStep(tx, c, st)
	})
}

// execKey returns the row key of an execution.
func (s *Store) execKey(ctx context.Context, arn string) (int64, error) {
	var exec int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM executions WHERE arn=?`, arn).Scan(&exec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	return exec, err
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	return query(ctx, s.db, func(row scanner) (*store.Step, error) {
		st := &store.Step{ExecutionARN: arn}
		var at, stopped, wake int64
		var evs []byte
		if err := row.Scan(&st.Seq, &at, &st.Input, &evs, &st.Status, &st.Output, &st.Error, &st.Cause, &stopped, &wake); err != nil {
			return nil, err
		}
		st.At, st.Stopped, st.Wake = codec.FromNanos(at), codec.FromNanos(stopped), codec.FromNanos(wake)
		st.Events, err = codec.DecodeEvents(evs)
		return st, err
	}, `SELECT seq, at, input, events, status, output, error, cause, stopped, wake FROM step_log WHERE exec=? ORDER BY seq`, exec)
}

// ScanRunning implements store.RunningScanner: in one read transaction,
// the running executions in row-key order and, beside them, their steps in
// (execution, Seq) order, which the step index yields without sorting;
// each execution is handed over with its steps as soon as they are read.
// Of an execution whose last step has a wake time only that step is read,
// and of a step's events only their ids (the row's range).
func (s *Store) ScanRunning(ctx context.Context, fn func(*store.Execution, []*store.Step) error) error {
	tx, done, err := s.db.BeginTx(ctx)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback()
	execs, err := tx.QueryContext(ctx, `SELECT `+sqlrow.RunningColumns+`, seq FROM executions WHERE status='RUNNING' ORDER BY seq`)
	if err != nil {
		return err
	}
	defer execs.Close()
	steps, err := tx.QueryContext(ctx, `SELECT s.exec, s.seq, s.at, s.input, s.first_event, s.last_event, s.wake
		FROM executions e
		JOIN step_log l ON l.exec = e.seq AND l.seq = (SELECT MAX(seq) FROM step_log WHERE exec = e.seq)
		JOIN step_log s ON s.exec = e.seq AND (l.wake = 0 OR s.seq = l.seq)
		WHERE e.status='RUNNING' ORDER BY s.exec, s.seq`)
	if err != nil {
		return err
	}
	defer steps.Close()
	cur := sqlrow.NewStepCursor(steps)
	for execs.Next() {
		x, err := sqlrow.ScanRunning(execs)
		if err != nil {
			return err
		}
		list, err := cur.StepsOf(x.Key, x.V.ARN)
		if err != nil {
			return err
		}
		if err := fn(x.V, list); err != nil {
			return err
		}
	}
	if err := execs.Err(); err != nil {
		return err
	}
	return cur.Err()
}

// Events implements store.Store. The rows' event ranges grow with Seq, so
// the first row of a page is found by binary search over Seq and the page
// is read from there in key order.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	// The first page (after 0) starts at the first step, or ends at the
	// last: one query, which finds the execution by its ARN itself, reads
	// it (each query is a read transaction of its own, and SQLite drops a
	// connection's page cache at the start of one whenever the writer has
	// committed since). A later page first finds its first step.
	exec, execBy, from, to, order := any(arn), `(SELECT seq FROM executions WHERE arn=?)`, int64(0), int64(math.MaxInt64), "ASC"
	if reverse {
		order = "DESC"
	}
	if after > 0 {
		k, err := s.execKey(ctx, arn)
		if err != nil {
			return nil, err
		}
		exec, execBy = k, `?`
		if reverse {
			// Up to the last step holding an event before after.
			k, err := s.searchSteps(ctx, k, func(first, _ int64) bool { return first >= after })
			if err != nil {
				return nil, err
			}
			to = k - 1
		} else if from, err = s.searchSteps(ctx, k, func(_, last int64) bool { return last > after }); err != nil {
			// From the first step holding an event after after.
			return nil, err
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT events FROM step_log WHERE exec=`+execBy+` AND seq BETWEEN ? AND ? ORDER BY seq `+order, exec, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Event
	for len(out) < limit && rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		evs, err := codec.DecodeEvents(b)
		if err != nil {
			return nil, err
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 && after == 0 {
		// No step at all: is there such an execution?
		if _, err := s.execKey(ctx, arn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// searchSteps returns the Seq of the first step of execution exec for
// which ok(first_event, last_event) holds, or the Seq after its last step
// when there is none; ok must be false for a prefix of the steps and true
// for the rest.
func (s *Store) searchSteps(ctx context.Context, exec int64, ok func(first, last int64) bool) (int64, error) {
	var top sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(seq) FROM step_log WHERE exec=?`, exec).Scan(&top); err != nil {
		return 0, err
	}
	if !top.Valid {
		return 0, nil
	}
	lo, hi := int64(0), top.Int64+1 // the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		var first, last int64
		err := s.db.QueryRowContext(ctx, `SELECT first_event, last_event FROM step_log WHERE exec=? AND seq=?`, exec, mid).Scan(&first, &last)
		if err != nil {
			return 0, fmt.Errorf("step %d of execution %d: %w", mid, exec, err)
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
	return query(ctx, s.db, scanExec, `SELECT `+execColumns+` FROM executions WHERE status='RUNNING' ORDER BY seq`)
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO activities VALUES (?,?,?)`, a.ARN, a.Name, codec.Nanos(a.Created))
		if isDuplicate(err) {
			return refuse(fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists))
		}
		return err
	})
}

func scanActivity(row scanner) (*store.Activity, error) {
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
	a, err := scanActivity(s.db.QueryRowContext(ctx, `SELECT arn, name, created FROM activities WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM activities WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("activity %s: %w", arn, store.ErrNotFound))
		}
		return nil
	})
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	return byName(ctx, s.db, kindActivities, "activities", "arn, name, created", p, scanActivity, func(a *store.Activity) (string, string) { return a.Name, a.ARN })
}

// Secret implements store.Store: the secret is made once, in a write that
// keeps the first one stored, and read back.
func (s *Store) Secret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret)
	if err == nil && len(secret) == store.SecretSize {
		return secret, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite store: reading the secret: %w", err)
	}
	fresh := make([]byte, store.SecretSize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("sqlite store: making the secret: %w", err)
	}
	if err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR IGNORE INTO meta VALUES ('secret', ?)`, fresh)
		return err
	}); err != nil {
		return nil, fmt.Errorf("sqlite store: keeping the secret: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret); err != nil {
		return nil, fmt.Errorf("sqlite store: reading the secret: %w", err)
	}
	return secret, nil
}
