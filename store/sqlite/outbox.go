package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

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
		rows, err := tx.Query(`SELECT `+sqlrow.NoticeColumns+` FROM notices WHERE due <= ? ORDER BY due, id LIMIT ?`, codec.Nanos(now), limit)
		if err != nil {
			return err
		}
		out, err = sqlrow.Collect(rows, sqlrow.ScanNotice)
		rows.Close()
		if err != nil {
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
