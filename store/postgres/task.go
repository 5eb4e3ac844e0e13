package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
)

// tasksChannel is the channel of activity tasks' offers (the payload is
// the activity's ARN). It is the same for every schema of a database: an
// offer in another schema only wakes takers for nothing.
const tasksChannel = "stepd_tasks"

// Offered implements store.Shared: the channel is closed when Receive
// hears an offer of the activity.
func (s *Store) Offered(activityARN string) <-chan struct{} {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	ch, ok := s.offered[activityARN]
	if !ok {
		ch = make(chan struct{})
		s.offered[activityARN] = ch
	}
	return ch
}

// OfferTask implements store.Shared.
func (s *Store) OfferTask(ctx context.Context, t *store.ActivityTask) error {
	// The notification (sent at the commit) wakes the takers waiting on
	// every node (Offered).
	if _, err := s.exec(ctx, `WITH i AS (INSERT INTO activity_tasks (activity_arn, exec_arn, token, input) VALUES ($1, $2, $3, $4)
		ON CONFLICT (token) DO NOTHING RETURNING activity_arn)
		SELECT pg_notify('`+tasksChannel+`', activity_arn) FROM i`,
		t.ActivityARN, t.ExecutionARN, t.Token, t.Input); err != nil {
		return fmt.Errorf("offer an activity task: %w", err)
	}
	return nil
}

// TakeTask implements store.Shared: the oldest row that is queued, or held
// by a node whose lease has lapsed, is marked held by this node in the one
// transaction that locks it; the others skip it.
func (s *Store) TakeTask(ctx context.Context, activityARN string) (*store.ActivityTask, error) {
	t := &store.ActivityTask{ActivityARN: activityARN}
	err := s.pool.QueryRow(ctx, `UPDATE activity_tasks SET taken_by = $2 WHERE id = (
		SELECT t.id FROM activity_tasks t WHERE t.activity_arn = $1
			AND (t.taken_by IS NULL OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.taken_by AND n.lease_until > now()))
		ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING exec_arn, token, input`, activityARN, s.Node()).Scan(&t.ExecutionARN, &t.Token, &t.Input)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: take an activity task: %w", err)
	}
	return t, nil
}

// DropTask implements store.Shared.
func (s *Store) DropTask(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM activity_tasks WHERE token = $1 AND taken_by = $2`, token, s.Node()); err != nil {
		return fmt.Errorf("postgres store: drop an activity task: %w", err)
	}
	return nil
}

// ReleaseTask implements store.Shared: the task is queued again, and its
// offer wakes the takers (Offered).
func (s *Store) ReleaseTask(ctx context.Context, token string) error {
	if _, err := s.pool.Exec(ctx, `WITH u AS (UPDATE activity_tasks SET taken_by = NULL WHERE token = $1 AND taken_by = $2 RETURNING activity_arn)
		SELECT pg_notify('`+tasksChannel+`', activity_arn) FROM u`, token, s.Node()); err != nil {
		return fmt.Errorf("postgres store: release an activity task: %w", err)
	}
	return nil
}
