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
// Its files, by concern: sqlite.go (opening, closing), schema.go (the
// schema and its migrations), writer.go (the group-commit writer, its cache
// of executions and the batched inserts of steps), catalog.go (state
// machines, activities, the secret), execution.go (executions and their
// steps), query.go (lists and their pages), reader.go (the readers'
// connections), recent.go (the recent executions kept in memory),
// version.go, maprun.go, schedule.go, retention.go and outbox.go.
//
// It imports only store and what the backends share (store/internal),
// and must not import the other backends, the engine or anything above
// them.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// Store is the SQLite store.
type Store struct {
	// The methods of each concern are declared on a part of their own (a
	// view of the Store), composed here: versions, Map Runs, schedules.
	versionPart
	mapRunPart
	schedulePart
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
	insExec, updExec, selExec, insDef *sql.Stmt
	// defs are the hashes of the definitions that the definitions table
	// holds (committed), and newDefs those the open transaction inserted;
	// writer only.
	defs    map[string]struct{}
	newDefs []string
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

var _ store.Store = (*Store)(nil)

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
	s := &Store{db: newReader(r), w: w, reqs: make(chan *request, 4*maxBatch), done: make(chan struct{}), closed: make(chan struct{}), cache: map[string]*execState{}, defs: map[string]struct{}{}, sms: map[string]*store.StateMachine{}, runStmts: map[int]*sql.Stmt{}, fullStmts: map[int]*sql.Stmt{},
		arena: make([]byte, 0, 1<<16)} // never nil: a step without events binds an empty blob, not NULL
	s.versionPart, s.mapRunPart, s.schedulePart = versionPart{s}, mapRunPart{s}, schedulePart{s}
	s.refs.table, s.redrives.table = "execution_refs", "redrives"
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.insExec, `INSERT INTO executions (` + sqlrow.InsertColumns + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&s.insDef, `INSERT OR IGNORE INTO definitions (hash, body) VALUES (?,?)`},
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
		for _, st := range append([]*sql.Stmt{s.insExec, s.updExec, s.selExec, s.insDef}, append(slices.Collect(maps.Values(s.runStmts)), slices.Collect(maps.Values(s.fullStmts))...)...) {
			st.Close()
		}
		w.Close()
		r.Close()
		return nil, err
	}
	go s.writer()
	return s, nil
}

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
		errs := []error{s.insExec.Close(), s.updExec.Close(), s.selExec.Close(), s.insDef.Close()}
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

// versionPart declares the Store's methods of one concern (see Store).
type versionPart struct{ *Store }

// mapRunPart declares the Store's methods of one concern (see Store).
type mapRunPart struct{ *Store }

// schedulePart declares the Store's methods of one concern (see Store).
type schedulePart struct{ *Store }
