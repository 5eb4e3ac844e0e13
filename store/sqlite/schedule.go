package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// scheduleSchema is the table of the schedules (store.Schedules), made
// the first time a schedule method is called.
const scheduleSchema = `
CREATE TABLE IF NOT EXISTS schedules (
	grp TEXT NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL, doc BLOB NOT NULL,
	next INTEGER NOT NULL, version INTEGER NOT NULL, claimed INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (grp, name));
CREATE INDEX IF NOT EXISTS schedules_by_name ON schedules (name, grp);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (next) WHERE next <> 0;
`

// scheduleTable makes the schedules table once per store.
type scheduleTable struct {
	mu    sync.Mutex
	ready bool
}

func (s schedulePart) schedules(ctx context.Context) error {
	t := &s.sched
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ready {
		return nil
	}
	if err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(scheduleSchema)
		return err
	}); err != nil {
		return fmt.Errorf("sqlite store: making the schedules table: %w", err)
	}
	t.ready = true
	return nil
}

// CreateSchedule implements store.Schedules.
func (s schedulePart) CreateSchedule(ctx context.Context, sc *store.Schedule) error {
	if err := s.schedules(ctx); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO schedules (grp, name, state, doc, next, version) VALUES (?,?,?,?,?,1)`,
			sc.Group, sc.Name, sc.State, sc.Doc, codec.Nanos(sc.Next))
		if isDuplicate(err) {
			return refuse(fmt.Errorf("schedule %s/%s: %w", sc.Group, sc.Name, store.ErrExists))
		}
		return err
	})
	if err == nil {
		sc.Version = 1
	}
	return err
}

// GetSchedule implements store.Schedules.
func (s schedulePart) GetSchedule(ctx context.Context, group, name string) (*store.Schedule, error) {
	if err := s.schedules(ctx); err != nil {
		return nil, err
	}
	sc, err := sqlrow.ScanSchedule(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.ScheduleColumns+` FROM schedules WHERE grp=? AND name=?`, group, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound)
	}
	return sc, err
}

// versionError tells a missing schedule from one of another version.
func versionError(tx *sql.Tx, group, name string, version int64) error {
	var v int64
	err := tx.QueryRow(`SELECT version FROM schedules WHERE grp=? AND name=?`, group, name).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refuse(fmt.Errorf("schedule %s/%s: %w", group, name, store.ErrNotFound))
	case err != nil:
		return err
	}
	return refuse(fmt.Errorf("schedule %s/%s: version %d, not %d: %w", group, name, v, version, store.ErrConflict))
}

// PutSchedule implements store.Schedules.
func (s schedulePart) PutSchedule(ctx context.Context, sc *store.Schedule) error {
	if err := s.schedules(ctx); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE schedules SET state=?, doc=?, next=?, version=version+1, claimed=0 WHERE grp=? AND name=? AND version=?`,
			sc.State, sc.Doc, codec.Nanos(sc.Next), sc.Group, sc.Name, sc.Version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return versionError(tx, sc.Group, sc.Name, sc.Version)
		}
		return nil
	})
	if err == nil {
		sc.Version++
	}
	return err
}

// DeleteSchedule implements store.Schedules.
func (s schedulePart) DeleteSchedule(ctx context.Context, group, name string, version int64) error {
	if err := s.schedules(ctx); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM schedules WHERE grp=? AND name=? AND (?=0 OR version=?)`, group, name, version, version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return versionError(tx, group, name, version)
		}
		return nil
	})
}

// ListSchedules implements store.Schedules.
func (s schedulePart) ListSchedules(ctx context.Context, group, prefix, state string, p store.Page) ([]*store.Schedule, string, error) {
	if err := s.schedules(ctx); err != nil {
		return nil, "", err
	}
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
	list, err := query(ctx, s.db, sqlrow.ScanSchedule, `SELECT `+sqlrow.ScheduleColumns+` FROM schedules
		WHERE (?='' OR grp=?) AND substr(name, 1, length(?))=? AND (?='' OR state=?) AND (name>? OR name=? AND grp>?)
		ORDER BY name, grp LIMIT ?`, group, group, prefix, prefix, state, state, afterName, afterName, afterGroup, n+1)
	if err != nil {
		return nil, "", err
	}
	list, next := sqlrow.Page(list, n, func(last *store.Schedule) string {
		return codec.MakeToken(codec.KindSchedules, filter, 0, last.Group, last.Name)
	})
	return list, next, nil
}

// ClaimSchedules implements store.Schedules.
func (s schedulePart) ClaimSchedules(ctx context.Context, now, until time.Time, limit int) ([]*store.Schedule, error) {
	if err := s.schedules(ctx); err != nil {
		return nil, err
	}
	var list []*store.Schedule
	err := s.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.Query(`UPDATE schedules SET claimed=? WHERE rowid IN (
			SELECT rowid FROM schedules WHERE next <> 0 AND next <= ? AND claimed < ? ORDER BY next LIMIT ?)
			RETURNING `+sqlrow.ScheduleColumns, codec.Nanos(until), codec.Nanos(now), codec.Nanos(now), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		list, err = sqlrow.Collect(rows, sqlrow.ScanSchedule)
		return err
	})
	if err != nil {
		// The writer may still run fn after a cancelled ctx: list is not
		// read then.
		return nil, err
	}
	return list, nil
}
