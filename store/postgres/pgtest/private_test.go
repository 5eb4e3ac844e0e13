package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPrivate: the private server takes connections, refuses them once
// stopped, and takes them again once started.
func TestPrivate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	i := Private(t, PrivateOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query := func() error {
		c, err := pgx.Connect(ctx, i.DSN())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		var n int
		return c.QueryRow(ctx, `SELECT 1`).Scan(&n)
	}
	if err := query(); err != nil {
		t.Fatal(err)
	}
	i.Stop("immediate")
	if err := query(); err == nil {
		t.Fatal("a stopped server answered")
	}
	i.Start()
	if err := query(); err != nil {
		t.Fatal(err)
	}
}

// TestPrivateWALDir: with WALDir, the data folder's pg_wal leads to a
// folder made there, and the server takes connections.
func TestPrivateWALDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	wal, err := os.MkdirTemp("", "stepd-wal-") // the server's user must reach it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(wal) })
	if err := os.Chmod(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	i := Private(t, PrivateOptions{WALDir: wal})
	target, err := os.Readlink(filepath.Join(i.data, "pg_wal"))
	if err != nil {
		t.Fatalf("pg_wal: %v", err)
	}
	if !strings.HasPrefix(target, wal+string(filepath.Separator)) {
		t.Fatalf("pg_wal leads to %s, want a folder in %s", target, wal)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, i.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE t AS SELECT generate_series(1, 1000) AS x`); err != nil {
		t.Fatal(err)
	}
}
