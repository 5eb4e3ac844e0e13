package pgtest

import (
	"context"
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
