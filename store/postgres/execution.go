package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// insExecution inserts an execution and its first steps (from the arrays
// $17 to $28, none when they are empty), and its definition ($5) into the
// definitions table under its hash ($29) unless that holds it already; it
// returns the execution's row id, or no row when the ARN exists.
const insExecution = `
WITH d AS (
	INSERT INTO definitions (hash, body) SELECT $29::bytea, $5 WHERE $29::bytea IS NOT NULL ON CONFLICT (hash) DO NOTHING
), e AS (
	INSERT INTO executions (arn, name, state_machine_arn, state_machine_name, definition, def_hash, type, role_arn, test_case, input, status, output, error, cause, started, stopped, owner)
	VALUES ($1,$2,$3,$4,CASE WHEN $29::bytea IS NULL THEN $5 ELSE '' END,$29,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) ON CONFLICT (arn) DO NOTHING RETURNING id
), s AS (
	INSERT INTO step_log (exec, seq, at, input, first_event, last_event, events, status, output, error, cause, stopped, wake)
	SELECT e.id, st.* FROM e, unnest($17::int8[], $18::int8[], $19::bytea[], $20::int8[], $21::int8[], $22::bytea[],
		$23::text[], $24::text[], $25::text[], $26::text[], $27::int8[], $28::int8[]) AS st
)
SELECT id FROM e`

// CreateExecution implements store.Store.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	return s.CreateExecutionWith(ctx, e, first, nil)
}

// CreateExecutionWith implements store.EagerCreator: the writer takes the
// step next holds when it puts the creation into its batch, and inserts it
// with the first in the creation's statement.
func (s *Store) CreateExecutionWith(ctx context.Context, e *store.Execution, first *store.Step, next *store.NextStep) error {
	if first == nil && next != nil {
		return fmt.Errorf("execution %s: a next step offered without a first", e.ARN)
	}
	return s.write(ctx, &request{queue: func(b *pgx.Batch, r *request) {
		steps := []*store.Step{first}
		if first == nil {
			steps = nil
		} else if next != nil {
			st, refused := next.TakeFor(e.ARN, first.Seq+1)
			if refused != nil {
				// Nothing is written; an execution that exists refuses
				// the creation first.
				b.Queue(`SELECT EXISTS (SELECT 1 FROM executions WHERE arn=$1)`, e.ARN).QueryRow(func(row pgx.Row) error {
					var exists bool
					if err := row.Scan(&exists); err != nil {
						return err
					}
					if r.refused = refused; exists {
						r.refused = fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
					}
					return nil
				})
				return
			}
			if st != nil {
				steps = append(steps, st)
			}
		}
		row, args := creation(e, steps, r.member.node)
		b.Queue(insExecution, args...).Query(func(rows pgx.Rows) error {
			if !rows.Next() {
				r.refused = fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
				return rows.Err()
			}
			if err := rows.Scan(&row.id); err != nil {
				return err
			}
			r.created, r.step0ARN = &row, e.ARN
			return rows.Err()
		})
	}})
}

// creation returns insExecution's arguments for e and its first steps, and
// what the cache will know of the execution once it is inserted (but its
// row id). The execution is owned by node owner; the row holds the summary
// after the steps, as AppendStep would leave it.
func creation(e *store.Execution, steps []*store.Step, owner string) (execState, []any) {
	row := execState{status: e.Status, dirty: e.Output != "" || e.Error != "" || e.Cause != "" || !e.Stopped.IsZero()}
	output, errName, cause, stopped := e.Output, e.Error, e.Cause, e.Stopped
	a := &stepArrays{}
	for _, st := range steps {
		after, changed := a.row(st, &row)
		if changed {
			output, errName, cause, stopped = st.Output, st.Error, st.Cause, st.Stopped
		}
		row = after
	}
	return row, []any{e.ARN, e.Name, e.StateMachineARN, e.StateMachineName, e.Definition, e.Type, e.RoleARN, e.TestCase, e.Input,
		row.status, output, toText(errName), toText(cause), codec.Nanos(e.Started), codec.Nanos(stopped), owner,
		a.seq, a.at, a.input, a.first, a.last, a.events, a.status, a.output, a.errs, a.cause, a.stop, a.wake, sqlrow.DefinitionHash(e.Definition)}
}

// Eager implements store.EagerCreator: false, so that executions start as
// they always have on PostgreSQL (the creation alone, then the next step
// appended by the service).
func (s *Store) Eager() bool { return false }

// GetExecution implements store.Store.
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	e, err := scanExec(s.pool.QueryRow(ctx, `SELECT `+sqlrow.ExecColumns+` FROM executions WHERE arn=$1`, arn))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return e, nil
}

// ListExecutions implements store.Store.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	return byID(ctx, s, codec.KindExecutions, codec.FilterHash(smARN, status),
		`SELECT `+sqlrow.ExecColumns+`, id FROM executions WHERE state_machine_arn=$1`, []any{smARN}, status, p, scanExecKeyed)
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	return s.write(ctx, &request{step: st})
}

// execKey returns the row id of an execution.
func (s *Store) execKey(ctx context.Context, arn string) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM executions WHERE arn=$1`, arn).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	return id, nil
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	return query(ctx, s, func(row sqlrow.Scanner) (*store.Step, error) { return scanStep(row, arn) },
		`SELECT `+sqlrow.StepColumns+` FROM step_log WHERE exec=$1 ORDER BY seq`, exec)
}

// ScanRunning implements store.RunningScanner: in one read-only
// transaction of repeatable read (one snapshot), the running executions in
// row-id order, then, beside them, their steps in (execution, Seq) order;
// of an execution whose last step has a wake time only that step is read,
// and of a step's events only their ids (the row's range).
func (s *Store) ScanRunning(ctx context.Context, fn func(*store.Execution, []*store.Step) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer tx.Rollback(ctx)
	// A connection reads one query at a time: the executions first.
	execs, err := tx.Query(ctx, `SELECT `+sqlrow.RunningColumns+`, id FROM executions WHERE status='RUNNING' ORDER BY id`)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	list, err := sqlrow.Collect(execs, sqlrow.ScanRunning)
	execs.Close()
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	steps, err := tx.Query(ctx, `SELECT s.exec, s.seq, s.at, s.input, s.first_event, s.last_event, s.wake
		FROM executions e
		JOIN LATERAL (SELECT seq, wake FROM step_log WHERE exec = e.id ORDER BY seq DESC LIMIT 1) l ON true
		JOIN step_log s ON s.exec = e.id AND (l.wake = 0 OR s.seq = l.seq)
		WHERE e.status='RUNNING' ORDER BY s.exec, s.seq`)
	if err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	defer steps.Close()
	cur := sqlrow.NewStepCursor(steps)
	for _, x := range list {
		st, err := cur.StepsOf(x.Key, x.V.ARN)
		if err != nil {
			return fmt.Errorf("postgres store: %w", err)
		}
		if err := fn(x.V, st); err != nil {
			return err
		}
	}
	steps.Close() // pgx.Rows tells its error once closed
	if err := cur.Err(); err != nil {
		return fmt.Errorf("postgres store: %w", err)
	}
	return nil
}

// Events implements store.Store. The rows' event ranges grow with Seq, so
// the first row of a page is found by binary search over Seq and the page
// is read from there in key order.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	from, to, order := int64(0), int64(math.MaxInt64), "ASC"
	switch {
	case reverse && after > 0:
		k, err := s.searchSteps(ctx, exec, func(first, _ int64) bool { return first >= after })
		if err != nil {
			return nil, err
		}
		to, order = k-1, "DESC"
	case reverse:
		order = "DESC"
	case after > 0: // the first page starts at the first step: no search
		if from, err = s.searchSteps(ctx, exec, func(_, last int64) bool { return last > after }); err != nil {
			return nil, err
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT events FROM step_log WHERE exec=$1 AND seq BETWEEN $2 AND $3 ORDER BY seq `+order, exec, from, to)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Events(rows, after, limit, reverse)
	if err != nil {
		return nil, fmt.Errorf("postgres store: execution %s: %w", arn, err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}

// searchSteps returns the Seq of the first step of execution exec for
// which ok(first_event, last_event) holds, or the Seq after its last step
// when there is none; ok must be false for a prefix of the steps and true
// for the rest.
func (s *Store) searchSteps(ctx context.Context, exec int64, ok func(first, last int64) bool) (int64, error) {
	var top *int64
	if err := s.pool.QueryRow(ctx, `SELECT MAX(seq) FROM step_log WHERE exec=$1`, exec).Scan(&top); err != nil {
		return 0, fmt.Errorf("postgres store: %w", err)
	}
	if top == nil {
		return 0, nil
	}
	return sqlrow.SearchSteps(*top, func(seq int64) (first, last int64, err error) {
		if err := s.pool.QueryRow(ctx, `SELECT first_event, last_event FROM step_log WHERE exec=$1 AND seq=$2`, exec, seq).Scan(&first, &last); err != nil {
			return 0, 0, fmt.Errorf("postgres store: step %d of execution %d: %w", seq, exec, err)
		}
		return first, last, nil
	}, ok)
}

// RunningExecutions implements store.Store.
func (s *Store) RunningExecutions(ctx context.Context) ([]*store.Execution, error) {
	return query(ctx, s, scanExec,
		`SELECT `+sqlrow.ExecColumns+` FROM executions WHERE status='RUNNING' ORDER BY id`)
}
