package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// A membership is one term of this node in the nodes table: an id of its
// own, the executions it owns, and a lease that it renews. A node whose
// lease is lost takes a new membership (Rejoin) under a new id, so that
// nothing written under the old one (a write queued before the loss) can
// pass the fence again.
type membership struct {
	node     string        // the node's id in this membership
	lost     chan struct{} // closed when the lease is lost
	lostOnce sync.Once
	done     chan struct{} // closed when its renewer has stopped
	swept    atomic.Bool   // a claim has taken the executions of every node gone
}

// lose marks the membership's lease lost.
func (m *membership) lose() { m.lostOnce.Do(func() { close(m.lost) }) }

// errLeaseHeld is Rejoin's error while the current lease holds.
var errLeaseHeld = errors.New("postgres store: this node's lease holds; there is nothing to rejoin")

// join registers the node under a new id, with a lease from now, and
// starts renewing it.
func (s *Store) join(ctx context.Context) error {
	m := &membership{node: rand.Text(), lost: make(chan struct{}), done: make(chan struct{})}
	if _, err := s.pool.Exec(ctx, `INSERT INTO nodes (id, lease_until) VALUES ($1, now() + $2::interval)`, m.node, s.lease.String()); err != nil {
		return fmt.Errorf("postgres store: register the node: %w", err)
	}
	s.member.Store(m)
	go s.renew(m)
	return nil
}

// Rejoin implements store.Shared: once the lease is lost, it removes the
// node's old row (its running executions go to whoever claims next, this
// node's next Claim included) and registers the node anew under a new id.
// The caller must have stopped every execution it ran under the old
// lease first.
func (s *Store) Rejoin(ctx context.Context) error {
	s.joinMu.Lock()
	defer s.joinMu.Unlock()
	select {
	case <-s.stopLease:
		return errors.New("postgres store: closed")
	default:
	}
	old := s.member.Load()
	select {
	case <-old.lost:
	default:
		return errLeaseHeld
	}
	<-old.done
	// The old row, if no other node has removed it yet: its executions
	// become those of a node that is gone, which the next claim takes.
	// Removing it waits for the old membership's commits in flight.
	if _, err := s.pool.Exec(ctx, `DELETE FROM nodes WHERE id = $1`, old.node); err != nil {
		return fmt.Errorf("postgres store: leave the lapsed lease: %w", err)
	}
	s.cacheMu.Lock()
	clear(s.cache)
	s.cacheMu.Unlock()
	return s.join(ctx)
}

// renew renews the lease of membership m every fifth of its length until
// Close. The lease is lost when its row is gone (another node has claimed
// its executions) or when no renewal succeeded for a whole lease.
//
// It renews on a connection of its own, so that a pool busy with reads
// cannot delay a renewal; the connection is made again after a failure.
// Each attempt has a deadline of half the lease, so that one that hangs
// (a database that stopped answering) leaves time for the next. A renewal
// does not wait for the node's commits: they hold its row FOR KEY SHARE,
// which an UPDATE of the lease does not conflict with (a claimer's DELETE
// does).
func (s *Store) renew(m *membership) {
	defer close(m.done)
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
		case <-m.lost:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.lease/2)
		var ct pgconn.CommandTag
		var err error
		if conn == nil {
			conn, err = pgx.ConnectConfig(ctx, s.renewCfg)
		}
		if err == nil {
			ct, err = conn.Exec(ctx, `UPDATE nodes SET lease_until = now() + $2::interval WHERE id = $1`, m.node, s.lease.String())
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
			m.lose()
		case time.Since(renewed) > s.lease:
			m.lose()
		}
	}
}

// Lost implements store.Shared: the channel of the current membership.
func (s *Store) Lost() <-chan struct{} { return s.member.Load().lost }

// Node returns this node's id, the owner of the executions it runs; it
// changes when the node rejoins.
func (s *Store) Node() string { return s.member.Load().node }

// holdLease is the statement that proves the lease in a transaction: it
// holds the node's row FOR KEY SHARE until the commit, so that a claimer's
// DELETE of the row waits for the commit, while a renewal does not.
const holdLease = `SELECT 1 FROM nodes WHERE id = $1 AND lease_until > now() FOR KEY SHARE`

// holdOrLose runs holdLease in tx for membership m: errFenced (and m is
// lost) when the lease has lapsed.
func holdOrLose(ctx context.Context, tx pgx.Tx, m *membership) error {
	var one int
	err := tx.QueryRow(ctx, holdLease, m.node).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		m.lose()
		return errFenced
	}
	return err
}

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
	m := s.member.Load()
	if err := holdOrLose(ctx, tx, m); err != nil {
		if errors.Is(err, errFenced) {
			return nil, err
		}
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
	case !m.swept.Load():
		rows, err = tx.Query(ctx, `UPDATE executions e SET owner = $1 WHERE status = 'RUNNING' AND owner <> $1
			AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.owner) RETURNING `+sqlrow.ExecColumns, m.node)
	case len(gone) > 0:
		rows, err = tx.Query(ctx, `UPDATE executions SET owner = $1 WHERE status = 'RUNNING' AND owner = ANY($2) RETURNING `+sqlrow.ExecColumns, m.node, gone)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	claimed, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Execution, error) { return scanExec(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres store: claim: %w", err)
	}
	m.swept.Store(true)
	for _, e := range claimed {
		s.forget(e.ARN)
	}
	return claimed, nil
}
