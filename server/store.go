package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
// left, receives the stops and callbacks other nodes forward, and stops
// once it loses its lease; a single-node store's executions are all this
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

// claimLoop claims and adopts executions of nodes that died or left, until
// ctx ends or the node loses its lease.
func claimLoop(ctx context.Context, sh store.Shared, svc *service.Service, log *slog.Logger) {
	tick := time.NewTicker(claimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.Lost():
			return
		case <-tick.C:
		}
		claimed, err := sh.Claim(ctx)
		if err != nil {
			log.Warn("claiming executions", "err", err)
			continue
		}
		if len(claimed) > 0 {
			log.Info("claimed the executions of nodes that died or left", "claimed", len(claimed), "running", svc.Runner().Adopt(ctx, claimed))
		}
	}
}
