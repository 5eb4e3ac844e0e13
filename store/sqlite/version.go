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

const versionColumns = `arn, sm_arn, number, definition, role_arn, type, revision, description, settings, created`

func scanVersion(row scanner) (*store.Version, error) {
	var v store.Version
	var created int64
	if err := row.Scan(&v.ARN, &v.StateMachineARN, &v.Number, &v.Definition, &v.RoleARN, &v.Type, &v.RevisionID, &v.Description, &v.Settings, &created); err != nil {
		return nil, err
	}
	v.Created = codec.FromNanos(created)
	return &v, nil
}

// PublishVersion implements store.Versioned.
func (s *Store) PublishVersion(ctx context.Context, v *store.Version, limit int) (*store.Version, bool, error) {
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
		old, err := scanVersion(tx.QueryRow(`SELECT `+versionColumns+` FROM versions WHERE sm_arn=? AND revision=? ORDER BY number DESC LIMIT 1`, v.StateMachineARN, v.RevisionID))
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
		if _, err := tx.Exec(`INSERT INTO versions VALUES (?,?,?,?,?,?,?,?,?,?)`, c.ARN, c.StateMachineARN, c.Number, c.Definition, c.RoleARN, c.Type,
			c.RevisionID, c.Description, c.Settings, codec.Nanos(c.Created)); err != nil {
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
func (s *Store) GetVersion(ctx context.Context, arn string) (*store.Version, error) {
	v, err := scanVersion(s.db.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM versions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
	}
	return v, err
}

// ListVersions implements store.Versioned.
func (s *Store) ListVersions(ctx context.Context, smARN string, p store.Page) ([]*store.Version, string, error) {
	limit := codec.PageLimit(p)
	filter := codec.FilterHash("versions", smARN)
	q, args := `SELECT `+versionColumns+` FROM versions WHERE sm_arn=?`, []any{smARN}
	if p.Token != "" {
		before, _, err := codec.ParseToken(p.Token, kindVersions, filter, 0)
		if err != nil {
			return nil, "", err
		}
		q += ` AND number<?`
		args = append(args, before)
	}
	list, err := query(ctx, s.db, scanVersion, q+` ORDER BY number DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil || len(list) <= limit {
		return list, "", err
	}
	list = list[:limit]
	return list, codec.MakeToken(kindVersions, filter, list[limit-1].Number), nil
}

// routesOf reads the routes of the aliases of a state machine. It runs
// in a write transaction.
func routesOf(tx *sql.Tx, smARN string) (map[string][]store.Route, error) {
	rows, err := tx.Query(`SELECT arn, routes FROM aliases WHERE sm_arn=?`, smARN)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]store.Route{}
	for rows.Next() {
		var arn, routes string
		if err := rows.Scan(&arn, &routes); err != nil {
			return nil, err
		}
		var rs []store.Route
		if err := json.Unmarshal([]byte(routes), &rs); err != nil {
			return nil, fmt.Errorf("alias %s: routes: %w", arn, err)
		}
		out[arn] = rs
	}
	return out, rows.Err()
}

// DeleteVersion implements store.Versioned.
func (s *Store) DeleteVersion(ctx context.Context, arn string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		var smARN string
		if err := tx.QueryRow(`SELECT sm_arn FROM versions WHERE arn=?`, arn).Scan(&smARN); errors.Is(err, sql.ErrNoRows) {
			return refuse(fmt.Errorf("version %s: %w", arn, store.ErrNotFound))
		} else if err != nil {
			return refuse(err)
		}
		aliases, err := routesOf(tx, smARN)
		if err != nil {
			return refuse(err)
		}
		for alias, routes := range aliases {
			for _, r := range routes {
				if r.VersionARN == arn {
					return refuse(fmt.Errorf("version %s: alias %s routes to it: %w", arn, alias, store.ErrInUse))
				}
			}
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
func (s *Store) CreateAlias(ctx context.Context, a *store.Alias, limit int) error {
	routes, err := json.Marshal(a.Routes)
	if err != nil {
		return fmt.Errorf("alias %s: routes: %w", a.ARN, err)
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
		_, err := tx.Exec(`INSERT INTO aliases VALUES (?,?,?,?,?,?,?)`, a.ARN, a.StateMachineARN, a.Name, a.Description, string(routes),
			codec.Nanos(a.Created), codec.Nanos(a.Updated))
		return err
	})
}

// UpdateAlias implements store.Versioned.
func (s *Store) UpdateAlias(ctx context.Context, a *store.Alias) error {
	routes, err := json.Marshal(a.Routes)
	if err != nil {
		return fmt.Errorf("alias %s: routes: %w", a.ARN, err)
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
		_, err := tx.Exec(`UPDATE aliases SET description=?, routes=?, updated=? WHERE arn=?`, a.Description, string(routes), codec.Nanos(a.Updated), a.ARN)
		return err
	})
}

const aliasColumns = `arn, sm_arn, name, description, routes, created, updated`

func scanAlias(row scanner) (*store.Alias, error) {
	var a store.Alias
	var routes string
	var created, updated int64
	if err := row.Scan(&a.ARN, &a.StateMachineARN, &a.Name, &a.Description, &routes, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(routes), &a.Routes); err != nil {
		return nil, fmt.Errorf("alias %s: routes: %w", a.ARN, err)
	}
	a.Created, a.Updated = codec.FromNanos(created), codec.FromNanos(updated)
	return &a, nil
}

// GetAlias implements store.Versioned.
func (s *Store) GetAlias(ctx context.Context, arn string) (*store.Alias, error) {
	a, err := scanAlias(s.db.QueryRowContext(ctx, `SELECT `+aliasColumns+` FROM aliases WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	return a, err
}

// ListAliases implements store.Versioned.
func (s *Store) ListAliases(ctx context.Context, smARN string, p store.Page) ([]*store.Alias, string, error) {
	limit := codec.PageLimit(p)
	filter := codec.FilterHash("aliases", smARN)
	q, args := `SELECT `+aliasColumns+` FROM aliases WHERE sm_arn=?`, []any{smARN}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kindAliases, filter, 1)
		if err != nil {
			return nil, "", err
		}
		q += ` AND name>?`
		args = append(args, k[0])
	}
	list, err := query(ctx, s.db, scanAlias, q+` ORDER BY name LIMIT ?`, append(args, limit+1)...)
	if err != nil || len(list) <= limit {
		return list, "", err
	}
	list = list[:limit]
	return list, codec.MakeToken(kindAliases, filter, 0, list[limit-1].Name), nil
}

// DeleteAlias implements store.Versioned.
func (s *Store) DeleteAlias(ctx context.Context, arn string) error {
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
func (s *Store) DeleteVersions(ctx context.Context, smARN string) error {
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
func (s *Store) PutExecutionRef(ctx context.Context, r *store.ExecutionRef) error {
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
func (s *Store) ExecutionRefs(ctx context.Context, arns []string) (map[string]*store.ExecutionRef, error) {
	out := map[string]*store.ExecutionRef{}
	if len(arns) == 0 {
		return out, nil
	}
	if empty, err := s.refs.empty(ctx, s.db); err != nil || empty {
		return out, err
	}
	if len(arns) == 1 {
		var r store.ExecutionRef
		err := s.db.QueryRowContext(ctx, `SELECT r.exec_arn, r.version_arn, r.alias_arn, r.trace_header FROM execution_refs r
			WHERE r.exec_arn = ? AND EXISTS (SELECT 1 FROM executions WHERE arn = r.exec_arn)`, arns[0]).Scan(&r.ExecutionARN, &r.VersionARN, &r.AliasARN, &r.TraceHeader)
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out[r.ExecutionARN] = &r
		return out, nil
	}
	list, err := json.Marshal(arns)
	if err != nil {
		return nil, err
	}
	refs, err := query(ctx, s.db, func(row scanner) (*store.ExecutionRef, error) {
		var r store.ExecutionRef
		return &r, row.Scan(&r.ExecutionARN, &r.VersionARN, &r.AliasARN, &r.TraceHeader)
	}, `SELECT r.exec_arn, r.version_arn, r.alias_arn, r.trace_header FROM execution_refs r JOIN executions e ON e.arn = r.exec_arn
		WHERE r.exec_arn IN (SELECT value FROM json_each(?))`, string(list))
	for _, r := range refs {
		out[r.ExecutionARN] = r
	}
	return out, err
}

// ListExecutionsOf implements store.Versioned.
func (s *Store) ListExecutionsOf(ctx context.Context, ref, status string, p store.Page) ([]*store.Execution, string, error) {
	q := `SELECT ` + listColumns + ` FROM executions WHERE arn IN (SELECT exec_arn FROM execution_refs WHERE version_arn=? AND version_arn != ''
		UNION ALL SELECT exec_arn FROM execution_refs WHERE alias_arn=? AND alias_arn != '')`
	return bySeq(ctx, s.db, kindExecutionsOfRef, codec.FilterHash("executions of", ref, status), q,
		[]any{ref, ref}, status, p, scanListed, func(r execKeyed) (*store.Execution, int64) { return r.e, r.key })
}

// PutSettings implements store.Versioned.
func (s *Store) PutSettings(ctx context.Context, arn, settings string) error {
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
func (s *Store) GetSettings(ctx context.Context, arn string) (string, error) {
	var out string
	err := s.db.QueryRowContext(ctx, `SELECT settings FROM settings WHERE arn=?`, arn).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return out, err
}
