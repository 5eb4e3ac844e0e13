package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// renew renews the node's lease every fifth of its length until Close. The
// lease is lost when its row is gone (another node has claimed its
// executions) or when no renewal succeeded for a whole lease.
//
// It renews on a connection of its own, so that a pool busy with reads
// cannot delay a renewal; the connection is made again after a failure.
func (s *Store) renew(cfg *pgx.ConnConfig) {
	defer close(s.leaseDone)
	tick := time.NewTicker(s.lease / 5)
	defer tick.Stop()
	renewed := time.Now()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-s.stopLease:
			return
		case <-s.lost:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.lease/2)
		var ct pgconn.CommandTag
		var err error
		if conn == nil {
			conn, err = pgx.ConnectConfig(ctx, cfg)
		}
		if err == nil {
			ct, err = conn.Exec(ctx, `UPDATE nodes SET lease_until = now() + $2::interval WHERE id = $1`, s.node, s.lease.String())
			if err != nil {
				conn.Close(ctx)
				conn = nil
			}
		}
		cancel()
		switch {
		case err == nil && ct.RowsAffected() == 1:
			renewed = time.Now()
		case err == nil:
			s.loseLease()
		case time.Since(renewed) > s.lease:
			s.loseLease()
		}
	}
}

func (s *Store) loseLease() { s.lostOnce.Do(func() { close(s.lost) }) }

// Lost implements store.Shared.
func (s *Store) Lost() <-chan struct{} { return s.lost }

// Node returns this node's id, the owner of the executions it runs.
func (s *Store) Node() string { return s.node }

// Claim implements store.Shared: in one transaction, while this node's
// lease holds, it removes the nodes whose lease has lapsed (waiting for
// their commits in flight, which hold their row) and takes the running
// executions of nodes that are gone.
func (s *Store) Claim(ctx context.Context) ([]*store.Execution, error) {
	if s.claims.Add(1)%sweepReplies == 0 {
		// Replies whose asker gave up before they came.
		if _, err := s.pool.Exec(ctx, `DELETE FROM replies WHERE sent < now() - interval '10 minutes'`); err != nil {
			return nil, fmt.Errorf("postgres store: sweep replies: %w", err)
		}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	defer tx.Rollback(ctx)
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM nodes WHERE id = $1 AND lease_until > now() FOR SHARE`, s.node).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		s.loseLease()
		return nil, errFenced
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	rows, err := tx.Query(ctx, `DELETE FROM nodes WHERE lease_until < now() RETURNING id`)
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	// The executions of the nodes just removed, found by the index on
	// running executions' owners; the first claim of a node also takes
	// those of any node that is gone (a claimer's transaction that failed,
	// executions of schema version 1).
	switch {
	case !s.swept.Load():
		rows, err = tx.Query(ctx, `UPDATE executions e SET owner = $1 WHERE status = 'RUNNING' AND owner <> $1
			AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.owner) RETURNING `+sqlrow.ExecColumns, s.node)
	case len(gone) > 0:
		rows, err = tx.Query(ctx, `UPDATE executions SET owner = $1 WHERE status = 'RUNNING' AND owner = ANY($2) RETURNING `+sqlrow.ExecColumns, s.node, gone)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	claimed, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Execution, error) { return sqlrow.ScanExec(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	s.swept.Store(true)
	for _, e := range claimed {
		s.forget(e.ARN)
	}
	return claimed, nil
}
