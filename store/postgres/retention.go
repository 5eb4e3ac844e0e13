package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/stepd/stepd/store/internal/codec"
)

// DeleteEnded implements store.Retainer: one statement, which takes the
// executions it deletes with SKIP LOCKED so that two nodes deleting at
// once do not wait for each other.
func (s *Store) DeleteEnded(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		limit = 1000
	}
	var n int
	err := s.pool.QueryRow(ctx, `WITH gone AS (
		DELETE FROM executions WHERE id IN (
			SELECT id FROM executions WHERE status <> 'RUNNING' AND stopped < $1 ORDER BY stopped LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, arn),
	steps AS (DELETE FROM step_log WHERE exec IN (SELECT id FROM gone)),
	runs AS (DELETE FROM map_runs WHERE exec_arn IN (SELECT arn FROM gone) RETURNING arn),
	children AS (DELETE FROM map_run_children WHERE map_run_arn IN (SELECT arn FROM runs) RETURNING id),
	child_events AS (DELETE FROM map_run_events WHERE child IN (SELECT id FROM children)),
	redriven AS (DELETE FROM redrives WHERE arn IN (SELECT arn FROM gone)),
	refs AS (DELETE FROM execution_refs WHERE exec_arn IN (SELECT arn FROM gone))
	SELECT COUNT(*) FROM gone`, codec.Nanos(before), limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres store: deleting ended executions: %w", err)
	}
	return n, nil
}
