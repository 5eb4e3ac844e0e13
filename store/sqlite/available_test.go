package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stepd/stepd/store"
)

// TestFullIsUnavailable fills the database (PRAGMA max_page_count on the
// writer's connection makes SQLite answer SQLITE_FULL, as a full disk
// does): a write is refused with store.ErrUnavailable naming the full
// disk, reads go on, and once there is room again the same write commits.
func TestFullIsUnavailable(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	arn := newExec(t, s, "before")
	var pages int64
	if err := s.write(ctx, func(tx *sql.Tx) error { return tx.QueryRow(`PRAGMA page_count`).Scan(&pages) }); err != nil {
		t.Fatal(err)
	}
	limit := func(n int64) {
		t.Helper()
		if err := s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, n))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	limit(pages)
	big := `"` + strings.Repeat("x", 64<<10) + `"`
	name := "during"
	e := &store.Execution{ARN: arn[:strings.LastIndex(arn, ":")+1] + name, Name: name, StateMachineARN: "sm", Status: "RUNNING", Input: big}
	err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING"})
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "the disk holding the SQLite file is full") {
		t.Fatalf("CreateExecution on a full database: %v, want ErrUnavailable naming the full disk", err)
	}
	if _, err := s.GetExecution(ctx, arn); err != nil {
		t.Fatalf("a read on a full database: %v", err)
	}
	if _, err := s.GetExecution(ctx, e.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused execution: %v, want ErrNotFound", err)
	}
	limit(1 << 30)
	if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING"}); err != nil {
		t.Fatalf("CreateExecution once there is room: %v", err)
	}
}

// TestCause checks the classification of errors that pass by themselves:
// ENOSPC, and SQLITE_BUSY from a lock held past the busy timeout; an
// error of another kind stays as it is.
func TestCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	if _, err := a.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, busy := b.Exec(`INSERT INTO t VALUES (2)`)
	for _, c := range []struct {
		err  error
		want string // in the message; empty: not unavailable
	}{
		{fmt.Errorf("write: %w", syscall.ENOSPC), "the disk holding the SQLite file is full"},
		{busy, "the SQLite file is locked"},
		{errors.New("something else"), ""},
		{fmt.Errorf("x: %w", store.ErrNotFound), ""},
	} {
		got := unavailable(c.err)
		if c.want == "" {
			if got != c.err {
				t.Errorf("unavailable(%v) = %v, want it unchanged", c.err, got)
			}
			continue
		}
		if !errors.Is(got, store.ErrUnavailable) || !strings.Contains(got.Error(), c.want) || !errors.Is(got, c.err) {
			t.Errorf("unavailable(%v) = %v, want ErrUnavailable naming %q", c.err, got, c.want)
		}
	}
	if unavailable(nil) != nil {
		t.Error("unavailable(nil) != nil")
	}
}
