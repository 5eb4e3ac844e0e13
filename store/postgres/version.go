package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// Token kinds of the lists of versions, aliases and executions by version
// or alias (their filters differ from the other lists' too).
const (
	kindVersions        = 'v'
	kindAliases         = 'l'
	kindExecutionsOfRef = 'r'
)

// inTx runs fn in a transaction on the pool and commits it unless fn
// fails.
func (s versionPart) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return nil
}

// lockMachine locks a state machine's row for the transaction, so that
// the versions and aliases of one state machine change one writer at a
// time across nodes; ErrNotFound when it does not exist.
func lockMachine(ctx context.Context, tx pgx.Tx, smARN string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM state_machines WHERE arn=$1 FOR UPDATE`, smARN).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state machine %s: %w", smARN, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return nil
}

// PublishVersion implements store.Versioned.
func (s versionPart) PublishVersion(ctx context.Context, v *store.Version, limit int) (*store.Version, bool, error) {
	var out *store.Version
	var created bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockMachine(ctx, tx, v.StateMachineARN); err != nil {
			return err
		}
		old, err := scanVersion(tx.QueryRow(ctx, `SELECT `+sqlrow.VersionColumns+` FROM versions WHERE sm_arn=$1 AND revision=$2 ORDER BY number DESC LIMIT 1`, v.StateMachineARN, v.RevisionID))
		if err == nil {
			out = old
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres store: %w", err)
		}
		var n, last int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*), COALESCE((SELECT last FROM version_numbers WHERE sm_arn=$1), 0) FROM versions WHERE sm_arn=$1`, v.StateMachineARN).Scan(&n, &last); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if n >= int64(limit) {
			return fmt.Errorf("state machine %s: %d versions: %w", v.StateMachineARN, n, store.ErrLimit)
		}
		c := *v
		c.Number = last + 1
		c.ARN = fmt.Sprintf("%s:%d", c.StateMachineARN, c.Number)
		if _, err := tx.Exec(ctx, `INSERT INTO version_numbers VALUES ($1, $2) ON CONFLICT (sm_arn) DO UPDATE SET last=excluded.last`, c.StateMachineARN, c.Number); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO versions (`+sqlrow.VersionColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`, versionValues(&c)...); err != nil {
			return fmt.Errorf("postgres store: %w", err)
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
	v, err := scanVersion(s.pool.QueryRow(ctx, `SELECT `+sqlrow.VersionColumns+` FROM versions WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return v, nil
}

// ListVersions implements store.Versioned.
func (s versionPart) ListVersions(ctx context.Context, smARN string, p store.Page) ([]*store.Version, string, error) {
	return sqlrow.Newest(p, kindVersions, codec.FilterHash("versions", smARN), `SELECT `+sqlrow.VersionColumns+` FROM versions WHERE sm_arn=`+param(1),
		[]any{smARN}, "", "number", param, reads(ctx, s.Store, scanVersionKeyed))
}

// DeleteVersion implements store.Versioned.
func (s versionPart) DeleteVersion(ctx context.Context, arn string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var smARN string
		if err := tx.QueryRow(ctx, `SELECT sm_arn FROM versions WHERE arn=$1`, arn).Scan(&smARN); errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if err := lockMachine(ctx, tx, smARN); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT arn, routes FROM aliases WHERE sm_arn=$1`, smARN)
		if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		err = sqlrow.NotRouted(rows, arn)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM versions WHERE arn=$1`, arn); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		return nil
	})
}

// routesExist checks, in a transaction, that the versions of routes exist.
func routesExist(ctx context.Context, tx pgx.Tx, routes []store.Route) error {
	for _, r := range routes {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM versions WHERE arn=$1`, r.VersionARN).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("version %s: %w", r.VersionARN, store.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("postgres store: %w", err)
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
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockMachine(ctx, tx, a.StateMachineARN); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM aliases WHERE arn=$1`, a.ARN).Scan(&n); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		} else if n > 0 {
			return fmt.Errorf("alias %s: %w", a.ARN, store.ErrExists)
		}
		if err := routesExist(ctx, tx, a.Routes); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM aliases WHERE sm_arn=$1`, a.StateMachineARN).Scan(&n); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		} else if n >= limit {
			return fmt.Errorf("state machine %s: %d aliases: %w", a.StateMachineARN, n, store.ErrLimit)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO aliases VALUES ($1,$2,$3,$4,$5,$6,$7)`, a.ARN, a.StateMachineARN, a.Name, toText(a.Description), routes,
			codec.Nanos(a.Created), codec.Nanos(a.Updated)); err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		return nil
	})
}

// UpdateAlias implements store.Versioned.
func (s versionPart) UpdateAlias(ctx context.Context, a *store.Alias) error {
	routes, err := sqlrow.Routes(a)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockMachine(ctx, tx, a.StateMachineARN); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := routesExist(ctx, tx, a.Routes); err != nil {
			return err
		}
		ct, err := tx.Exec(ctx, `UPDATE aliases SET description=$1, routes=$2, updated=$3 WHERE arn=$4`, toText(a.Description), routes, codec.Nanos(a.Updated), a.ARN)
		if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if ct.RowsAffected() == 0 {
			return fmt.Errorf("alias %s: %w", a.ARN, store.ErrNotFound)
		}
		return nil
	})
}

// GetAlias implements store.Versioned.
func (s versionPart) GetAlias(ctx context.Context, arn string) (*store.Alias, error) {
	a, err := scanAlias(s.pool.QueryRow(ctx, `SELECT `+sqlrow.AliasColumns+` FROM aliases WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return a, nil
}

// ListAliases implements store.Versioned.
func (s versionPart) ListAliases(ctx context.Context, smARN string, p store.Page) ([]*store.Alias, string, error) {
	limit := codec.PageLimit(p)
	filter := codec.FilterHash("aliases", smARN)
	q, args := `SELECT `+sqlrow.AliasColumns+` FROM aliases WHERE sm_arn=$1`, []any{smARN}
	if p.Token != "" {
		_, k, err := codec.ParseToken(p.Token, kindAliases, filter, 1)
		if err != nil {
			return nil, "", err
		}
		q += ` AND name>$2`
		args = append(args, k[0])
	}
	q += fmt.Sprintf(` ORDER BY name LIMIT $%d`, len(args)+1)
	list, err := query(ctx, s.Store, scanAlias, q, append(args, limit+1)...)
	if err != nil {
		return nil, "", err
	}
	list, next := sqlrow.Page(list, limit, func(last *store.Alias) string { return codec.MakeToken(kindAliases, filter, 0, last.Name) })
	return list, next, nil
}

// DeleteAlias implements store.Versioned.
func (s versionPart) DeleteAlias(ctx context.Context, arn string) error {
	n, err := s.exec(ctx, `DELETE FROM aliases WHERE arn=$1`, arn)
	if err == nil && n == 0 {
		return fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	return err
}

// DeleteVersions implements store.Versioned.
func (s versionPart) DeleteVersions(ctx context.Context, smARN string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{`DELETE FROM versions WHERE sm_arn=$1`, `DELETE FROM version_numbers WHERE sm_arn=$1`, `DELETE FROM aliases WHERE sm_arn=$1`} {
			if _, err := tx.Exec(ctx, q, smARN); err != nil {
				return fmt.Errorf("postgres store: %w", err)
			}
		}
		return nil
	})
}

// PutExecutionRef implements store.Versioned.
func (s versionPart) PutExecutionRef(ctx context.Context, r *store.ExecutionRef) error {
	_, err := s.exec(ctx, `INSERT INTO execution_refs SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM executions WHERE arn=$1)
		ON CONFLICT (exec_arn) DO UPDATE SET version_arn=excluded.version_arn, alias_arn=excluded.alias_arn, trace_header=excluded.trace_header`,
		r.ExecutionARN, r.VersionARN, r.AliasARN, toText(r.TraceHeader))
	return err
}

// ExecutionRefs implements store.Versioned.
func (s versionPart) ExecutionRefs(ctx context.Context, arns []string) (map[string]*store.ExecutionRef, error) {
	out := map[string]*store.ExecutionRef{}
	if len(arns) == 0 {
		return out, nil
	}
	refs, err := query(ctx, s.Store, scanRef,
		`SELECT r.exec_arn, r.version_arn, r.alias_arn, r.trace_header FROM execution_refs r JOIN executions e ON e.arn = r.exec_arn WHERE r.exec_arn = ANY($1)`, arns)
	for _, r := range refs {
		out[r.ExecutionARN] = r
	}
	return out, err
}

// ListExecutionsOf implements store.Versioned.
func (s versionPart) ListExecutionsOf(ctx context.Context, ref, status string, p store.Page) ([]*store.Execution, string, error) {
	return byID(ctx, s.Store, kindExecutionsOfRef, codec.FilterHash("executions of", ref, status),
		`SELECT `+sqlrow.ExecColumns+`, id FROM executions WHERE arn IN (SELECT exec_arn FROM execution_refs WHERE version_arn=$1 AND version_arn <> ''
		UNION ALL SELECT exec_arn FROM execution_refs WHERE alias_arn=$1 AND alias_arn <> '')`, []any{ref}, status, p, scanExecKeyed)
}

// PutSettings implements store.Versioned.
func (s versionPart) PutSettings(ctx context.Context, arn, settings string) error {
	if settings == "" {
		_, err := s.exec(ctx, `DELETE FROM settings WHERE arn=$1`, arn)
		return err
	}
	_, err := s.exec(ctx, `INSERT INTO settings VALUES ($1, $2) ON CONFLICT (arn) DO UPDATE SET settings=excluded.settings`, arn, settings)
	return err
}

// GetSettings implements store.Versioned.
func (s versionPart) GetSettings(ctx context.Context, arn string) (string, error) {
	var out string
	err := s.pool.QueryRow(ctx, `SELECT settings FROM settings WHERE arn=$1`, arn).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}
