package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// AddNotice implements store.Outbox.
func (s *Store) AddNotice(ctx context.Context, executionARN, status string, at time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO notices (exec_arn, status, at, due) VALUES ($1,$2,$3,$3) ON CONFLICT DO NOTHING`, executionARN, status, codec.Nanos(at))
	return err
}

// TakeNotices implements store.Outbox: the notices taken are locked with
// SKIP LOCKED, so nodes taking at once take different ones.
func (s *Store) TakeNotices(ctx context.Context, now time.Time, hold time.Duration, limit int) ([]*store.Notice, error) {
	rows, err := s.pool.Query(ctx, `UPDATE notices SET due = $2 WHERE id IN (
		SELECT id FROM notices WHERE due <= $1 ORDER BY due, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+sqlrow.NoticeColumns, codec.Nanos(now), codec.Nanos(now.Add(hold)), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres store: taking notices: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanNotice)
	if err != nil {
		return nil, fmt.Errorf("postgres store: taking notices: %w", err)
	}
	// RETURNING follows no order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// DoneNotice implements store.Outbox.
func (s *Store) DoneNotice(ctx context.Context, id int64) error {
	_, err := s.exec(ctx, `DELETE FROM notices WHERE id=$1`, id)
	return err
}

// RetryNotice implements store.Outbox.
func (s *Store) RetryNotice(ctx context.Context, id int64, due time.Time) error {
	_, err := s.exec(ctx, `UPDATE notices SET attempts = attempts + 1, due = $2 WHERE id = $1`, id, codec.Nanos(due))
	return err
}
