package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// versionSchema holds what store.Versioned keeps: versions (numbered per
// state machine; version_numbers remembers the last number given, so a
// deleted version's number is never given again), aliases with their
// routes as JSON, the version and alias each execution was started from,
// and each resource's settings.
const versionSchema = `
CREATE TABLE IF NOT EXISTS versions (
	arn TEXT PRIMARY KEY, sm_arn TEXT NOT NULL, number INTEGER NOT NULL, definition TEXT NOT NULL, role_arn TEXT NOT NULL,
	type TEXT NOT NULL, revision TEXT NOT NULL, description TEXT NOT NULL, settings TEXT NOT NULL, created INTEGER NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS versions_by_machine ON versions (sm_arn, number);
CREATE TABLE IF NOT EXISTS version_numbers (sm_arn TEXT PRIMARY KEY, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS aliases (
	arn TEXT PRIMARY KEY, sm_arn TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, routes TEXT NOT NULL,
	created INTEGER NOT NULL, updated INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_by_machine ON aliases (sm_arn, name);
CREATE TABLE IF NOT EXISTS execution_refs (exec_arn TEXT PRIMARY KEY, version_arn TEXT NOT NULL, alias_arn TEXT NOT NULL, trace_header TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS execution_refs_by_version ON execution_refs (version_arn) WHERE version_arn != '';
CREATE INDEX IF NOT EXISTS execution_refs_by_alias ON execution_refs (alias_arn) WHERE alias_arn != '';
CREATE TABLE IF NOT EXISTS settings (arn TEXT PRIMARY KEY, settings TEXT NOT NULL);
`

// Token kinds of the lists of versions, aliases and executions by version
// or alias (their filters differ from the other lists' too).
const (
	kindVersions        = 'v'
	kindAliases         = 'l'
	kindExecutionsOfRef = 'r'
)

// PublishVersion implements store.Versioned.
func (s versionPart) PublishVersion(ctx context.Context, v *store.Version, limit int) (*store.Version, bool, error) {
	var out *store.Version
	var created bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		out, created = nil, false
		var one int
		if err := tx.QueryRow(`SELECT 1 FROM state_machines WHERE arn=?`, v.StateMachineARN).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return refuse(fmt.Errorf("state machine %s: %w", v.StateMachineARN, store.ErrNotFound))
		} else if err != nil {
			return refuse(err)
		}
		old, err := sqlrow.ScanVersion(tx.QueryRow(`SELECT `+sqlrow.VersionColumns+` FROM versions WHERE sm_arn=? AND revision=? ORDER BY number DESC LIMIT 1`, v.StateMachineARN, v.RevisionID))
		if err == nil {
			out = old
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return refuse(err)
		}
		var n, last int64
		if err := tx.QueryRow(`SELECT COUNT(*), COALESCE((SELECT last FROM version_numbers WHERE sm_arn=?), 0) FROM versions WHERE sm_arn=?`, v.StateMachineARN, v.StateMachineARN).Scan(&n, &last); err != nil {
			return refuse(err)
		}
		if n >= int64(limit) {
			return refuse(fmt.Errorf("state machine %s: %d versions: %w", v.StateMachineARN, n, store.ErrLimit))
		}
		c := *v
		c.Number = last + 1
		c.ARN = fmt.Sprintf("%s:%d", c.StateMachineARN, c.Number)
		if _, err := tx.Exec(`INSERT INTO version_numbers VALUES (?, ?) ON CONFLICT (sm_arn) DO UPDATE SET last=excluded.last`, c.StateMachineARN, c.Number); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO versions (`+sqlrow.VersionColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`, sqlrow.VersionValues(&c)...); err != nil {
			return err
		}
		out, created = &c, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		*v = *out
	}
	return out, created, nil
}

// GetVersion implements store.Versioned.
func (s versionPart) GetVersion(ctx context.Context, arn string) (*store.Version, error) {
	v, err := sqlrow.ScanVersion(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.VersionColumns+` FROM versions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
	}
	return v, err
}

// ListVersions implements store.Versioned.
func (s versionPart) ListVersions(ctx context.Context, smARN string, p store.Page) ([]*store.Version, string, error) {
	return sqlrow.Newest(p, kindVersions, codec.FilterHash("versions", smARN), `SELECT `+sqlrow.VersionColumns+` FROM versions WHERE sm_arn=`+param(1),
		[]any{smARN}, "", "number", param, reads(ctx, s.db, sqlrow.ScanVersionKeyed))
}

// DeleteVersion implements store.Versioned.
func (s versionPart) DeleteVersion(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var smARN string
		if err := tx.QueryRow(`SELECT sm_arn FROM versions WHERE arn=?`, arn).Scan(&smARN); errors.Is(err, sql.ErrNoRows) {
			return refuse(fmt.Errorf("version %s: %w", arn, store.ErrNotFound))
		} else if err != nil {
			return refuse(err)
		}
		rows, err := tx.Query(`SELECT arn, routes FROM aliases WHERE sm_arn=?`, smARN)
		if err != nil {
			return refuse(err)
		}
		err = sqlrow.NotRouted(rows, arn)
		rows.Close()
		if err != nil {
			return refuse(err)
		}
		_, err = tx.Exec(`DELETE FROM versions WHERE arn=?`, arn)
		return err
	})
}

// routesExist checks, in a write transaction, that the versions of routes
// exist.
func routesExist(tx *sql.Tx, routes []store.Route) error {
	for _, r := range routes {
		var one int
		if err := tx.QueryRow(`SELECT 1 FROM versions WHERE arn=?`, r.VersionARN).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("version %s: %w", r.VersionARN, store.ErrNotFound)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// CreateAlias implements store.Versioned.
func (s versionPart) CreateAlias(ctx context.Context, a *store.Alias, limit int) error {
	routes, err := sqlrow.Routes(a)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRow(`SELECT COUNT(*) FROM aliases WHERE arn=?`, a.ARN).Scan(&n); err != nil {
			return refuse(err)
		} else if n > 0 {
			return refuse(fmt.Errorf("alias %s: %w", a.ARN, store.ErrExists))
		}
		if err := routesExist(tx, a.Routes); err != nil {
			return refuse(err)
		}
		if err := tx.QueryRow(`SELECT COUNT(*) FROM aliases WHERE sm_arn=?`, a.StateMachineARN).Scan(&n); err != nil {
			return refuse(err)
		} else if n >= limit {
			return refuse(fmt.Errorf("state machine %s: %d aliases: %w", a.StateMachineARN, n, store.ErrLimit))
		}
		_, err := tx.Exec(`INSERT INTO aliases VALUES (?,?,?,?,?,?,?)`, a.ARN, a.StateMachineARN, a.Name, a.Description, routes,
			codec.Nanos(a.Created), codec.Nanos(a.Updated))
		return err
	})
}

// UpdateAlias implements store.Versioned.
func (s versionPart) UpdateAlias(ctx context.Context, a *store.Alias) error {
	routes, err := sqlrow.Routes(a)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRow(`SELECT COUNT(*) FROM aliases WHERE arn=?`, a.ARN).Scan(&n); err != nil {
			return refuse(err)
		} else if n == 0 {
			return refuse(fmt.Errorf("alias %s: %w", a.ARN, store.ErrNotFound))
		}
		if err := routesExist(tx, a.Routes); err != nil {
			return refuse(err)
		}
		_, err := tx.Exec(`UPDATE aliases SET description=?, routes=?, updated=? WHERE arn=?`, a.Description, routes, codec.Nanos(a.Updated), a.ARN)
		return err
	})
}

// GetAlias implements store.Versioned.
func (s versionPart) GetAlias(ctx context.Context, arn string) (*store.Alias, error) {
	a, err := sqlrow.ScanAlias(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.AliasColumns+` FROM aliases WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	return a, err
}

// ListAliases implements store.Versioned.
func (s versionPart) ListAliases(ctx context.Context, smARN string, p store.Page) ([]*store.Alias, string, error) {
	limit := codec.PageLimit(p)
	filter := codec.FilterHash("aliases", smARN)
	q, args := `SELECT `+sqlrow.AliasColumns+` FROM aliases WHERE sm_arn=?`, []any{smARN}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kindAliases, filter, 1)
		if err != nil {
			return nil, "", err
		}
		q += ` AND name>?`
		args = append(args, k[0])
	}
	list, err := query(ctx, s.db, sqlrow.ScanAlias, q+` ORDER BY name LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	list, next := sqlrow.Page(list, limit, func(last *store.Alias) string { return codec.MakeToken(kindAliases, filter, 0, last.Name) })
	return list, next, nil
}

// DeleteAlias implements store.Versioned.
func (s versionPart) DeleteAlias(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM aliases WHERE arn=?`, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return refuse(fmt.Errorf("alias %s: %w", arn, store.ErrNotFound))
		}
		return nil
	})
}

// DeleteVersions implements store.Versioned.
func (s versionPart) DeleteVersions(ctx context.Context, smARN string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM versions WHERE sm_arn=?`, `DELETE FROM version_numbers WHERE sm_arn=?`, `DELETE FROM aliases WHERE sm_arn=?`} {
			if _, err := tx.Exec(q, smARN); err != nil {
				return err
			}
		}
		return nil
	})
}

// rarelyUsed knows whether a table that most servers never write has any
// row, so that reading it costs nothing while it has none (Store.refs:
// executions started from a version, an alias or with a trace header;
// Store.redrives: executions redriven).
type rarelyUsed struct {
	table string
	state atomic.Int32 // 0 not known yet, 1 no row, 2 some
}

const (
	rowsUnknown = iota
	rowsNone
	rowsSome
)

// adding is called before a row is written: a reader may look for it too
// early, but never misses it.
func (r *rarelyUsed) adding() { r.state.Store(rowsSome) }

// empty reports whether the table has no row, reading it the first time.
func (r *rarelyUsed) empty(ctx context.Context, db *reader) (bool, error) {
	switch r.state.Load() {
	case rowsNone:
		return true, nil
	case rowsSome:
		return false, nil
	}
	var some bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+r.table+`)`).Scan(&some); err != nil {
		return false, err
	}
	if !some {
		r.state.CompareAndSwap(rowsUnknown, rowsNone) // unless a row came in between
		if r.state.Load() == rowsNone {
			return true, nil
		}
	}
	r.state.CompareAndSwap(rowsUnknown, rowsSome)
	return false, nil
}

// PutExecutionRef implements store.Versioned.
func (s versionPart) PutExecutionRef(ctx context.Context, r *store.ExecutionRef) error {
	s.refs.adding()
	ref := *r
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO execution_refs SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM executions WHERE arn=?)
			ON CONFLICT (exec_arn) DO UPDATE SET version_arn=excluded.version_arn, alias_arn=excluded.alias_arn, trace_header=excluded.trace_header`,
			ref.ExecutionARN, ref.VersionARN, ref.AliasARN, ref.TraceHeader, ref.ExecutionARN)
		return err
	})
}

// ExecutionRefs implements store.Versioned.
func (s versionPart) ExecutionRefs(ctx context.Context, arns []string) (map[string]*store.ExecutionRef, error) {
	out := map[string]*store.ExecutionRef{}
	if len(arns) == 0 {
		return out, nil
	}
	if empty, err := s.refs.empty(ctx, s.db); err != nil || empty {
		return out, err
	}
	if len(arns) == 1 {
		r, err := sqlrow.ScanRef(s.db.QueryRowContext(ctx, `SELECT r.exec_arn, r.version_arn, r.alias_arn, r.trace_header FROM execution_refs r
			WHERE r.exec_arn = ? AND EXISTS (SELECT 1 FROM executions WHERE arn = r.exec_arn)`, arns[0]))
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out[r.ExecutionARN] = r
		return out, nil
	}
	list, err := json.Marshal(arns)
	if err != nil {
		return nil, err
	}
	refs, err := query(ctx, s.db, sqlrow.ScanRef, `SELECT r.exec_arn, r.version_arn, r.alias_arn, r.trace_header FROM execution_refs r JOIN executions e ON e.arn = r.exec_arn
		WHERE r.exec_arn IN (SELECT value FROM json_each(?))`, string(list))
	for _, r := range refs {
		out[r.ExecutionARN] = r
	}
	return out, err
}

// ListExecutionsOf implements store.Versioned.
func (s versionPart) ListExecutionsOf(ctx context.Context, ref, status string, p store.Page) ([]*store.Execution, string, error) {
	q := `SELECT ` + listColumns + ` FROM executions WHERE arn IN (SELECT exec_arn FROM execution_refs WHERE version_arn=? AND version_arn != ''
		UNION ALL SELECT exec_arn FROM execution_refs WHERE alias_arn=? AND alias_arn != '')`
	return bySeq(ctx, s.db, kindExecutionsOfRef, codec.FilterHash("executions of", ref, status), q,
		[]any{ref, ref}, status, p, scanListed)
}

// PutSettings implements store.Versioned.
func (s versionPart) PutSettings(ctx context.Context, arn, settings string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if settings == "" {
			_, err := tx.Exec(`DELETE FROM settings WHERE arn=?`, arn)
			return err
		}
		_, err := tx.Exec(`INSERT INTO settings VALUES (?, ?) ON CONFLICT (arn) DO UPDATE SET settings=excluded.settings`, arn, settings)
		return err
	})
}

// GetSettings implements store.Versioned.
func (s versionPart) GetSettings(ctx context.Context, arn string) (string, error) {
	var out string
	err := s.db.QueryRowContext(ctx, `SELECT settings FROM settings WHERE arn=?`, arn).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return out, err
}
