// Package sqlite is the durable store.Store of `stepd serve`: one SQLite
// database file (modernc.org/sqlite, pure Go) in WAL mode with
// synchronous=FULL.
//
// All writes go through one writer goroutine. It takes every write request
// that is waiting (up to maxBatch) and commits them in one transaction, so
// that many executions' steps share one fsync (group commit); each caller
// learns its own outcome, and a request that fails (a step out of order, a
// duplicate name) does not fail the others of its batch (the batch is then
// replayed one request per transaction). Reads use their own connections.
//
// An execution's steps are rows keyed by the execution's integer key; a
// step's events are packed into its row, so a transition costs one insert
// and one update.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/store"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

const maxBatch = 1024

const schema = `
CREATE TABLE IF NOT EXISTS state_machines (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, definition TEXT NOT NULL,
	role_arn TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, revision TEXT NOT NULL, tags TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS executions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, definition TEXT NOT NULL, type TEXT NOT NULL,
	role_arn TEXT NOT NULL, test_case TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
	output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started INTEGER NOT NULL, stopped INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS executions_by_machine ON executions (state_machine_arn, seq DESC);
CREATE INDEX IF NOT EXISTS executions_running ON executions (status) WHERE status = 'RUNNING';
CREATE TABLE IF NOT EXISTS steps (
	exec INTEGER NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, input BLOB,
	first_event INTEGER NOT NULL, last_event INTEGER NOT NULL, events BLOB NOT NULL,
	PRIMARY KEY (exec, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS steps_by_event ON steps (exec, last_event);
CREATE TABLE IF NOT EXISTS activities (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL);
`

// Store is the SQLite store.
type Store struct {
	db     *sql.DB // readers
	w      *sql.DB // the writer's single connection
	reqs   chan *request
	done   chan struct{}
	closed chan struct{}
	// Statements of the hot write path, prepared once on the writer's
	// connection (parsing SQL per step would dominate the commit path).
	insStep, updExec, selSteps *sql.Stmt
	// cache holds, for the writer goroutine only, each recent execution's
	// row key and next step number, so that a step costs one insert (the
	// executions row is only rewritten when the execution ends). It is
	// dropped whenever a transaction rolls back.
	cache map[string]*execState
}

type execState struct {
	key  int64
	next int64
}

var _ store.Store = (*Store)(nil)

// request is one write: fn runs inside the batch transaction.
type request struct {
	fn  func(tx *sql.Tx) error
	err chan error
}

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(ON)&_pragma=cache_size(-65536)&_pragma=mmap_size(268435456)&_pragma=temp_store(MEMORY)"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{db: r, w: w, reqs: make(chan *request, 4*maxBatch), done: make(chan struct{}), closed: make(chan struct{}), cache: map[string]*execState{}}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.insStep, `INSERT INTO steps VALUES (?,?,?,?,?,?,?)`},
		{&s.updExec, `UPDATE executions SET status=?, output=?, error=?, cause=?, stopped=? WHERE seq=?`},
		{&s.selSteps, `SELECT e.seq, (SELECT COALESCE(MAX(s.seq), -1) FROM steps s WHERE s.exec = e.seq) FROM executions e WHERE e.arn=?`},
	} {
		if *p.dst, err = w.PrepareContext(ctx, p.sql); err != nil {
			w.Close()
			r.Close()
			return nil, fmt.Errorf("prepare %q: %w", p.sql, err)
		}
	}
	go s.writer()
	return s, nil
}

// writer commits queued requests in batches.
func (s *Store) writer() {
	defer close(s.closed)
	for {
		var batch []*request
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		case <-s.done:
			// Drain what is left, then stop.
			for {
				select {
				case r := <-s.reqs:
					s.commit([]*request{r})
				default:
					return
				}
			}
		}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		s.commit(batch)
	}
}

// commit runs a batch in one transaction. When a request fails, the
// transaction is rolled back and every request of the batch is run again
// in a transaction of its own, so that one failing request (a duplicate, a
// step out of order) does not fail the others.
func (s *Store) commit(batch []*request) {
	if len(batch) > 1 {
		if s.commitAll(batch) {
			return
		}
		for _, r := range batch {
			s.commitAll([]*request{r})
		}
		return
	}
	s.commitAll(batch)
}

// commitAll commits the batch in one transaction and answers its callers;
// it returns false, answering nobody, when a request of a batch of several
// failed.
func (s *Store) commitAll(batch []*request) bool {
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range batch {
			r.err <- err
		}
		return true
	}
	for _, r := range batch {
		if err := r.fn(tx); err != nil {
			_ = tx.Rollback()
			clear(s.cache)
			if len(batch) > 1 {
				return false
			}
			r.err <- err
			return true
		}
	}
	err = tx.Commit()
	if err != nil {
		clear(s.cache)
		err = fmt.Errorf("commit: %w", err)
	}
	for _, r := range batch {
		r.err <- err
	}
	return true
}

// write queues fn and waits until its batch is committed.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	r := &request{fn: fn, err: make(chan error, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return errors.New("sqlite store: closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.err:
		return err
	case <-ctx.Done():
		// The write may still commit; the caller must treat it as unknown.
		return ctx.Err()
	}
}

// Close drains pending writes and closes the database.
func (s *Store) Close() error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	<-s.closed
	err1 := s.w.Close()
	err2 := s.db.Close()
	return errors.Join(err1, err2)
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromMS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE constraint failed") || strings.Contains(err.Error(), "PRIMARY KEY"))
}

// CreateStateMachine implements store.Store.
func (s *Store) CreateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, _ := json.Marshal(sm.Tags)
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO state_machines VALUES (?,?,?,?,?,?,?,?,?)`, sm.ARN, sm.Name, sm.Type, sm.Definition, sm.RoleARN, ms(sm.Created), ms(sm.Updated), sm.RevisionID, string(tags))
		return err
	})
	if isUnique(err) {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists)
	}
	return err
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, _ := json.Marshal(sm.Tags)
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE state_machines SET definition=?, role_arn=?, updated=?, revision=?, tags=? WHERE arn=?`, sm.Definition, sm.RoleARN, ms(sm.Updated), sm.RevisionID, string(tags), sm.ARN)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound)
		}
		return nil
	})
}

const smColumns = `arn, name, type, definition, role_arn, created, updated, revision, tags`

func scanSM(row interface{ Scan(...any) error }) (*store.StateMachine, error) {
	var sm store.StateMachine
	var created, updated int64
	var tags string
	if err := row.Scan(&sm.ARN, &sm.Name, &sm.Type, &sm.Definition, &sm.RoleARN, &created, &updated, &sm.RevisionID, &tags); err != nil {
		return nil, err
	}
	sm.Created, sm.Updated = fromMS(created), fromMS(updated)
	_ = json.Unmarshal([]byte(tags), &sm.Tags)
	return &sm, nil
}

// GetStateMachine implements store.Store.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := scanSM(s.db.QueryRowContext(ctx, `SELECT `+smColumns+` FROM state_machines WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	return sm, err
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM state_machines WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
		}
		return nil
	})
}

// offsetPage decodes an offset token.
func offsetPage(p store.Page) (offset, limit int, err error) {
	limit = p.Limit
	if limit <= 0 {
		limit = 100
	}
	if p.Token == "" {
		return 0, limit, nil
	}
	n, err := strconv.Atoi(p.Token)
	if err != nil || n < 0 {
		return 0, 0, store.ErrBadToken
	}
	return n, limit, nil
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	off, limit, err := offsetPage(p)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+smColumns+` FROM state_machines ORDER BY name LIMIT ? OFFSET ?`, limit+1, off)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*store.StateMachine
	for rows.Next() {
		sm, err := scanSM(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, sm)
	}
	return pageResult(out, off, limit, rows.Err())
}

func pageResult[T any](list []T, off, limit int, err error) ([]T, string, error) {
	if err != nil {
		return nil, "", err
	}
	if len(list) > limit {
		return list[:limit], strconv.Itoa(off + limit), nil
	}
	return list, "", nil
}

// insertStep writes a step — one row holding its events — and, when the
// execution's summary changes, updates the execution (row key exec).
func (s *Store) insertStep(tx *sql.Tx, exec int64, st *store.Step) error {
	first, last := int64(0), int64(-1)
	if n := len(st.Events); n > 0 {
		first, last = st.Events[0].ID, st.Events[n-1].ID
	}
	if _, err := tx.Stmt(s.insStep).Exec(exec, st.Seq, ms(st.At), st.Input, first, last, encodeEvents(st.Events)); err != nil {
		return err
	}
	if st.Status != "RUNNING" || st.Seq == 0 {
		if _, err := tx.Stmt(s.updExec).Exec(st.Status, st.Output, st.Error, st.Cause, ms(st.Stopped), exec); err != nil {
			return err
		}
	}
	if c := s.cache[st.ExecutionARN]; c != nil {
		c.next = st.Seq + 1
	}
	return nil
}

// execState returns an execution's row key and next step number.
func (s *Store) execState(tx *sql.Tx, arn string) (*execState, error) {
	if c := s.cache[arn]; c != nil {
		return c, nil
	}
	var key, last int64
	if err := tx.Stmt(s.selSteps).QueryRow(arn).Scan(&key, &last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
		}
		return nil, err
	}
	if len(s.cache) >= 100000 {
		clear(s.cache)
	}
	c := &execState{key: key, next: last + 1}
	s.cache[arn] = c
	return c, nil
}

// encodeEvents packs events as: id (8 bytes), type length (2), type,
// JSON length (4), JSON — repeated.
func encodeEvents(evs []store.Event) []byte {
	n := 0
	for _, ev := range evs {
		n += 14 + len(ev.Type) + len(ev.JSON)
	}
	b := make([]byte, 0, n)
	for _, ev := range evs {
		b = binary.BigEndian.AppendUint64(b, uint64(ev.ID))
		b = binary.BigEndian.AppendUint16(b, uint16(len(ev.Type)))
		b = append(b, ev.Type...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(ev.JSON)))
		b = append(b, ev.JSON...)
	}
	return b
}

func decodeEvents(b []byte) ([]store.Event, error) {
	var out []store.Event
	for len(b) > 0 {
		if len(b) < 10 {
			return nil, errors.New("sqlite store: corrupt event record")
		}
		var ev store.Event
		ev.ID = int64(binary.BigEndian.Uint64(b))
		tl := int(binary.BigEndian.Uint16(b[8:]))
		b = b[10:]
		if len(b) < tl+4 {
			return nil, errors.New("sqlite store: corrupt event record")
		}
		ev.Type = string(b[:tl])
		jl := int(binary.BigEndian.Uint32(b[tl:]))
		b = b[tl+4:]
		if len(b) < jl {
			return nil, errors.New("sqlite store: corrupt event record")
		}
		ev.JSON = b[:jl:jl]
		b = b[jl:]
		out = append(out, ev)
	}
	return out, nil
}

// CreateExecution implements store.Store.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO executions (arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, e.ARN, e.Name, e.StateMachineARN, e.StateMachineName, e.Definition, e.Type, e.RoleARN, e.TestCase, e.Input, e.Status, e.Output, e.Error, e.Cause, ms(e.Started), ms(e.Stopped))
		if err != nil {
			return err
		}
		if first != nil {
			c, err := s.execState(tx, e.ARN)
			if err != nil {
				return err
			}
			return s.insertStep(tx, c.key, first)
		}
		return nil
	})
	if isUnique(err) {
		return fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
	}
	return err
}

const execColumns = `arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped`

func scanExec(row interface{ Scan(...any) error }) (*store.Execution, error) {
	var e store.Execution
	var started, stopped int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input, &e.Status, &e.Output, &e.Error, &e.Cause, &started, &stopped); err != nil {
		return nil, err
	}
	e.Started, e.Stopped = fromMS(started), fromMS(stopped)
	return &e, nil
}

// GetExecution implements store.Store.
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	e, err := scanExec(s.db.QueryRowContext(ctx, `SELECT `+execColumns+` FROM executions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	return e, err
}

func (s *Store) queryExecs(ctx context.Context, query string, args ...any) ([]*store.Execution, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Execution
	for rows.Next() {
		e, err := scanExec(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ListExecutions implements store.Store.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	off, limit, err := offsetPage(p)
	if err != nil {
		return nil, "", err
	}
	q := `SELECT ` + execColumns + ` FROM executions WHERE state_machine_arn=?`
	args := []any{smARN}
	if status != "" {
		q += ` AND status=?`
		args = append(args, status)
	}
	q += ` ORDER BY seq DESC LIMIT ? OFFSET ?`
	args = append(args, limit+1, off)
	list, err := s.queryExecs(ctx, q, args...)
	return pageResult(list, off, limit, err)
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		c, err := s.execState(tx, st.ExecutionARN)
		if err != nil {
			return err
		}
		if st.Seq != c.next {
			return fmt.Errorf("execution %s: step %d out of order, want %d", st.ExecutionARN, st.Seq, c.next)
		}
		return s.insertStep(tx, c.key, st)
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
	rows, err := s.db.QueryContext(ctx, `SELECT seq, at, input, events FROM steps WHERE exec=? ORDER BY seq`, exec)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Step
	for rows.Next() {
		st := &store.Step{ExecutionARN: arn}
		var at int64
		var evs []byte
		if err := rows.Scan(&st.Seq, &at, &st.Input, &evs); err != nil {
			return nil, err
		}
		st.At = fromMS(at)
		if st.Events, err = decodeEvents(evs); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// Events implements store.Store.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	switch {
	case reverse && after > 0:
		rows, err = s.db.QueryContext(ctx, `SELECT events FROM steps WHERE exec=? AND first_event<? ORDER BY seq DESC`, exec, after)
	case reverse:
		rows, err = s.db.QueryContext(ctx, `SELECT events FROM steps WHERE exec=? ORDER BY seq DESC`, exec)
	default:
		rows, err = s.db.QueryContext(ctx, `SELECT events FROM steps WHERE exec=? AND last_event>? ORDER BY seq`, exec, after)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() && len(out) < limit {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		evs, err := decodeEvents(b)
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
	return out, rows.Err()
}

// RunningExecutions implements store.Store.
func (s *Store) RunningExecutions(ctx context.Context) ([]*store.Execution, error) {
	return s.queryExecs(ctx, `SELECT `+execColumns+` FROM executions WHERE status='RUNNING' ORDER BY seq`)
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO activities VALUES (?,?,?)`, a.ARN, a.Name, ms(a.Created))
		return err
	})
	if isUnique(err) {
		return fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists)
	}
	return err
}

// GetActivity implements store.Store.
func (s *Store) GetActivity(ctx context.Context, arn string) (*store.Activity, error) {
	var a store.Activity
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT arn, name, created FROM activities WHERE arn=?`, arn).Scan(&a.ARN, &a.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	a.Created = fromMS(created)
	return &a, err
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM activities WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
		}
		return nil
	})
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	off, limit, err := offsetPage(p)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT arn, name, created FROM activities ORDER BY name LIMIT ? OFFSET ?`, limit+1, off)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*store.Activity
	for rows.Next() {
		var a store.Activity
		var created int64
		if err := rows.Scan(&a.ARN, &a.Name, &created); err != nil {
			return nil, "", err
		}
		a.Created = fromMS(created)
		out = append(out, &a)
	}
	return pageResult(out, off, limit, rows.Err())
}
