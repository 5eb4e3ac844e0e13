package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
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

// TestCreateSchema opens a store whose search_path names a schema that
// does not exist: Open creates it. A role that may not create schemas
// is told the statement to have run.
func TestCreateSchema(t *testing.T) {
	ctx := context.Background()
	server := pgtest.Server(t)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "stepd_Create_" + hex.EncodeToString(b) // quoted: the case stays
	cleanup := func(stmt string) {
		t.Cleanup(func() {
			conn, err := pgx.Connect(ctx, server)
			if err != nil {
				t.Errorf("%s: %v", stmt, err)
				return
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		})
	}
	cleanup(`DROP SCHEMA IF EXISTS ` + quoteIdent(schema) + ` CASCADE`)
	dsn := pgtest.WithSchema(t, server, `"`+schema+`", missing_too`)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open on a missing schema: %v", err)
	}
	s.Close()
	var tables int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = $1`, schema).Scan(&tables); err != nil || tables == 0 {
		t.Fatalf("tables in %s: %d, %v", schema, tables, err)
	}
	// Again, on the schema now there: nothing to do.
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	s.Close()

	// A role without CREATE on the database.
	role := "stepd_nocreate_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, `CREATE ROLE `+role+` LOGIN`); err != nil {
		t.Skipf("cannot create a role to test with: %v", err)
	}
	cleanup(`DROP ROLE IF EXISTS ` + role)
	u, err := url.Parse(pgtest.WithSchema(t, server, quoteIdent(schema+"_denied")))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	_, err = Open(ctx, u.String())
	want := `CREATE SCHEMA "` + schema + `_denied" AUTHORIZATION "` + role + `"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open as a role that may not create the schema: %v, want an error naming %s", err, want)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_namespace WHERE nspname = $1`, schema+"_denied").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the denied schema exists: %d, %v", n, err)
	}
}

func TestFirstSchema(t *testing.T) {
	for in, want := range map[string]string{
		`stepd`:                           "stepd",
		`StepD, public`:                   "stepd",
		` "$user" , Stepd`:                "stepd",
		`"My ""Schema"""`:                 `My "Schema"`,
		`pg_catalog, "a,b"`:               "a,b",
		``:                                "",
		`"unterminated`:                   "",
		`a,,b`:                            "",
		`"$user", pg_temp`:                "",
		`x y`:                             "",
		`pg_toast, information_schema, s`: "s",
	} {
		if got := firstSchema(in); got != want {
			t.Errorf("firstSchema(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSplitIdents checks that splitting never panics and that the names
// it returns, quoted again and joined, split back to themselves.
func FuzzSplitIdents(f *testing.F) {
	for _, s := range []string{`stepd`, `"$user", public`, `"a""b", C`, `"`, `a,`, ` , `, `"x" "y"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, ok := splitIdents(s)
		if !ok || len(names) == 0 {
			return
		}
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = quoteIdent(n)
		}
		again, ok := splitIdents(strings.Join(q, ", "))
		if !ok || strings.Join(again, "\x00") != strings.Join(names, "\x00") {
			t.Fatalf("splitIdents(%q) = %q; quoted again it splits to %q", s, names, again)
		}
	})
}
