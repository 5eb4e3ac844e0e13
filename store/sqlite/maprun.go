package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// mapRunSchema holds the Map Runs, their child executions (summary and
// history, the events of each write packed in one row as step_log does)
// and the redrive records of executions.
const mapRunSchema = `
CREATE TABLE IF NOT EXISTS map_runs (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, exec_arn TEXT NOT NULL, status TEXT NOT NULL,
	started INTEGER NOT NULL, stopped INTEGER NOT NULL, max_concurrency INTEGER NOT NULL, tolerated_count INTEGER NOT NULL,
	tolerated_percentage REAL NOT NULL, counts TEXT NOT NULL, redrive_count INTEGER NOT NULL, redrive_date INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS map_runs_by_exec ON map_runs (exec_arn, seq DESC);
CREATE TABLE IF NOT EXISTS map_run_children (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, map_run_arn TEXT NOT NULL, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, type TEXT NOT NULL, input TEXT NOT NULL,
	status TEXT NOT NULL, output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started INTEGER NOT NULL,
	stopped INTEGER NOT NULL, last_event INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS map_run_children_by_run ON map_run_children (map_run_arn, seq DESC);
CREATE INDEX IF NOT EXISTS map_run_children_by_status ON map_run_children (map_run_arn, status, seq DESC);
CREATE TABLE IF NOT EXISTS map_run_events (
	child INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, events BLOB NOT NULL, PRIMARY KEY (child, first));
CREATE TABLE IF NOT EXISTS redrives (arn TEXT PRIMARY KEY, count INTEGER NOT NULL, date INTEGER NOT NULL);
`

// Token kinds of the lists of this file.
const (
	kindMapRuns  = 'm'
	kindChildren = 'c'
)

// putChunk is the most child executions PutMapRuns writes in one
// transaction, so that a Map Run of 100,000 children does not hold the
// writer for one long transaction (the writes are idempotent, so a crash
// between chunks loses nothing a replay does not write again).
const putChunk = 2000

// PutMapRuns implements store.MapRunStore.
func (s mapRunPart) PutMapRuns(ctx context.Context, runs []*store.MapRun, children []*store.ChildExecution) error {
	for {
		n := min(len(children), putChunk)
		if err := s.putMapRuns(ctx, runs, children[:n]); err != nil {
			return err
		}
		runs, children = nil, children[n:]
		if len(children) == 0 {
			return nil
		}
	}
}

func (s mapRunPart) putMapRuns(ctx context.Context, runs []*store.MapRun, children []*store.ChildExecution) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if len(runs) > 0 {
			up, err := tx.PrepareContext(ctx, `INSERT INTO map_runs (arn, exec_arn, status, started, stopped, max_concurrency, tolerated_count,
				tolerated_percentage, counts, redrive_count, redrive_date) VALUES (?,?,?,?,?,?,?,?,?,?,?)
				ON CONFLICT (arn) DO UPDATE SET status=excluded.status, stopped=excluded.stopped, max_concurrency=excluded.max_concurrency,
				tolerated_count=excluded.tolerated_count, tolerated_percentage=excluded.tolerated_percentage, counts=excluded.counts,
				redrive_count=excluded.redrive_count, redrive_date=excluded.redrive_date`)
			if err != nil {
				return err
			}
			defer up.Close()
			for _, r := range runs {
				counts, err := sqlrow.Counts(r)
				if err != nil {
					return err
				}
				if _, err := up.ExecContext(ctx, r.ARN, r.ExecutionARN, r.Status, codec.Nanos(r.Started), codec.Nanos(r.Stopped), r.MaxConcurrency,
					r.ToleratedFailureCount, r.ToleratedFailurePercentage, counts, r.RedriveCount, codec.Nanos(r.RedriveDate)); err != nil {
					return fmt.Errorf("map run %s: %w", r.ARN, err)
				}
			}
		}
		if len(children) == 0 {
			return nil
		}
		// One statement per child: its summary, replaced, its row key and
		// the last event stored before (an insert stores the write's last).
		up, err := tx.PrepareContext(ctx, `INSERT INTO map_run_children (arn, map_run_arn, name, state_machine_arn, state_machine_name, type, input,
			status, output, error, cause, started, stopped, last_event) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (arn) DO UPDATE SET status=excluded.status, output=excluded.output, error=excluded.error, cause=excluded.cause,
			stopped=excluded.stopped RETURNING seq, last_event`)
		if err != nil {
			return err
		}
		defer up.Close()
		// The events of one write, packed in a row keyed by the child and
		// its first event; a write seen before (a replay) is ignored.
		evs, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO map_run_events (child, first, last, events) VALUES (?,?,?,?)`)
		if err != nil {
			return err
		}
		defer evs.Close()
		grow, err := tx.PrepareContext(ctx, `UPDATE map_run_children SET last_event=? WHERE seq=?`)
		if err != nil {
			return err
		}
		defer grow.Close()
		var buf []byte
		for _, c := range children {
			var last int64
			if n := len(c.Events); n > 0 {
				last = c.Events[n-1].ID
			}
			var key, had int64
			if err := up.QueryRowContext(ctx, c.ARN, c.MapRunARN, c.Name, c.StateMachineARN, c.StateMachineName, c.Type, c.Input,
				c.Status, c.Output, c.Error, c.Cause, codec.Nanos(c.Started), codec.Nanos(c.Stopped), last).Scan(&key, &had); err != nil {
				return fmt.Errorf("child execution %s: %w", c.ARN, err)
			}
			add := c.Events
			if had < last {
				// Stored before with fewer events: add the others.
				for len(add) > 0 && add[0].ID <= had {
					add = add[1:]
				}
				if _, err := grow.ExecContext(ctx, last, key); err != nil {
					return err
				}
			}
			if len(add) > 0 {
				buf = codec.AppendEvents(buf[:0], add)
				if _, err := evs.ExecContext(ctx, key, add[0].ID, last, buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// GetMapRun implements store.MapRunStore.
func (s mapRunPart) GetMapRun(ctx context.Context, arn string) (*store.MapRun, error) {
	r, err := sqlrow.ScanMapRun(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.MapRunColumns+`, seq FROM map_runs WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("map run %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return r.V, nil
}

// ListMapRuns implements store.MapRunStore.
func (s mapRunPart) ListMapRuns(ctx context.Context, executionARN string, p store.Page) ([]*store.MapRun, string, error) {
	return bySeq(ctx, s.db, kindMapRuns, codec.FilterHash(executionARN), `SELECT `+sqlrow.MapRunColumns+`, seq FROM map_runs WHERE exec_arn=?`,
		[]any{executionARN}, "", p, sqlrow.ScanMapRun)
}

// GetChildExecution implements store.MapRunStore.
func (s mapRunPart) GetChildExecution(ctx context.Context, arn string) (*store.ChildExecution, error) {
	c, err := sqlrow.ScanChild(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.ChildColumns+`, seq FROM map_run_children WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return c.V, nil
}

// ListChildExecutions implements store.MapRunStore.
func (s mapRunPart) ListChildExecutions(ctx context.Context, mapRunARN, status string, p store.Page) ([]*store.ChildExecution, string, error) {
	return bySeq(ctx, s.db, kindChildren, codec.FilterHash(mapRunARN, status), `SELECT `+sqlrow.ChildColumns+`, seq FROM map_run_children WHERE map_run_arn=?`,
		[]any{mapRunARN}, status, p, sqlrow.ScanChild)
}

// ChildEvents implements store.MapRunStore.
func (s mapRunPart) ChildEvents(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	var key int64
	if err := s.db.QueryRowContext(ctx, `SELECT seq FROM map_run_children WHERE arn=?`, arn).Scan(&key); errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT events FROM map_run_events WHERE child=? ORDER BY first`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	all, err := sqlrow.ChildEvents(rows) // rows may overlap (see PutMapRuns)
	if err != nil {
		return nil, err
	}
	return store.PageEvents(all, after, limit, reverse), nil
}

// PutRedrive implements store.MapRunStore.
func (s mapRunPart) PutRedrive(ctx context.Context, executionARN string, r store.Redrive) error {
	s.redrives.adding()
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO redrives (arn, count, date) VALUES (?,?,?) ON CONFLICT (arn) DO UPDATE SET count=excluded.count, date=excluded.date`,
			executionARN, r.Count, codec.Nanos(r.Date))
		return err
	})
}

// GetRedrive implements store.MapRunStore.
func (s mapRunPart) GetRedrive(ctx context.Context, executionARN string) (store.Redrive, error) {
	if empty, err := s.redrives.empty(ctx, s.db); err != nil || empty {
		return store.Redrive{}, err
	}
	r, err := sqlrow.ScanRedrive(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.RedriveColumns+` FROM redrives WHERE arn=?`, executionARN))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Redrive{}, nil
	}
	if err != nil {
		return store.Redrive{}, err
	}
	return r.R, nil
}

// GetRedrives implements store.MapRunStore.
func (s mapRunPart) GetRedrives(ctx context.Context, arns []string) (map[string]store.Redrive, error) {
	out := map[string]store.Redrive{}
	if len(arns) == 0 {
		return out, nil
	}
	if empty, err := s.redrives.empty(ctx, s.db); err != nil || empty {
		return out, err
	}
	list, err := json.Marshal(arns)
	if err != nil {
		return nil, err
	}
	records, err := query(ctx, s.db, sqlrow.ScanRedrive, `SELECT `+sqlrow.RedriveColumns+` FROM redrives WHERE arn IN (SELECT value FROM json_each(?))`, string(list))
	for _, rec := range records {
		out[rec.ARN] = rec.R
	}
	return out, err
}
