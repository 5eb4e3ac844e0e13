// Package sqlrow holds what the SQL backends (sqlite, postgres) share of
// their rows: the column lists of their tables and the scanners that read
// them into store types, the encoders of the columns that hold JSON
// (tags, routes, Map Run counts), and the readers of packed events and of
// running executions' steps. Both databases store times as Unix
// nanoseconds (codec.Nanos), booleans as what their drivers scan into a
// bool, and blobs as bytes, so one scanner serves both: it takes a
// Scanner, which *sql.Row, *sql.Rows, pgx.Row and pgx.Rows all are. The
// SQL around the columns, which differs by dialect, stays in each backend.
//
// It imports only store and store/internal/codec, and must not import a
// backend, a database driver or anything above.
package sqlrow

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Rows is the result of a query: *sql.Rows, pgx.Rows.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Keyed is a row's item with its row key (what a list's token holds).
type Keyed[T any] struct {
	V   T
	Key int64
}

// Collect scans every row of rs with scan. The caller closes rs.
func Collect[T any](rs Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}
