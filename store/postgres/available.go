package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stepd/stepd/store"
)

// An unavailableError is a database that cannot do the work now but may in
// a moment (it is down, restarting, unreachable, out of disk): it is
// store.ErrUnavailable, which the API answers as a retryable
// ServiceUnavailable, and the engine waits it out.
type unavailableError struct {
	reason string // what the user is told, e.g. "the database's disk is full"
	err    error
}

func (e *unavailableError) Error() string   { return e.reason + " (" + e.err.Error() + "); try again" }
func (e *unavailableError) Unwrap() []error { return []error{e.err, store.ErrUnavailable} }

// classify returns err as an unavailableError when it says that the
// database cannot do the work now, and err itself otherwise: a refused
// statement (a constraint, a syntax error, a type), no rows, a canceled
// request, bad credentials or a missing database stay what they are.
func classify(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if reason := unavailableReason(err); reason != "" {
		return &unavailableError{reason: reason, err: err}
	}
	return err
}

// unavailableReason says why err is a database that is unavailable, or ""
// when it is not.
func unavailableReason(err error) string {
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, context.Canceled) {
		return ""
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return sqlStateReason(pe.Code)
	}
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce):
		return "the database cannot be reached"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.Is(err, pgconn.ErrConnClosed):
		return "the connection to the database was lost"
	case pgconn.Timeout(err), errors.Is(err, context.DeadlineExceeded):
		return "the database did not answer in time"
	case pgconn.SafeToRetry(err):
		return "the connection to the database was lost"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "the connection to the database was lost"
	}
	return ""
}

// sqlStateReason says why a database that answered with SQLSTATE code
// cannot do the work now, or "" when the answer refuses the statement.
func sqlStateReason(code string) string {
	switch {
	case code == "53100":
		return "the database's disk is full"
	case code == "53200":
		return "the database is out of memory"
	case code == "53300":
		return "the database has too many connections"
	case strings.HasPrefix(code, "53"):
		return "the database has run out of a resource"
	case code == "57P01", code == "57P02":
		return "the database is shutting down"
	case code == "57P03":
		return "the database is starting up"
	case code == "57P05":
		return "the database closed an idle connection"
	case strings.HasPrefix(code, "08"):
		return "the connection to the database was lost"
	case code == "25006":
		return "the database is read-only (a standby, or a server in recovery)"
	case code == "40001", code == "40P01":
		return "the database aborted a transaction that conflicted with another"
	case code == "55P03":
		return "the database could not take a lock"
	case code == "58030":
		return "the database could not read or write its files"
	}
	return ""
}

// A pool is the store's connection pool, whose errors are classified (an
// unavailable database is store.ErrUnavailable), down to the rows and
// transactions it hands out.
type pool struct{ p *pgxpool.Pool }

func (d pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	t, err := d.p.Exec(ctx, sql, args...)
	return t, classify(err)
}

func (d pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := d.p.Query(ctx, sql, args...)
	if err != nil {
		return r, classify(err)
	}
	return classifiedRows{r}, nil
}

func (d pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{d.p.QueryRow(ctx, sql, args...)}
}

func (d pool) Begin(ctx context.Context) (pgx.Tx, error) {
	return d.BeginTx(ctx, pgx.TxOptions{})
}

func (d pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	t, err := d.p.BeginTx(ctx, opts)
	if err != nil {
		return nil, classify(err)
	}
	return classifiedTx{t}, nil
}

func (d pool) Acquire(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := d.p.Acquire(ctx)
	return c, classify(err)
}

func (d pool) Close() { d.p.Close() }

// classifiedRows are a query's rows whose error is classified.
type classifiedRows struct{ pgx.Rows }

func (r classifiedRows) Err() error { return classify(r.Rows.Err()) }

// classifiedRow is a query's row whose error is classified.
type classifiedRow struct{ r pgx.Row }

func (r classifiedRow) Scan(dest ...any) error { return classify(r.r.Scan(dest...)) }

// classifiedTx is a transaction whose errors are classified.
type classifiedTx struct{ pgx.Tx }

func (t classifiedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c, err := t.Tx.Exec(ctx, sql, args...)
	return c, classify(err)
}

func (t classifiedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := t.Tx.Query(ctx, sql, args...)
	if err != nil {
		return r, classify(err)
	}
	return classifiedRows{r}, nil
}

func (t classifiedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{t.Tx.QueryRow(ctx, sql, args...)}
}

func (t classifiedTx) Commit(ctx context.Context) error { return classify(t.Tx.Commit(ctx)) }

func (t classifiedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return classifiedBatch{t.Tx.SendBatch(ctx, b)}
}

// classifiedBatch are a batch's results whose errors are classified.
type classifiedBatch struct{ pgx.BatchResults }

func (b classifiedBatch) Exec() (pgconn.CommandTag, error) {
	t, err := b.BatchResults.Exec()
	return t, classify(err)
}

func (b classifiedBatch) Close() error { return classify(b.BatchResults.Close()) }
