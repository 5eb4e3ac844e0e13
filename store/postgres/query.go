package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

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

// list reads one page, newest first, of a query whose rows scan into T
// with a row id.
func list[T any](ctx context.Context, s *Store, kind byte, filter uint64, p store.Page, q string, args []any, scan func(pgx.Row) (T, error), key func(T) int64) ([]T, string, error) {
	limit := codec.PageLimit(p)
	if p.Token != "" {
		before, _, err := codec.ParseToken(p.Token, kind, filter, 0)
		if err != nil {
			return nil, "", err
		}
		args = append(args, before)
		q += fmt.Sprintf(` AND id<$%d`, len(args))
	}
	args = append(args, limit+1)
	rows, err := s.pool.Query(ctx, q+fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, "", fmt.Errorf("postgres store: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("postgres store: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = codec.MakeToken(kind, filter, key(out[limit-1]))
	}
	return out, next, nil
}
