package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

const schema = `
CREATE TABLE IF NOT EXISTS state_machines (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, definition TEXT NOT NULL,
	role_arn TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL, revision TEXT NOT NULL, tags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS state_machines_by_name ON state_machines (name, arn);
CREATE TABLE IF NOT EXISTS executions (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, definition TEXT NOT NULL, type TEXT NOT NULL,
	role_arn TEXT NOT NULL, test_case TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
	output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started INTEGER NOT NULL, stopped INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS executions_by_machine ON executions (state_machine_arn, seq DESC);
CREATE INDEX IF NOT EXISTS executions_by_machine_status ON executions (state_machine_arn, status, seq DESC);
CREATE INDEX IF NOT EXISTS executions_running ON executions (seq) WHERE status = 'RUNNING';
CREATE TABLE IF NOT EXISTS step_log (
	id INTEGER PRIMARY KEY, exec INTEGER NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
	first_event INTEGER NOT NULL, last_event INTEGER NOT NULL,
	status TEXT NOT NULL, stopped INTEGER NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, output TEXT NOT NULL,
	input BLOB, events BLOB NOT NULL, wake INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX IF NOT EXISTS step_log_by_exec ON step_log (exec, seq);
CREATE TABLE IF NOT EXISTS activities (
	arn TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS activities_by_name ON activities (name, arn);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
`

// stepSummary are the columns added to the steps table of older databases
// for the execution's summary after the step; migrate adds them before it
// copies that table into step_log.
var stepSummary = []string{"status TEXT NOT NULL DEFAULT ''", "output TEXT NOT NULL DEFAULT ''", "error TEXT NOT NULL DEFAULT ''",
	"cause TEXT NOT NULL DEFAULT ''", "stopped INTEGER NOT NULL DEFAULT 0"}

// migrate creates the schema and moves the steps of databases made before
// the step_log table (a table keyed by execution and Seq, with an index by
// event id) into it.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, schema+mapRunSchema); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, versionSchema); err != nil { // version.go
		return err
	}
	// step_log before Step.Wake.
	var wake int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('step_log') WHERE name='wake'`).Scan(&wake); err != nil {
		return err
	}
	if wake == 0 {
		if _, err := db.ExecContext(ctx, `ALTER TABLE step_log ADD COLUMN wake INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	if err := migrateDefinitions(ctx, db); err != nil {
		return err
	}
	if err := checkFormat(ctx, db); err != nil {
		return err
	}
	if err := migrateOps(ctx, db); err != nil {
		return err
	}
	var old int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='steps'`).Scan(&old); err != nil || old == 0 {
		return err
	}
	for _, col := range stepSummary {
		name, _, _ := strings.Cut(col, " ")
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('steps') WHERE name=?`, name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE steps ADD COLUMN `+col); err != nil {
				return err
			}
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := copySteps(ctx, tx); err != nil {
		return fmt.Errorf("move steps: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE steps`); err != nil {
		return err
	}
	return tx.Commit()
}

// copySteps copies the rows of the old steps table into step_log, giving
// steps without events the empty range after the previous step's events.
func copySteps(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped FROM steps ORDER BY exec, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	prevExec, prevLast := int64(-1), int64(0)
	for rows.Next() {
		var exec, seq, at, first, last, stopped int64
		var input, events []byte
		var status, output, errName, cause string
		if err := rows.Scan(&exec, &seq, &at, &input, &first, &last, &events, &status, &output, &errName, &cause, &stopped); err != nil {
			return err
		}
		if exec != prevExec {
			prevExec, prevLast = exec, 0
		}
		if last < first {
			first, last = prevLast+1, prevLast
		}
		prevLast = last
		if events == nil {
			events = []byte{} // an empty blob scans as nil
		}
		if _, err := ins.ExecContext(ctx, exec, seq, at, input, first, last, events, status, output, errName, cause, stopped); err != nil {
			return err
		}
	}
	return rows.Err()
}

// opsSchema holds the tables and indexes of operations: ended executions
// by stop time (retention) and the outbox of status changes (events).
const opsSchema = `
CREATE INDEX IF NOT EXISTS executions_ended ON executions (stopped) WHERE status != 'RUNNING';
CREATE TABLE IF NOT EXISTS notices (
	id INTEGER PRIMARY KEY, exec_arn TEXT NOT NULL, status TEXT NOT NULL, at INTEGER NOT NULL,
	due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (exec_arn, status));
CREATE INDEX IF NOT EXISTS notices_due ON notices (due, id);
`

// migrateOps adds the state machines' logging column to databases made
// before it, and the schema of operations.
func migrateOps(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('state_machines') WHERE name='logging'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := db.ExecContext(ctx, `ALTER TABLE state_machines ADD COLUMN logging TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	_, err := db.ExecContext(ctx, opsSchema)
	return err
}

// migrateDefinitions adds the definitions table, which keeps each
// definition once, and the executions' def_hash column that points into
// it (sqlrow.Definition); the rows written before keep their definition
// column.
func migrateDefinitions(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS definitions (hash BLOB NOT NULL UNIQUE, body TEXT NOT NULL)`); err != nil {
		return err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('executions') WHERE name='def_hash'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.ExecContext(ctx, `ALTER TABLE executions ADD COLUMN def_hash BLOB`)
	return err
}

// format is the version of the file's layout that this stepd writes: 2
// since executions keep their definitions in the definitions table. A
// stepd that reads a file of a later format refuses to open it (one
// before this check existed cannot tell: docs/deployment.md says so).
const format = 2

// checkFormat refuses a file written by a later stepd and records format
// in a file of an earlier one.
func checkFormat(ctx context.Context, db *sql.DB) error {
	var found int
	err := db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key='format'`).Scan(&found)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if found > format {
		return fmt.Errorf("the database's format is version %d, newer than this stepd's %d: upgrade stepd", found, format)
	}
	if found < format {
		_, err = db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('format', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, format)
	}
	return err
}
