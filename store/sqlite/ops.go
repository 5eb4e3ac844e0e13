package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

var (
	_ store.Retainer = (*Store)(nil)
	_ store.Outbox   = (*Store)(nil)
)

// opsSchema holds the tables and indexes of operations: ended executions
// by stop time (retention) and the outbox of status changes (events).
const opsSchema = `
CREATE INDEX IF NOT EXISTS executions_ended ON executions (stopped) WHERE status != 'RUNNING';
CREATE TABLE IF NOT EXISTS notices (
	id INTEGER PRIMARY KEY, exec_arn TEXT NOT NULL, status TEXT NOT NULL, at INTEGER NOT NULL,
	due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (exec_arn, status));
CREATE INDEX IF NOT EXISTS notices_due ON notices (due, id);
`

// migrateOps adds the state machines' logging column to databases made
// before it, and the schema of operations.
func migrateOps(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('state_machines') WHERE name='logging'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := db.ExecContext(ctx, `ALTER TABLE state_machines ADD COLUMN logging TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	_, err := db.ExecContext(ctx, opsSchema)
	return err
}

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

// AddNotice implements store.Outbox.
func (s *Store) AddNotice(ctx context.Context, executionARN, status string, at time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR IGNORE INTO notices (exec_arn, status, at, due) VALUES (?,?,?,?)`, executionARN, status, codec.Nanos(at), codec.Nanos(at))
		return err
	})
}

// TakeNotices implements store.Outbox.
func (s *Store) TakeNotices(ctx context.Context, now time.Time, hold time.Duration, limit int) ([]*store.Notice, error) {
	var out []*store.Notice
	err := s.write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.Query(`SELECT id, exec_arn, status, at, attempts FROM notices WHERE due <= ? ORDER BY due, id LIMIT ?`, codec.Nanos(now), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n store.Notice
			var at int64
			if err := rows.Scan(&n.ID, &n.ExecutionARN, &n.Status, &at, &n.Attempts); err != nil {
				rows.Close()
				return err
			}
			n.At = codec.FromNanos(at)
			out = append(out, &n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, n := range out {
			if _, err := tx.Exec(`UPDATE notices SET due=? WHERE id=?`, codec.Nanos(now.Add(hold)), n.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store: taking notices: %w", err)
	}
	return out, nil
}

// DoneNotice implements store.Outbox.
func (s *Store) DoneNotice(ctx context.Context, id int64) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM notices WHERE id=?`, id)
		return err
	})
}

// RetryNotice implements store.Outbox.
func (s *Store) RetryNotice(ctx context.Context, id int64, due time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE notices SET attempts=attempts+1, due=? WHERE id=?`, codec.Nanos(due), id)
		return err
	})
}
