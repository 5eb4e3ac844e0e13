package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	// versions: state machine versions and aliases, what each execution
	// was started from, and resources' settings (version.go).
	`
CREATE TABLE versions (
	arn TEXT PRIMARY KEY, sm_arn TEXT NOT NULL, number BIGINT NOT NULL, definition TEXT NOT NULL, role_arn TEXT NOT NULL,
	type TEXT NOT NULL, revision TEXT NOT NULL, description TEXT NOT NULL, settings TEXT NOT NULL, created BIGINT NOT NULL,
	UNIQUE (sm_arn, number));
CREATE TABLE version_numbers (sm_arn TEXT PRIMARY KEY, last BIGINT NOT NULL);
CREATE TABLE aliases (
	arn TEXT PRIMARY KEY, sm_arn TEXT NOT NULL, name TEXT COLLATE "C" NOT NULL, description TEXT NOT NULL, routes TEXT NOT NULL,
	created BIGINT NOT NULL, updated BIGINT NOT NULL);
CREATE INDEX aliases_by_machine ON aliases (sm_arn, name);
CREATE TABLE execution_refs (exec_arn TEXT PRIMARY KEY, version_arn TEXT NOT NULL, alias_arn TEXT NOT NULL, trace_header TEXT NOT NULL);
CREATE INDEX execution_refs_by_version ON execution_refs (version_arn) WHERE version_arn <> '';
CREATE INDEX execution_refs_by_alias ON execution_refs (alias_arn) WHERE alias_arn <> '';
CREATE TABLE settings (arn TEXT PRIMARY KEY, settings TEXT NOT NULL);
`,
	// operations: state machines' loggingConfiguration; ended executions by
	// stop time (retention); the outbox of status changes (events).
	`
ALTER TABLE state_machines ADD COLUMN logging TEXT NOT NULL DEFAULT '';
CREATE INDEX executions_ended ON executions (stopped) WHERE status <> 'RUNNING';
CREATE TABLE notices (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, exec_arn TEXT NOT NULL, status TEXT NOT NULL,
	at BIGINT NOT NULL, due BIGINT NOT NULL, attempts INT NOT NULL DEFAULT 0, UNIQUE (exec_arn, status));
CREATE INDEX notices_due ON notices (due, id);
`,
	// answers to messages (store.Shared's Ask): a message names the
	// node that waits for its answer (reply_to, '' for none) and a key
	// that node chose; the owner leaves the answer in replies.
	`
ALTER TABLE inputs ADD COLUMN reply_to TEXT NOT NULL DEFAULT '', ADD COLUMN reply_key BIGINT NOT NULL DEFAULT 0;
CREATE TABLE replies (key BIGINT PRIMARY KEY, body BYTEA NOT NULL, sent TIMESTAMPTZ NOT NULL DEFAULT now());
`,
	// Map Runs, their child executions (the events of each write packed
	// in one row) and the redrive records of executions (maprun.go).
	`
CREATE TABLE map_runs (
	id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, arn TEXT NOT NULL UNIQUE, exec_arn TEXT NOT NULL, status TEXT NOT NULL,
	started BIGINT NOT NULL, stopped BIGINT NOT NULL, max_concurrency INTEGER NOT NULL, tolerated_count BIGINT NOT NULL,
	tolerated_percentage DOUBLE PRECISION NOT NULL, counts TEXT NOT NULL, redrive_count INTEGER NOT NULL, redrive_date BIGINT NOT NULL);
CREATE INDEX map_runs_by_exec ON map_runs (exec_arn, id DESC);
CREATE TABLE map_run_children (
	id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, arn TEXT NOT NULL UNIQUE, map_run_arn TEXT NOT NULL, name TEXT NOT NULL,
	state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, type TEXT NOT NULL, input TEXT NOT NULL,
	status TEXT NOT NULL, output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started BIGINT NOT NULL,
	stopped BIGINT NOT NULL, last_event BIGINT NOT NULL);
CREATE INDEX map_run_children_by_run ON map_run_children (map_run_arn, id DESC);
CREATE INDEX map_run_children_by_status ON map_run_children (map_run_arn, status, id DESC);
CREATE TABLE map_run_events (
	child BIGINT NOT NULL, first BIGINT NOT NULL, last BIGINT NOT NULL, events BYTEA NOT NULL, PRIMARY KEY (child, first));
CREATE TABLE redrives (arn TEXT PRIMARY KEY, count INTEGER NOT NULL, date BIGINT NOT NULL);
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
	// activity tasks held: the node that took a task and is handing it to
	// a worker (NULL while queued); a task held by a node whose lease has
	// lapsed is taken again.
	`
ALTER TABLE activity_tasks ADD COLUMN taken_by TEXT COLLATE "C";
`,
	// definitions kept once (sqlrow.Definition): an execution written
	// since holds its definition's hash, and an empty definition column.
	`
CREATE TABLE definitions (hash BYTEA PRIMARY KEY, body TEXT NOT NULL);
ALTER TABLE executions ADD COLUMN def_hash BYTEA;
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
	if err := ensureSchema(ctx, tx); err != nil {
		return 0, 0, err
	}
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

// ensureSchema creates the first schema of the search_path when none of
// its schemas exists (current_schema() is NULL: PostgreSQL would refuse
// every table with "no schema has been selected to create in"), under the
// advisory lock of that schema's name, so that nodes starting at once
// create it once. A role that may not create schemas is told the exact
// statement to have run for it.
func ensureSchema(ctx context.Context, tx pgx.Tx) error {
	var current *string
	var path, user string
	if err := tx.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path'), current_user`).Scan(&current, &path, &user); err != nil {
		return err
	}
	if current != nil {
		return nil
	}
	name := firstSchema(path)
	if name == "" {
		return fmt.Errorf("the search_path %q names no schema to create the tables in: set search_path in the --store URL (for example ?search_path=stepd)", path)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockMigrate, name); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+quoteIdent(name)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			return fmt.Errorf("the schema %s of the search_path does not exist, and the role %s may not create it (%s); have a database owner run: CREATE SCHEMA %s AUTHORIZATION %s",
				quoteIdent(name), quoteIdent(user), pe.Message, quoteIdent(name), quoteIdent(user))
		}
		return fmt.Errorf("create the schema %s of the search_path: %w", quoteIdent(name), err)
	}
	return nil
}

// firstSchema returns the first schema that a search_path setting names,
// as PostgreSQL reads it (SplitIdentifierString: entries separated by
// commas, unquoted names folded to lower case, "" inside quotes for a
// quote), leaving out "$user" and the system schemas; "" when there is
// none or the setting is malformed.
func firstSchema(path string) string {
	names, ok := splitIdents(path)
	if !ok {
		return ""
	}
	for _, name := range names {
		switch name {
		case "$user", "pg_catalog", "pg_temp", "information_schema":
			continue
		}
		if strings.HasPrefix(name, "pg_") {
			continue // reserved for the system: CREATE SCHEMA refuses it
		}
		return name
	}
	return ""
}

// splitIdents splits a list of identifiers as PostgreSQL's
// SplitIdentifierString does; ok is false when the list is malformed.
func splitIdents(s string) (names []string, ok bool) {
	var out []string
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	skip()
	if i == len(s) {
		return nil, true
	}
	for {
		var name string
		if s[i] == '"' {
			var b strings.Builder
			i++
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return nil, false // no closing quote
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			name = b.String()
		} else {
			j := i
			for j < len(s) && s[j] != ',' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' {
				j++
			}
			name = asciiLower(s[i:j])
			i = j
		}
		if name == "" {
			return nil, false
		}
		out = append(out, name)
		skip()
		if i == len(s) {
			return out, true
		}
		if s[i] != ',' {
			return nil, false
		}
		i++
		skip()
		if i == len(s) {
			return nil, false
		}
	}
}

// asciiLower folds the ASCII letters of s to lower case, as PostgreSQL
// folds an unquoted identifier.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
