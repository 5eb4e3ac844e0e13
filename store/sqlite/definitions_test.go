package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
)

// TestDefinitionKeptOnce checks that executions of one definition share
// one stored copy of it, that a row of an older stepd (its definition in
// its own column) still reads back, and that a definition inserted by a
// transaction that rolled back is inserted again by the next execution of
// it, not taken as stored.
func TestDefinitionKeptOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	defer func() { s.Close() }()
	def := `{"Comment":"` + strings.Repeat("x", 8000) + `","StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	newExec := func(name, definition string) *store.Execution {
		return &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:m:" + name, Name: name, StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:m",
			StateMachineName: "m", Definition: definition, Type: "STANDARD", Input: "{}", Status: "RUNNING"}
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := s.CreateExecution(ctx, newExec(name, def), &store.Step{ExecutionARN: newExec(name, def).ARN, Status: "RUNNING"}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "stepd.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var defs, bytes int
	if err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM definitions), (SELECT SUM(LENGTH(definition)) FROM executions)`).Scan(&defs, &bytes); err != nil {
		t.Fatal(err)
	}
	if defs != 1 || bytes != 0 {
		t.Errorf("three executions of one definition: %d definitions stored, %d bytes of definitions in their rows; want 1 and 0", defs, bytes)
	}

	// A row as an older stepd wrote it.
	if _, err := db.Exec(`INSERT INTO executions (arn, name, state_machine_arn, state_machine_name, definition, type, role_arn, test_case, input, status, output, error, cause, started, stopped)
		VALUES ('arn:aws:states:us-east-1:1:execution:m:old', 'old', 'arn:aws:states:us-east-1:1:stateMachine:m', 'm', '{"StartAt":"Old"}', 'STANDARD', '', '', '{}', 'SUCCEEDED', '{}', '', '', 1, 2)`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetExecution(ctx, "arn:aws:states:us-east-1:1:execution:m:old"); err != nil || got.Definition != `{"StartAt":"Old"}` {
		t.Errorf("an older row: %v, %+v", err, got)
	}

	// A creation whose transaction rolls back (a trigger refuses its
	// step) leaves no definition behind; the next creation of the same
	// definition must store it.
	other := `{"StartAt":"Rolled","States":{"Rolled":{"Type":"Succeed"}}}`
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON step_log WHEN NEW.input = X'626f6f6d' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	e := newExec("rolled", other)
	if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING", Input: []byte("boom")}); err == nil {
		t.Fatal("the trigger did not refuse the step")
	}
	if _, err := db.Exec(`DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	e = newExec("after", other)
	if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	// Read from the file, not from what the store remembers of the
	// executions it created.
	s.Close()
	s = open(t, dir)
	if got, err := s.GetExecution(ctx, e.ARN); err != nil || got.Definition != other {
		t.Errorf("after a rolled-back creation of the same definition: %v, %+v", err, got)
	}
}

// TestNewerFormatRefused checks that a file of a later layout is refused
// with a message that says to upgrade, not read wrongly.
func TestNewerFormatRefused(t *testing.T) {
	dir := t.TempDir()
	open(t, dir).Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE meta SET value = 99 WHERE key = 'format'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "stepd.db"))
	if err == nil {
		s.Close()
		t.Fatal("a file of format 99 was opened")
	}
	if !strings.Contains(err.Error(), "newer than this stepd") {
		t.Errorf("error %q does not say the file is newer", err)
	}
}
