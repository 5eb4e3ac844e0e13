// Package pgtest gives tests a PostgreSQL schema of their own: the server
// named by STEPD_TEST_POSTGRES (by default the local one, database test),
// a fresh schema per call, dropped when the test ends. Without a server
// the test is skipped, or fails when CI=true.
//
// Private starts a server of a test's own (initdb and pg_ctl), which the
// test may stop, restart or freeze: a test that stops PostgreSQL never
// touches the shared server.
//
// It imports nothing of stepd's and must not: only tests import it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultServer is the server tests use when STEPD_TEST_POSTGRES is unset.
const DefaultServer = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Server returns the connection string of the test server, skipping the
// test (failing it when CI=true) when the server does not answer.
func Server(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("STEPD_TEST_POSTGRES")
	if dsn == "" {
		dsn = DefaultServer
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL at %s: %v (CI=true: .ci/run starts it)", redact(dsn), err)
		}
		tb.Skipf("no PostgreSQL at %s (%v); set STEPD_TEST_POSTGRES; skipping", redact(dsn), err)
	}
	conn.Close(ctx)
	return dsn
}

// DSN returns a connection string whose search_path is a new, empty
// schema, dropped with everything in it when tb ends.
func DSN(tb testing.TB) string {
	tb.Helper()
	server := Server(tb)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "stepd_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		tb.Fatalf("create schema %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return WithSchema(tb, server, schema)
}

// WithSchema returns dsn with its search_path set to schema.
func WithSchema(tb testing.TB, dsn, schema string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("STEPD_TEST_POSTGRES must be a postgres:// URL: %q", redact(dsn))
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// redact hides a password in a connection string.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	if strings.Contains(dsn, "password") {
		return "(a connection string with a password)"
	}
	return dsn
}
