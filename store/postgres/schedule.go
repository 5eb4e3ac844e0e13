package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// CreateSchedule implements store.Schedules.
func (s schedulePart) CreateSchedule(ctx context.Context, sc *store.Schedule) error {
	n, err := s.exec(ctx, `INSERT INTO schedules (grp, name, state, doc, next, version) VALUES ($1,$2,$3,$4,$5,1) ON CONFLICT DO NOTHING`,
		sc.Group, sc.Name, sc.State, sc.Doc, codec.Nanos(sc.Next))
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("schedule %s/%s: %w", sc.Group, sc.Name, store.ErrExists)
	}
	sc.Version = 1
	return nil
}

// GetSchedule implements store.Schedules.
func (s schedulePart) GetSchedule(ctx context.Context, group, name string) (*store.Schedule, error) {
	sc, err := sqlrow.ScanSchedule(s.pool.QueryRow(ctx, `SELECT `+sqlrow.ScheduleColumns+` FROM schedules WHERE grp=$1 AND name=$2`, group, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return sc, nil
}

// versionError tells a missing schedule from one of another version.
func (s schedulePart) versionError(ctx context.Context, group, name string, version int64) error {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM schedules WHERE grp=$1 AND name=$2`, group, name).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres store: %w", err)
	}
	return fmt.Errorf("schedule %s/%s: version %d, not %d: %w", group, name, v, version, store.ErrConflict)
}

// PutSchedule implements store.Schedules.
func (s schedulePart) PutSchedule(ctx context.Context, sc *store.Schedule) error {
	n, err := s.exec(ctx, `UPDATE schedules SET state=$1, doc=$2, next=$3, version=version+1, claimed=0 WHERE grp=$4 AND name=$5 AND version=$6`,
		sc.State, sc.Doc, codec.Nanos(sc.Next), sc.Group, sc.Name, sc.Version)
	if err != nil {
		return err
	}
	if n == 0 {
		return s.versionError(ctx, sc.Group, sc.Name, sc.Version)
	}
	sc.Version++
	return nil
}

// DeleteSchedule implements store.Schedules.
func (s schedulePart) DeleteSchedule(ctx context.Context, group, name string, version int64) error {
	n, err := s.exec(ctx, `DELETE FROM schedules WHERE grp=$1 AND name=$2 AND ($3::bigint=0 OR version=$3)`, group, name, version)
	if err != nil {
		return err
	}
	if n == 0 {
		return s.versionError(ctx, group, name, version)
	}
	return nil
}

// ListSchedules implements store.Schedules.
func (s schedulePart) ListSchedules(ctx context.Context, group, prefix, state string, p store.Page) ([]*store.Schedule, string, error) {
	filter := codec.FilterHash(group, prefix, state)
	afterGroup, afterName := "", ""
	if p.Token != "" {
		_, strs, err := codec.ParseToken(p.Token, codec.KindSchedules, filter, 2)
		if err != nil {
			return nil, "", err
		}
		afterGroup, afterName = strs[0], strs[1]
	}
	n := codec.PageLimit(p)
	rows, err := s.pool.Query(ctx, `SELECT `+sqlrow.ScheduleColumns+` FROM schedules
		WHERE ($1='' OR grp=$1) AND left(name, length($2))=$2 AND ($3='' OR state=$3) AND (name>$4 OR name=$4 AND grp>$5)
		ORDER BY name, grp LIMIT $6`, group, prefix, state, afterName, afterGroup, n+1)
	if err != nil {
		return nil, "", fmt.Errorf("postgres store: %w", err)
	}
	list, err := scanSchedules(rows)
	if err != nil {
		return nil, "", err
	}
	list, next := sqlrow.Page(list, n, func(last *store.Schedule) string {
		return codec.MakeToken(codec.KindSchedules, filter, 0, last.Group, last.Name)
	})
	return list, next, nil
}

// scanSchedules reads the schedules of rows (sqlrow.ScheduleColumns).
func scanSchedules(rows pgx.Rows) ([]*store.Schedule, error) {
	defer rows.Close()
	list, err := sqlrow.Collect(rows, sqlrow.ScanSchedule)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return list, nil
}

// ClaimSchedules implements store.Schedules: the due rows are locked with
// SKIP LOCKED, so nodes claiming at once take different schedules.
func (s schedulePart) ClaimSchedules(ctx context.Context, now, until time.Time, limit int) ([]*store.Schedule, error) {
	rows, err := s.pool.Query(ctx, `UPDATE schedules SET claimed=$1 WHERE (grp, name) IN (
		SELECT grp, name FROM schedules WHERE next <> 0 AND next <= $2 AND claimed < $2 ORDER BY next LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+sqlrow.ScheduleColumns, codec.Nanos(until), codec.Nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return scanSchedules(rows)
}
