package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres/pgtest"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err    error
		reason string // "" when err is not an unavailable database
	}{
		{io.ErrUnexpectedEOF, "lost"},
		{fmt.Errorf("read: %w", io.EOF), "lost"},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "lost"},
		{syscall.ECONNRESET, "lost"},
		{&pgconn.PgError{Code: "53100", Message: "could not extend file"}, "disk is full"},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, "shutting down"},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, "starting up"},
		{&pgconn.PgError{Code: "08006"}, "lost"},
		{&pgconn.PgError{Code: "25006"}, "read-only"},
		{&pgconn.PgError{Code: "40001"}, "conflicted"},
		{context.DeadlineExceeded, "in time"},
		// Refusals of the statement, and the caller's own end, stay what
		// they are.
		{&pgconn.PgError{Code: "23505"}, ""},
		{&pgconn.PgError{Code: "42P01"}, ""},
		{&pgconn.PgError{Code: "22012"}, ""},
		{pgx.ErrNoRows, ""},
		{context.Canceled, ""},
		{errors.New("can't scan into dest[0]"), ""},
	} {
		got := classify(c.err)
		if c.reason == "" {
			if got != c.err {
				t.Errorf("classify(%v) = %v, want it unchanged", c.err, got)
			}
			continue
		}
		if !errors.Is(got, store.ErrUnavailable) || !errors.Is(got, c.err) || !strings.Contains(got.Error(), c.reason) {
			t.Errorf("classify(%v) = %v, want ErrUnavailable wrapping it and saying %q", c.err, got, c.reason)
		}
	}
}

// TestStoppedDatabase stops a private PostgreSQL under an open store:
// reads and writes answer ErrUnavailable at once, and work again once the
// database is back, with no new store.
func TestStoppedDatabase(t *testing.T) {
	pg := pgtest.Private(t, pgtest.PrivateOptions{})
	ctx := context.Background()
	s, err := OpenOptions(ctx, pg.DSN(), Options{Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sm := &store.StateMachine{ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:sm", Name: "sm", Definition: "{}"}
	if err := s.CreateStateMachine(ctx, sm); err != nil {
		t.Fatal(err)
	}
	pg.Stop("immediate")
	if _, err := s.GetStateMachine(ctx, sm.ARN); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("GetStateMachine with the database stopped: %v, want ErrUnavailable", err)
	}
	if _, _, err := s.ListStateMachines(ctx, store.Page{}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("ListStateMachines with the database stopped: %v, want ErrUnavailable", err)
	}
	sm2 := &store.StateMachine{ARN: sm.ARN + "2", Name: "sm2", Definition: "{}"}
	if err := s.CreateStateMachine(ctx, sm2); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("CreateStateMachine with the database stopped: %v, want ErrUnavailable", err)
	}
	pg.Start()
	if _, err := s.GetStateMachine(ctx, sm.ARN); err != nil {
		t.Fatalf("GetStateMachine after the database came back: %v", err)
	}
}
