package sqlrow

import (
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// Param writes the placeholder of a query's nth argument (from 1): "?"
// for SQLite, "$n" for PostgreSQL.
type Param func(n int) string

// Page cuts list, read with one row more than a page's limit, to the page,
// and returns with it the token of its last item (tok) when there are more.
func Page[T any](list []T, limit int, tok func(last T) string) ([]T, string) {
	if len(list) <= limit {
		return list, ""
	}
	list = list[:limit]
	return list, tok(list[limit-1])
}

// ByName reads a page of a table ordered by (name, arn): columns of the
// rows after the page's token, which holds the last name and ARN read
// (key), checked against kind. read runs a query.
func ByName[T any](p store.Page, kind byte, table, columns string, param Param, read func(q string, args []any) ([]T, error), key func(T) (name, arn string)) ([]T, string, error) {
	limit := codec.PageLimit(p)
	q, args := `SELECT `+columns+` FROM `+table, []any{}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kind, 0, 2)
		if err != nil {
			return nil, "", err
		}
		q += ` WHERE (name, arn) > (` + param(1) + `, ` + param(2) + `)`
		args = append(args, k[0], k[1])
	}
	list, err := read(q+` ORDER BY name, arn LIMIT `+param(len(args)+1), append(args, limit+1))
	if err != nil {
		return nil, "", err
	}
	list, next := Page(list, limit, func(last T) string {
		name, arn := key(last)
		return codec.MakeToken(kind, 0, 0, name, arn)
	})
	return list, next, nil
}

// Newest reads a page of rows newest first, by their row key (column
// keyColumn, descending): q selects them with args (it ends in a WHERE
// clause), status (when given) narrows them to one status, and the page's
// token holds the last key read, checked against kind and filter. read
// runs a query.
func Newest[T any](p store.Page, kind byte, filter uint64, q string, args []any, status, keyColumn string, param Param, read func(q string, args []any) ([]Keyed[T], error)) ([]T, string, error) {
	limit := codec.PageLimit(p)
	if status != "" {
		args = append(args, status)
		q += ` AND status=` + param(len(args))
	}
	if p.Token != "" {
		before, _, err := codec.ParseToken(p.Token, kind, filter, 0)
		if err != nil {
			return nil, "", err
		}
		args = append(args, before)
		q += ` AND ` + keyColumn + `<` + param(len(args))
	}
	rows, err := read(q+` ORDER BY `+keyColumn+` DESC LIMIT `+param(len(args)+1), append(args, limit+1))
	if err != nil {
		return nil, "", err
	}
	rows, next := Page(rows, limit, func(last Keyed[T]) string { return codec.MakeToken(kind, filter, last.Key) })
	list := make([]T, len(rows))
	for i, r := range rows {
		list[i] = r.V
	}
	return list, next, nil
}
