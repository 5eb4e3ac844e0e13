package sqlite

import (
	"context"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// Page tokens, times and packed events are store/internal/codec's, shared
// with the PostgreSQL store.
const (
	kindStateMachines = codec.KindStateMachines
	kindExecutions    = codec.KindExecutions
	kindActivities    = codec.KindActivities
)

type scanner interface{ Scan(...any) error }

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
