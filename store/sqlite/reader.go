package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/stepd/stepd/store/internal/sqlrow"
)

// readers is how many read connections the pool holds. Under a load of
// many more callers, a read holding a connection may wait for a core in
// the middle of its query; with 4 connections the reads behind it waited
// too (the API load's p99 86–109 ms, against 62–78 ms with 16, alternating
// in one run).
const readers = 16

// reader is the pool of read connections with its prepared statements:
// each distinct query text (values are always parameters, so there are
// few) is prepared once rather than parsed on every call, which cost about
// as much as running the query.
//
// Reads take their turn at the gate, first come first served, before
// they ask database/sql for a connection: database/sql hands a freed
// connection to a waiting caller picked at random, so under a load of
// more callers than connections some waited many times longer than the
// rest (the tail of the API's latency). The gate holds as many places as
// the pool has connections, so database/sql never makes a caller wait.
type reader struct {
	db    *sql.DB
	stmts sync.Map      // query text → *sql.Stmt
	gate  chan struct{} // a place per connection, taken in arrival order
}

func newReader(db *sql.DB) *reader {
	db.SetMaxOpenConns(readers)
	db.SetMaxIdleConns(readers)
	return &reader{db: db, gate: make(chan struct{}, readers)}
}

// enter waits for a place at the gate (blocked senders on a channel are
// served in the order they came).
func (r *reader) enter(ctx context.Context) error {
	select {
	case r.gate <- struct{}{}:
		return nil
	default:
	}
	select {
	case r.gate <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives the place back.
func (r *reader) leave() { <-r.gate }

func (r *reader) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := r.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := r.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, unavailable(err)
	}
	if old, loaded := r.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return old.(*sql.Stmt), nil
	}
	return st, nil
}

// QueryContext runs a query with q's prepared statement. The rows hold
// their place at the gate until they are closed.
func (r *reader) QueryContext(ctx context.Context, q string, args ...any) (*rows, error) {
	st, err := r.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		r.leave()
		return nil, unavailable(err)
	}
	return &rows{Rows: rs, r: r}, nil
}

// QueryRowContext runs a query for one row with q's prepared statement.
// The row holds its place at the gate until it is scanned.
func (r *reader) QueryRowContext(ctx context.Context, q string, args ...any) sqlrow.Scanner {
	st, err := r.stmt(ctx, q)
	if err != nil {
		return failed{err}
	}
	if err := r.enter(ctx); err != nil {
		return failed{err}
	}
	return &row{row: st.QueryRowContext(ctx, args...), r: r}
}

// BeginTx starts a read transaction, which holds its place at the gate
// until done is called (after it commits or rolls back).
func (r *reader) BeginTx(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	if err := r.enter(ctx); err != nil {
		return nil, nil, err
	}
	tx, err = r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		r.leave()
		return nil, nil, unavailable(err)
	}
	var once sync.Once
	return tx, func() { once.Do(r.leave) }, nil
}

// eachConn runs fn on every connection of the pool, once every place at
// the gate is taken (so that they are all idle).
func (r *reader) eachConn(ctx context.Context, fn func(c *sql.Conn) error) error {
	taken := 0
	defer func() {
		for range taken {
			r.leave()
		}
	}()
	for range readers {
		if err := r.enter(ctx); err != nil {
			return err
		}
		taken++
	}
	conns := make([]*sql.Conn, 0, readers)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var errs []error
	for range readers {
		c, err := r.db.Conn(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		conns = append(conns, c)
		errs = append(errs, fn(c))
	}
	return errors.Join(errs...)
}

// rows are a query's rows with their place at the gate.
type rows struct {
	*sql.Rows
	r    *reader
	left bool
}

// Close closes the rows and gives their place back.
func (rs *rows) Close() error {
	err := rs.Rows.Close()
	if !rs.left {
		rs.left = true
		rs.r.leave()
	}
	return err
}

// Err is the error that ended the iteration, if any.
func (rs *rows) Err() error { return unavailable(rs.Rows.Err()) }

// row is a query's row with its place at the gate.
type row struct {
	row *sql.Row
	r   *reader
}

// Scan scans the row and gives its place back.
func (w *row) Scan(dest ...any) error {
	defer w.r.leave()
	return unavailable(w.row.Scan(dest...))
}

// Close closes the statements and the pool.
func (r *reader) Close() error {
	var errs []error
	r.stmts.Range(func(_, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		return true
	})
	return errors.Join(append(errs, r.db.Close())...)
}

// failed is the row of a query that could not be prepared.
type failed struct{ err error }

func (f failed) Scan(...any) error { return f.err }
