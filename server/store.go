package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/sqlite"
)

// openStore opens the store named by url when it is set (a PostgreSQL
// URL), else the SQLite store in dir, or a memory store when dir is empty.
// A store that several nodes share (PostgreSQL) is returned as sh too
// (nil otherwise): its node claims the executions of nodes that died or
// left, receives the stops and callbacks other nodes forward, and takes a
// new lease when it loses its own (see member); a single-node store's executions are all this
// process's, resumed at start.
func openStore(ctx context.Context, url, dir string, lease time.Duration) (st store.Store, sh store.Shared, err error) {
	switch {
	case strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://"):
		pg, err := postgres.OpenOptions(ctx, url, postgres.Options{Lease: lease})
		if err != nil {
			return nil, nil, err
		}
		return pg, pg, nil
	case url != "":
		return nil, nil, fmt.Errorf("--store: want a postgres:// URL, got %q", url)
	case dir == "":
		return memory.New(), nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	st, err = sqlite.Open(ctx, filepath.Join(dir, "stepd.db"))
	return st, nil, err
}

// storeName describes the store for the log, without a password.
func storeName(storeURL, dir string) string {
	switch {
	case storeURL != "":
		if u, err := url.Parse(storeURL); err == nil {
			if u.User != nil {
				u.User = url.User(u.User.Username())
			}
			return "PostgreSQL " + u.Redacted()
		}
		return "PostgreSQL"
	case dir == "":
		return "memory"
	}
	return "SQLite in " + dir
}

// claimEvery is how often a node of a shared store claims the executions
// of nodes that died or left (a fifth of the store's default lease).
const claimEvery = time.Second

// rejoinRetry bounds the wait between two attempts to take a new lease
// (or to receive again) while the store cannot be reached.
const rejoinRetry = 2 * time.Second

// A member is this node's membership of a shared store. It claims and
// adopts the executions of nodes that died or left, every claimEvery;
// when the node loses its lease (a database that did not answer for a
// whole lease, a host so starved that no renewal got through), it does
// not stop: it marks itself not ready, abandons every execution it ran
// (they may be other nodes' now; the store fences whatever it would
// still commit), takes a new lease as soon as the store answers, claims
// what is left, and is ready again.
type member struct {
	shared store.Shared
	svc    *service.Service
	ready  *readiness
	log    *slog.Logger
	losses atomic.Int64 // leases lost
}

// run claims and adopts, and rejoins after a lost lease, until ctx ends.
func (m *member) run(ctx context.Context) {
	tick := time.NewTicker(claimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.shared.Lost():
			m.rejoin(ctx)
			continue
		case <-tick.C:
		}
		claimed, err := m.shared.Claim(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("claiming executions", "err", err)
			}
			continue
		}
		if len(claimed) > 0 {
			m.log.Info("claimed the executions of nodes that died or left", "claimed", len(claimed), "running", m.svc.Runner().Adopt(ctx, claimed))
		}
	}
}

// rejoin takes a new lease after the node lost its own, and adopts what
// it claims then.
func (m *member) rejoin(ctx context.Context) {
	m.losses.Add(1)
	lost := time.Now()
	m.ready.Rejoining(true)
	defer m.ready.Rejoining(false)
	n := m.svc.Runner().Abandon()
	m.log.Error("this node lost its lease to the store; it stopped its executions and takes a new lease", "stopped", n, "losses", m.losses.Load())
	for {
		err := m.shared.Rejoin(ctx)
		if err == nil {
			break
		}
		m.log.Warn("taking a new lease", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(rejoinRetry):
		}
	}
	for {
		claimed, err := m.shared.Claim(ctx)
		if err == nil {
			m.log.Info("took a new lease", "after", time.Since(lost).Round(time.Millisecond),
				"claimed", len(claimed), "running", m.svc.Runner().Adopt(ctx, claimed))
			return
		}
		m.log.Warn("claiming executions", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-m.shared.Lost():
			return // lost again: run rejoins again
		case <-time.After(rejoinRetry):
		}
	}
}

// receive receives the stops and callbacks other nodes forward, until ctx
// ends, again after each failure (a connection lost, a lease lost).
func (m *member) receive(ctx context.Context) {
	for {
		err := m.svc.Runner().Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		m.log.Warn("receiving stops and callbacks from other nodes; trying again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(rejoinRetry):
		}
	}
}
