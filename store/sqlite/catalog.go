package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// CreateStateMachine implements store.Store.
func (s *Store) CreateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	values, err := sqlrow.SMValues(sm)
	if err != nil {
		return err
	}
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO state_machines (`+sqlrow.SMColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`, values...)
		if isDuplicate(err) {
			return refuse(fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists))
		}
		return err
	}, func() { s.forgetSM(sm.ARN) })
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := sqlrow.Tags(sm)
	if err != nil {
		return err
	}
	arn := sm.ARN
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE state_machines SET definition=?, role_arn=?, updated=?, revision=?, tags=?, logging=? WHERE arn=?`, sm.Definition, sm.RoleARN, codec.Nanos(sm.Updated), sm.RevisionID, tags, sm.Logging, sm.ARN)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound))
		}
		return nil
	}, func() { s.forgetSM(arn) })
}

// GetStateMachine implements store.Store: from the cache when it holds
// the state machine, else from the database (and then into the cache).
// The caller gets its own copy either way.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	s.smMu.Lock()
	cached, gen := s.sms[arn], s.smGen
	s.smMu.Unlock()
	if cached != nil {
		return copySM(cached), nil
	}
	sm, err := sqlrow.ScanSM(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.SMColumns+` FROM state_machines WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	s.smMu.Lock()
	if s.smGen == gen {
		if len(s.sms) >= 10000 {
			clear(s.sms)
		}
		s.sms[arn] = copySM(sm)
	}
	s.smMu.Unlock()
	return sm, nil
}

// forgetSM drops a state machine from the cache after a write of it.
func (s *Store) forgetSM(arn string) {
	s.smMu.Lock()
	delete(s.sms, arn)
	s.smGen++
	s.smMu.Unlock()
}

// copySM returns a copy of sm that shares nothing mutable with it.
func copySM(sm *store.StateMachine) *store.StateMachine {
	c := *sm
	c.Tags = maps.Clone(sm.Tags)
	return &c
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	return s.writeThen(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM state_machines WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound))
		}
		return nil
	}, func() { s.forgetSM(arn) })
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	return byName(ctx, s.db, kindStateMachines, "state_machines", sqlrow.SMColumns, p, sqlrow.ScanSM, func(sm *store.StateMachine) (string, string) { return sm.Name, sm.ARN })
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO activities VALUES (?,?,?)`, a.ARN, a.Name, codec.Nanos(a.Created))
		if isDuplicate(err) {
			return refuse(fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists))
		}
		return err
	})
}

// GetActivity implements store.Store.
func (s *Store) GetActivity(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := sqlrow.ScanActivity(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.ActivityColumns+` FROM activities WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM activities WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("activity %s: %w", arn, store.ErrNotFound))
		}
		return nil
	})
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	return byName(ctx, s.db, kindActivities, "activities", sqlrow.ActivityColumns, p, sqlrow.ScanActivity, func(a *store.Activity) (string, string) { return a.Name, a.ARN })
}

// Secret implements store.Store: the secret is made once, in a write that
// keeps the first one stored, and read back.
func (s *Store) Secret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret)
	if err == nil && len(secret) == store.SecretSize {
		return secret, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite store: reading the secret: %w", err)
	}
	fresh := make([]byte, store.SecretSize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("sqlite store: making the secret: %w", err)
	}
	if err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT OR IGNORE INTO meta VALUES ('secret', ?)`, fresh)
		return err
	}); err != nil {
		return nil, fmt.Errorf("sqlite store: keeping the secret: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret); err != nil {
		return nil, fmt.Errorf("sqlite store: reading the secret: %w", err)
	}
	return secret, nil
}
