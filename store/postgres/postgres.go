// Package postgres is the store.Store of `stepd serve` on PostgreSQL, for
// several nodes sharing one database (through github.com/jackc/pgx/v5,
// PostgreSQL's own protocol with pipelined batches, which database/sql
// cannot send).
//
// The tables live in the connection's current schema (the first of its
// search_path), created and migrated by Open: a table stepd_schema holds
// the schema's version, and migrations run in one transaction under an
// advisory lock, so nodes starting at once migrate once.
//
// Executions' writes (CreateExecution, AppendStep) go through one writer
// goroutine with a connection of its own. It takes every write waiting (up
// to maxBatch) and commits them in one transaction (group commit), sending
// the transaction's statements as one pipelined batch: the steps of up to
// maxBatch executions are one multi-row INSERT of arrays, and each
// execution's summary is updated by the same statement only when it
// changes. A step is refused (ErrConflict) unless its Seq follows the last
// committed one; the check is part of the statement (the previous step must
// exist and the primary key (exec, seq) must be free), so that it holds
// against other nodes writing to the same database. A refused request
// writes nothing and the rest of its batch commits; a batch that fails
// otherwise is rolled back and replayed one request per transaction.
//
// Other writes (state machines, activities) are rare and run on the read
// pool in their own transactions.
//
// Steps are rows keyed by (execution, Seq) holding their events packed
// (store/internal/codec), with the range of event ids they hold; a step
// without events holds the empty range just after the previous step's, so
// that a page of history is found by binary search over Seq.
//
// Its files, by concern: postgres.go (opening, closing), writer.go (the
// group-commit writer and its cache of executions), catalog.go (state
// machines, activities, the secret), execution.go (executions and their
// steps), query.go (lists and their pages), lease.go (the nodes' leases and
// claims), message.go (messages to an execution's owner and their
// replies), task.go (activity tasks handed between nodes), version.go,
// maprun.go, schedule.go, retention.go, outbox.go, and schema.go (the
// migrations).
//
// It imports only store and what the backends share (store/internal),
// and must not import the other backends, the engine or anything above
// them.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stepd/stepd/store"
)

// Store is the PostgreSQL store.
type Store struct {
	// The methods of each concern are declared on a part of their own (a
	// view of the Store), composed here: versions, Map Runs, schedules, messages.
	versionPart
	mapRunPart
	schedulePart
	messagePart
	pool   pool     // reads and rare writes, its errors classified (available.go)
	ws     []*wconn // the writers' connections
	reqs   chan *request
	done   chan struct{} // closed by Close
	closed chan struct{} // closed by the writer when it stops

	closeOnce sync.Once
	closeErr  error

	commits atomic.Int64 // transactions committed, for benchmarks

	cacheMu sync.Mutex
	cache   map[string]execState // by execution ARN; see execState

	// member is this node's membership: its id and lease, replaced by
	// Rejoin after the lease is lost (see lease.go).
	member    atomic.Pointer[membership]
	joinMu    sync.Mutex      // serializes Rejoin and Close
	lease     time.Duration   // how long a renewal keeps the node's lease
	stopLease chan struct{}   // closed by Close: stop renewing
	renewCfg  *pgx.ConnConfig // of the renewer's connection

	// Woken by the notifications Receive hears: takers waiting for an
	// activity's tasks (Offered), askers waiting for a reply (Ask).
	notifyMu sync.Mutex
	offered  map[string]chan struct{} // by activity ARN
	replies  map[int64]chan struct{}  // by reply key
	claims   atomic.Int64             // claims made, to sweep old replies now and then
}

// Options tunes a Store.
type Options struct {
	// Lease is how long a node's lease lasts without renewal (renewed
	// five times as often); another node claims the running executions of
	// a node whose lease has lapsed. 0 means DefaultLease.
	Lease time.Duration
}

// DefaultLease is the default of Options.Lease: a dead node's executions
// move to another node within it and one claim interval (Lease/5).
const DefaultLease = 5 * time.Second

// errFenced refuses the writes of a node whose lease has lapsed: a
// conflict for the execution's driver (it stops), and for an API request
// a moment's unavailability (the node takes a new lease).
var errFenced = fmt.Errorf("postgres store: this node's lease has lapsed; its executions belong to other nodes now, and it is taking a new lease: %w (%w)",
	store.ErrConflict, store.ErrUnavailable)

var _ store.Shared = (*Store)(nil)

// Open connects to the database named by dsn (a PostgreSQL URL or
// key=value string; its search_path picks the schema), migrates the schema
// and starts the writer.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenOptions(ctx, dsn, Options{})
}

// minPoolConns is the least size of a store's connection pool unless the
// DSN sets pool_max_conns.
const minPoolConns = 16

// connectTimeout bounds making a connection unless the DSN sets
// connect_timeout.
const connectTimeout = 5 * time.Second

// OpenOptions is Open with options.
func OpenOptions(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	// pgx's default pool is max(4, cores) connections; a node keeps one
	// listening (Receive) and its scheduler, outbox and retention loops
	// query beside the API's requests, so a small machine's four starve
	// (callbacks and activity hand-overs then wait past their bounds). A
	// pool_max_conns in the DSN still decides.
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, minPoolConns)
	}
	// A server that does not answer a connection (a host that is down)
	// is an unavailable store after connectTimeout, not a request that
	// hangs, unless the DSN's connect_timeout says otherwise.
	if !strings.Contains(dsn, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	s := &Store{reqs: make(chan *request, 4*maxBatch), done: make(chan struct{}), closed: make(chan struct{}), cache: map[string]execState{},
		lease: opts.Lease, stopLease: make(chan struct{}),
		offered: map[string]chan struct{}{}, replies: map[int64]chan struct{}{}}
	s.versionPart, s.mapRunPart, s.schedulePart, s.messagePart = versionPart{s}, mapRunPart{s}, schedulePart{s}, messagePart{s}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	for range writers {
		w := &wconn{cfg: cfg.ConnConfig.Copy()}
		if w.c, err = pgx.ConnectConfig(ctx, w.cfg); err != nil {
			s.closeConns()
			return nil, fmt.Errorf("postgres store: connect: %w", err)
		}
		s.ws = append(s.ws, w)
	}
	if _, _, err := migrate(ctx, s.ws[0].c); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("postgres store: migrate the schema: %w", err)
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		s.closeConns()
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	s.pool = pool{p}
	s.renewCfg = cfg.ConnConfig.Copy()
	if err := s.join(ctx); err != nil {
		s.closeConns()
		return nil, err
	}
	var wg sync.WaitGroup
	for _, w := range s.ws {
		wg.Go(func() { s.writer(w) })
	}
	go func() {
		wg.Wait()
		close(s.closed)
	}()
	return s, nil
}

// Close commits the pending writes, stops the writer and closes the
// connections. Later writes return an error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		<-s.closed
		s.joinMu.Lock()
		defer s.joinMu.Unlock()
		close(s.stopLease)
		m := s.member.Load()
		<-m.done
		// Leaving ends the lease now, so that the others claim this
		// node's running executions at their next claim.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := s.pool.Exec(ctx, `UPDATE nodes SET lease_until = now() - interval '1 second' WHERE id = $1`, m.node)
		s.closeErr = errors.Join(err, s.closeConns())
	})
	return s.closeErr
}

// closeConns closes the writers' connections and the pool.
func (s *Store) closeConns() error {
	var errs []error
	for _, w := range s.ws {
		if w.c != nil {
			errs = append(errs, w.c.Close(context.Background()))
		}
	}
	if s.pool.p != nil {
		s.pool.Close()
	}
	return errors.Join(errs...)
}

// exec runs one statement of a rare write on the pool and returns the
// number of rows it changed.
func (s *Store) exec(ctx context.Context, q string, args ...any) (int64, error) {
	ct, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	return ct.RowsAffected(), nil
}

// ReleaseMemory implements store.Store: the connections' memory is the
// server's, and the store keeps no cache worth freeing.
func (s *Store) ReleaseMemory(ctx context.Context) error { return nil }

// versionPart declares the Store's methods of one concern (see Store).
type versionPart struct{ *Store }

// mapRunPart declares the Store's methods of one concern (see Store).
type mapRunPart struct{ *Store }

// schedulePart declares the Store's methods of one concern (see Store).
type schedulePart struct{ *Store }

// messagePart declares the Store's methods of one concern (see Store).
type messagePart struct{ *Store }
