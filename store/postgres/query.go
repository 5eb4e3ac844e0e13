package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// param is PostgreSQL's placeholder of a query's nth argument.
func param(n int) string { return "$" + strconv.Itoa(n) }

// query runs a list query and scans its rows.
func query[T any](ctx context.Context, s *Store, scan func(sqlrow.Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}

// reads returns a function that runs a list query with scan.
func reads[T any](ctx context.Context, s *Store, scan func(sqlrow.Scanner) (T, error)) func(q string, args []any) ([]T, error) {
	return func(q string, args []any) ([]T, error) { return query(ctx, s, scan, q, args...) }
}

// byName lists a page of a table ordered by (name, arn).
func byName[T any](ctx context.Context, s *Store, kind byte, table, columns string, p store.Page, scan func(sqlrow.Scanner) (T, error), key func(T) (name, arn string)) ([]T, string, error) {
	return sqlrow.ByName(p, kind, table, columns, param, reads(ctx, s, scan), key)
}

// byID lists a page of rows newest first (by id, descending); see
// sqlrow.Newest.
func byID[T any](ctx context.Context, s *Store, kind byte, filter uint64, q string, args []any, status string, p store.Page,
	scan func(sqlrow.Scanner) (sqlrow.Keyed[T], error)) ([]T, string, error) {
	return sqlrow.Newest(p, kind, filter, q, args, status, "id", param, reads(ctx, s, scan))
}
