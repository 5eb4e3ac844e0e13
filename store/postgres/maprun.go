package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// Token kinds of the lists of this file.
const (
	kindMapRuns  = 'm'
	kindChildren = 'c'
)

// PutMapRuns implements store.MapRunStore: one transaction, fenced like
// every write of an execution's owner, its statements sent as one batch.
func (s mapRunPart) PutMapRuns(ctx context.Context, runs []*store.MapRun, children []*store.ChildExecution) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: map runs: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := holdOrLose(ctx, tx, s.member.Load()); err != nil {
		if errors.Is(err, errFenced) {
			return err
		}
		return fmt.Errorf("postgres store: map runs: %w", err)
	}
	// What is stored of the children already: row id and last event.
	type known struct{ id, last int64 }
	have := map[string]known{}
	if len(children) > 0 {
		arns := make([]string, len(children))
		for i, c := range children {
			arns[i] = c.ARN
		}
		rows, err := tx.Query(ctx, `SELECT arn, id, last_event FROM map_run_children WHERE arn = ANY($1)`, arns)
		if err != nil {
			return fmt.Errorf("postgres store: map runs: %w", err)
		}
		for rows.Next() {
			var a string
			var k known
			if err := rows.Scan(&a, &k.id, &k.last); err != nil {
				rows.Close()
				return fmt.Errorf("postgres store: map runs: %w", err)
			}
			have[a] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres store: map runs: %w", err)
		}
	}
	b := &pgx.Batch{}
	for _, r := range runs {
		counts, err := sqlrow.Counts(r)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO map_runs (arn, exec_arn, status, started, stopped, max_concurrency, tolerated_count,
			tolerated_percentage, counts, redrive_count, redrive_date) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)
			ON CONFLICT (arn) DO UPDATE SET status=excluded.status, stopped=excluded.stopped, max_concurrency=excluded.max_concurrency,
			tolerated_count=excluded.tolerated_count, tolerated_percentage=excluded.tolerated_percentage, counts=excluded.counts,
			redrive_count=excluded.redrive_count, redrive_date=excluded.redrive_date`,
			r.ARN, r.ExecutionARN, r.Status, codec.Nanos(r.Started), codec.Nanos(r.Stopped), r.MaxConcurrency,
			r.ToleratedFailureCount, r.ToleratedFailurePercentage, counts, r.RedriveCount, codec.Nanos(r.RedriveDate))
	}
	for _, c := range children {
		k := have[c.ARN]
		var add []store.Event
		for _, ev := range c.Events {
			if ev.ID > k.last {
				add = append(add, ev)
			}
		}
		last := k.last
		if n := len(add); n > 0 {
			last = add[n-1].ID
		}
		if _, ok := have[c.ARN]; ok {
			b.Queue(`UPDATE map_run_children SET status=$1, output=$2, error=$3, cause=$4, stopped=$5, last_event=$6 WHERE id=$7`,
				c.Status, c.Output, toText(c.Error), toText(c.Cause), codec.Nanos(c.Stopped), last, k.id)
		} else {
			b.Queue(`INSERT INTO map_run_children (arn, map_run_arn, name, state_machine_arn, state_machine_name, type, input,
				status, output, error, cause, started, stopped, last_event) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
				c.ARN, c.MapRunARN, c.Name, c.StateMachineARN, c.StateMachineName, c.Type, c.Input,
				c.Status, c.Output, toText(c.Error), toText(c.Cause), codec.Nanos(c.Started), codec.Nanos(c.Stopped), last)
			have[c.ARN] = known{last: last}
		}
		if len(add) > 0 {
			b.Queue(`INSERT INTO map_run_events (child, first, last, events) SELECT id, $2, $3, $4 FROM map_run_children WHERE arn=$1`,
				c.ARN, add[0].ID, last, codec.AppendEvents(nil, add))
		}
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("postgres store: map runs: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres store: map runs: %w", err)
	}
	return nil
}

// GetMapRun implements store.MapRunStore.
func (s mapRunPart) GetMapRun(ctx context.Context, arn string) (*store.MapRun, error) {
	r, err := sqlrow.ScanMapRun(s.pool.QueryRow(ctx, `SELECT `+sqlrow.MapRunColumns+`, id FROM map_runs WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("map run %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return r.V, nil
}

// ListMapRuns implements store.MapRunStore.
func (s mapRunPart) ListMapRuns(ctx context.Context, executionARN string, p store.Page) ([]*store.MapRun, string, error) {
	return byID(ctx, s.Store, kindMapRuns, codec.FilterHash(executionARN), `SELECT `+sqlrow.MapRunColumns+`, id FROM map_runs WHERE exec_arn=$1`,
		[]any{executionARN}, "", p, sqlrow.ScanMapRun)
}

// GetChildExecution implements store.MapRunStore.
func (s mapRunPart) GetChildExecution(ctx context.Context, arn string) (*store.ChildExecution, error) {
	c, err := scanChild(s.pool.QueryRow(ctx, `SELECT `+sqlrow.ChildColumns+`, id FROM map_run_children WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return c.V, nil
}

// ListChildExecutions implements store.MapRunStore.
func (s mapRunPart) ListChildExecutions(ctx context.Context, mapRunARN, status string, p store.Page) ([]*store.ChildExecution, string, error) {
	return byID(ctx, s.Store, kindChildren, codec.FilterHash(mapRunARN, status), `SELECT `+sqlrow.ChildColumns+`, id FROM map_run_children WHERE map_run_arn=$1`,
		[]any{mapRunARN}, status, p, scanChild)
}

// ChildEvents implements store.MapRunStore.
func (s mapRunPart) ChildEvents(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	var key int64
	if err := s.pool.QueryRow(ctx, `SELECT id FROM map_run_children WHERE arn=$1`, arn).Scan(&key); errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT events FROM map_run_events WHERE child=$1 ORDER BY first`, key)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	all, err := sqlrow.ChildEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return store.PageEvents(all, after, limit, reverse), nil
}

// PutRedrive implements store.MapRunStore.
func (s mapRunPart) PutRedrive(ctx context.Context, executionARN string, r store.Redrive) error {
	_, err := s.exec(ctx, `INSERT INTO redrives (arn, count, date) VALUES ($1,$2,$3) ON CONFLICT (arn) DO UPDATE SET count=excluded.count, date=excluded.date`,
		executionARN, r.Count, codec.Nanos(r.Date))
	return err
}

// GetRedrive implements store.MapRunStore.
func (s mapRunPart) GetRedrive(ctx context.Context, executionARN string) (store.Redrive, error) {
	r, err := sqlrow.ScanRedrive(s.pool.QueryRow(ctx, `SELECT `+sqlrow.RedriveColumns+` FROM redrives WHERE arn=$1`, executionARN))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Redrive{}, nil
	}
	if err != nil {
		return store.Redrive{}, fmt.Errorf("postgres store: %w", err)
	}
	return r.R, nil
}

// GetRedrives implements store.MapRunStore.
func (s mapRunPart) GetRedrives(ctx context.Context, arns []string) (map[string]store.Redrive, error) {
	out := map[string]store.Redrive{}
	if len(arns) == 0 {
		return out, nil
	}
	records, err := query(ctx, s.Store, sqlrow.ScanRedrive, `SELECT `+sqlrow.RedriveColumns+` FROM redrives WHERE arn = ANY($1)`, arns)
	for _, rec := range records {
		out[rec.ARN] = rec.R
	}
	return out, err
}
