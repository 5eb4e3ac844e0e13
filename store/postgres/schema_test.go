package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store/postgres/pgtest"
)

// TestMigrateOnce starts several nodes at once on an empty schema: one
// migrates it from version 0, the others wait for its advisory lock and
// find it migrated; a schema newer than this stepd is refused.
func TestMigrateOnce(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	const nodes = 6
	froms := make([]int, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close(ctx)
			var to int
			froms[i], to, errs[i] = migrate(ctx, conn)
			if errs[i] == nil && to != len(migrations) {
				t.Errorf("node %d left version %d, want %d", i, to, len(migrations))
			}
		})
	}
	wg.Wait()
	fresh := 0
	for i := range nodes {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		if froms[i] == 0 {
			fresh++
		} else if froms[i] != len(migrations) {
			t.Errorf("node %d found version %d", i, froms[i])
		}
	}
	if fresh != 1 {
		t.Errorf("%d nodes migrated from version 0, want 1", fresh)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, version int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*), MAX(version) FROM stepd_schema`).Scan(&rows, &version); err != nil || rows != 1 || version != len(migrations) {
		t.Fatalf("stepd_schema: %d rows, version %d, %v", rows, version, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE stepd_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "upgrade stepd") {
		t.Errorf("Open on a newer schema: %v, want a refusal", err)
	}
}
