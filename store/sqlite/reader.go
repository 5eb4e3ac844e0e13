package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// reader is the pool of read connections with its prepared statements:
// each distinct query text (values are always parameters, so there are
// few) is prepared once rather than parsed on every call, which cost about
// as much as running the query.
type reader struct {
	db    *sql.DB
	stmts sync.Map // query text → *sql.Stmt
}

func (r *reader) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := r.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := r.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if old, loaded := r.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return old.(*sql.Stmt), nil
	}
	return st, nil
}

// QueryContext runs a query with q's prepared statement.
func (r *reader) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := r.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a query for one row with q's prepared statement.
func (r *reader) QueryRowContext(ctx context.Context, q string, args ...any) scanner {
	st, err := r.stmt(ctx, q)
	if err != nil {
		return failed{err}
	}
	return st.QueryRowContext(ctx, args...)
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
