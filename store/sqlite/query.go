package sqlite

import (
	"context"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// Page tokens, times and packed events are store/internal/codec's, shared
// with the PostgreSQL store.
const (
	kindStateMachines = codec.KindStateMachines
	kindExecutions    = codec.KindExecutions
	kindActivities    = codec.KindActivities
)

// query runs a list query and scans its rows.
func query[T any](ctx context.Context, db *reader, scan func(sqlrow.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlrow.Collect(rows, scan)
}

// param is SQLite's placeholder of a query's arguments.
func param(int) string { return "?" }

// byName lists a page of a table ordered by (name, arn).
func byName[T any](ctx context.Context, db *reader, kind byte, table, columns string, p store.Page, scan func(sqlrow.Scanner) (T, error), key func(T) (name, arn string)) ([]T, string, error) {
	return sqlrow.ByName(p, kind, table, columns, param, reads(ctx, db, scan), key)
}

// bySeq lists a page of rows newest first (by seq, descending); see
// sqlrow.Newest.
func bySeq[T any](ctx context.Context, db *reader, kind byte, filter uint64, q string, args []any, status string, p store.Page,
	scan func(sqlrow.Scanner) (sqlrow.Keyed[T], error)) ([]T, string, error) {
	return sqlrow.Newest(p, kind, filter, q, args, status, "seq", param, reads(ctx, db, scan))
}

// reads returns a function that runs a list query with scan.
func reads[T any](ctx context.Context, db *reader, scan func(sqlrow.Scanner) (T, error)) func(q string, args []any) ([]T, error) {
	return func(q string, args []any) ([]T, error) { return query(ctx, db, scan, q, args...) }
}
