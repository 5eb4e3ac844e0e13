package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/store/internal/codec"
)

// DeleteEnded implements store.Retainer: one write of the writer, so a
// batch holds the writer for as long as it takes to delete limit
// executions' rows (see BenchmarkDeleteEnded).
func (s *Store) DeleteEnded(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		limit = 1000
	}
	var deleted int
	err := s.write(ctx, func(tx *sql.Tx) error {
		deleted = 0
		// Steps the writer holds go in first.
		if err := s.flush(tx); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT seq, arn FROM executions WHERE status != 'RUNNING' AND stopped < ? ORDER BY stopped LIMIT ?`, codec.Nanos(before), limit)
		if err != nil {
			return err
		}
		var keys []any
		var arns []string
		for rows.Next() {
			var key int64
			var arn string
			if err := rows.Scan(&key, &arn); err != nil {
				rows.Close()
				return err
			}
			keys, arns = append(keys, key), append(arns, arn)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(keys) == 0 {
			return err
		}
		in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",") + ")"
		if _, err := tx.Exec(`DELETE FROM step_log WHERE exec IN `+in, keys...); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM executions WHERE seq IN `+in, keys...); err != nil {
			return err
		}
		s.changes = append(s.changes, change{kind: deletedAll})
		// With them go their Map Runs (with the child executions and their
		// histories), redrive records and version references.
		names := make([]any, len(arns))
		for i, a := range arns {
			names[i] = a
		}
		for _, q := range []string{
			`DELETE FROM map_run_events WHERE child IN (SELECT c.seq FROM map_run_children c JOIN map_runs r ON c.map_run_arn = r.arn WHERE r.exec_arn IN ` + in + `)`,
			`DELETE FROM map_run_children WHERE map_run_arn IN (SELECT arn FROM map_runs WHERE exec_arn IN ` + in + `)`,
			`DELETE FROM map_runs WHERE exec_arn IN ` + in,
			`DELETE FROM redrives WHERE arn IN ` + in,
			`DELETE FROM execution_refs WHERE exec_arn IN ` + in,
		} {
			if _, err := tx.Exec(q, names...); err != nil {
				return err
			}
		}
		for _, arn := range arns {
			delete(s.cache, arn)
		}
		deleted = len(keys)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite store: deleting ended executions: %w", err)
	}
	return deleted, nil
}
