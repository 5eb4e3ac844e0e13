package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions in order: migrations[i] takes a
// database from version i to version i+1. A released entry never changes;
// a change of schema is a new entry.
var migrations = []string{
	// 1: the tables of a single node.
	`
CREATE TABLE state_machines (
	arn TEXT COLLATE "C" PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, type TEXT NOT NULL, definition TEXT NOT NULL,
	role_arn TEXT NOT NULL, created BIGINT NOT NULL, updated BIGINT NOT NULL, revision TEXT NOT NULL, tags TEXT NOT NULL);
CREATE INDEX state_machines_by_name ON state_machines (name, arn);
CREATE TABLE executions (
	id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, arn TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, definition TEXT NOT NULL, type TEXT NOT NULL,
	role_arn TEXT NOT NULL, test_case TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
	output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started BIGINT NOT NULL, stopped BIGINT NOT NULL);
CREATE INDEX executions_by_machine ON executions (state_machine_arn, id DESC);
CREATE INDEX executions_by_machine_status ON executions (state_machine_arn, status, id DESC);
CREATE INDEX executions_running ON executions (id) WHERE status = 'RUNNING';
CREATE TABLE step_log (
	exec BIGINT NOT NULL, seq BIGINT NOT NULL, at BIGINT NOT NULL,
	first_event BIGINT NOT NULL, last_event BIGINT NOT NULL,
	status TEXT NOT NULL, stopped BIGINT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, output TEXT NOT NULL,
	input BYTEA, events BYTEA NOT NULL, PRIMARY KEY (exec, seq));
CREATE TABLE activities (
	arn TEXT COLLATE "C" PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, created BIGINT NOT NULL);
CREATE INDEX activities_by_name ON activities (name, arn);
CREATE TABLE meta (key TEXT PRIMARY KEY, value BYTEA NOT NULL);
`,
	// 2: several nodes. Each node has a row while its lease lasts; each
	// execution names its owner (the empty owner, of executions from
	// version 1, is nobody's: the first node to claim takes them).
	`
CREATE TABLE nodes (id TEXT PRIMARY KEY, lease_until TIMESTAMPTZ NOT NULL, started TIMESTAMPTZ NOT NULL DEFAULT now());
ALTER TABLE executions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX executions_running_by_owner ON executions (owner) WHERE status = 'RUNNING';
`,
	// 3: messages for the owner of an execution (stops and callbacks sent
	// to another node), in the order sent.
	`
CREATE TABLE inputs (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, exec_arn TEXT NOT NULL, body BYTEA NOT NULL,
	sent TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE INDEX inputs_by_exec ON inputs (exec_arn, id);
`,
	// 4: activity tasks waiting for a worker of any node.
	`
CREATE TABLE activity_tasks (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, activity_arn TEXT NOT NULL,
	exec_arn TEXT NOT NULL, token TEXT NOT NULL UNIQUE, input TEXT NOT NULL);
CREATE INDEX activity_tasks_by_activity ON activity_tasks (activity_arn, id);
`,
	// 5: a step's wake time (Step.Wake): the first timer's due time when
	// the execution waits only for timers; 0 when none.
	`
ALTER TABLE step_log ADD COLUMN wake BIGINT NOT NULL DEFAULT 0;
`,
	// schedules: EventBridge Scheduler schedules (store.Schedules); next and
	// claimed are Unix nanoseconds, 0 when none.
	`
CREATE TABLE schedules (
	grp TEXT COLLATE "C" NOT NULL, name TEXT COLLATE "C" NOT NULL, state TEXT NOT NULL, doc BYTEA NOT NULL,
	next BIGINT NOT NULL, version BIGINT NOT NULL, claimed BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (grp, name));
CREATE INDEX schedules_by_name ON schedules (name, grp);
CREATE INDEX schedules_due ON schedules (next) WHERE next <> 0;
`,
}

// lockMigrate is the first key of the advisory lock taken while the schema
// is migrated (the second is the schema's name hashed), so that nodes
// starting at once migrate one after the other and every one but the
// first finds nothing left to do.
const lockMigrate = 0x73746570 // "step"

// migrate brings the schema of the connection's current schema (the first
// of its search_path) to the latest version, in one transaction holding
// the advisory lock. It returns the version found and the version left.
func migrate(ctx context.Context, conn *pgx.Conn) (from, to int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, lockMigrate); err != nil {
		return 0, 0, fmt.Errorf("advisory lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS stepd_schema (version INT NOT NULL)`); err != nil {
		return 0, 0, err
	}
	var rows int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*), COALESCE(MAX(version), 0) FROM stepd_schema`).Scan(&rows, &from); err != nil {
		return 0, 0, err
	}
	if from > len(migrations) {
		return from, from, fmt.Errorf("the database's schema is version %d, newer than this stepd's %d: upgrade stepd", from, len(migrations))
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return from, v, fmt.Errorf("schema version %d: %w", v+1, err)
		}
	}
	if rows == 0 {
		_, err = tx.Exec(ctx, `INSERT INTO stepd_schema VALUES ($1)`, len(migrations))
	} else {
		_, err = tx.Exec(ctx, `UPDATE stepd_schema SET version = $1`, len(migrations))
	}
	if err != nil {
		return from, from, err
	}
	if err := tx.Commit(ctx); err != nil {
		return from, from, err
	}
	return from, len(migrations), nil
}
