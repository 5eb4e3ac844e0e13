package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	n, err := s.exec(ctx, `INSERT INTO state_machines (`+sqlrow.SMColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT DO NOTHING`, values...)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists)
	}
	return err
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	tags, err := sqlrow.Tags(sm)
	if err != nil {
		return err
	}
	n, err := s.exec(ctx, `UPDATE state_machines SET definition=$1, role_arn=$2, updated=$3, revision=$4, tags=$5, logging=$7 WHERE arn=$6`,
		sm.Definition, sm.RoleARN, codec.Nanos(sm.Updated), sm.RevisionID, tags, sm.ARN, sm.Logging)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound)
	}
	return err
}

// GetStateMachine implements store.Store.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := sqlrow.ScanSM(s.pool.QueryRow(ctx, `SELECT `+sqlrow.SMColumns+` FROM state_machines WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return sm, nil
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	n, err := s.exec(ctx, `DELETE FROM state_machines WHERE arn=$1`, arn)
	if err == nil && n == 0 {
		return fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	return err
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	return byName(ctx, s, codec.KindStateMachines, "state_machines", sqlrow.SMColumns, p, sqlrow.ScanSM, func(sm *store.StateMachine) (string, string) { return sm.Name, sm.ARN })
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	n, err := s.exec(ctx, `INSERT INTO activities VALUES ($1,$2,$3) ON CONFLICT DO NOTHING`, a.ARN, a.Name, codec.Nanos(a.Created))
	if err == nil && n == 0 {
		return fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists)
	}
	return err
}

// GetActivity implements store.Store.
func (s *Store) GetActivity(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := sqlrow.ScanActivity(s.pool.QueryRow(ctx, `SELECT `+sqlrow.ActivityColumns+` FROM activities WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return a, nil
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	n, err := s.exec(ctx, `DELETE FROM activities WHERE arn=$1`, arn)
	if err == nil && n == 0 {
		return fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	return err
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	return byName(ctx, s, codec.KindActivities, "activities", sqlrow.ActivityColumns, p, sqlrow.ScanActivity, func(a *store.Activity) (string, string) { return a.Name, a.ARN })
}

// Secret implements store.Store: the first node to ask makes it; an insert
// that keeps the first one stored makes every node read the same.
func (s *Store) Secret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret)
	if err == nil && len(secret) == store.SecretSize {
		return secret, nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres store: reading the secret: %w", err)
	}
	fresh := make([]byte, store.SecretSize)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("postgres store: making the secret: %w", err)
	}
	if _, err := s.exec(ctx, `INSERT INTO meta VALUES ('secret', $1) ON CONFLICT DO NOTHING`, fresh); err != nil {
		return nil, fmt.Errorf("postgres store: keeping the secret: %w", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key='secret'`).Scan(&secret); err != nil {
		return nil, fmt.Errorf("postgres store: reading the secret: %w", err)
	}
	if len(secret) != store.SecretSize {
		return nil, fmt.Errorf("postgres store: the stored secret has %d bytes, want %d", len(secret), store.SecretSize)
	}
	return secret, nil
}
