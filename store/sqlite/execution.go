package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// Eager implements store.EagerCreator: a creation waits for the writer's
// group commit, by when the next step is often ready.
func (s *Store) Eager() bool { return true }

// CreateExecution implements store.Store. The new row's key comes from
// the insert, and a new execution has no steps, so its state for the step
// cache needs no query.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	return s.CreateExecutionWith(ctx, e, first, nil)
}

// CreateExecutionWith implements store.EagerCreator: the step next holds
// when the writer runs the creation goes into the same transaction.
func (s *Store) CreateExecutionWith(ctx context.Context, e *store.Execution, first *store.Step, next *store.NextStep) error {
	if first == nil && next != nil {
		return fmt.Errorf("execution %s: a next step offered without a first", e.ARN)
	}
	hash := sqlrow.DefinitionHash(e.Definition) // out of the writer: it hashes the whole definition
	return s.write(ctx, func(tx *sql.Tx) error {
		// When the step offered after the first ends the execution (one
		// that ran to its end while its creation waited), the row is
		// inserted with the summary that step leaves: no update of it,
		// nor of the indexes of running executions and statuses, follows
		// in the same transaction.
		var st *store.Step
		var takeErr error // reported once the row is written, as a duplicate is refused first
		if next != nil {
			st, takeErr = next.TakeFor(e.ARN, first.Seq+1)
		}
		status, output, errName, cause, stopped := e.Status, e.Output, e.Error, e.Cause, e.Stopped
		plain := func(status, output, errName, cause string, stopped time.Time) bool {
			return (status == "RUNNING" || status == "") && output == "" && errName == "" && cause == "" && stopped.IsZero()
		}
		ends := st != nil && st.Status != "" && st.Status != "RUNNING" && e.Status == "RUNNING" &&
			plain(e.Status, e.Output, e.Error, e.Cause, e.Stopped) && plain(first.Status, first.Output, first.Error, first.Cause, first.Stopped)
		if ends {
			status, output, errName, cause, stopped = st.Status, st.Output, st.Error, st.Cause, st.Stopped
		}
		var def, defHash any = e.Definition, nil // a definition the definitions table keeps: "" and its hash
		if hash != nil {
			def, defHash = "", hash
			if _, ok := s.defs[string(hash)]; !ok {
				if _, err := s.stmt(tx, s.insDef).Exec(hash, e.Definition); err != nil {
					return err
				}
				s.defs[string(hash)] = struct{}{}
				s.newDefs = append(s.newDefs, string(hash))
			}
		}
		res, err := s.stmt(tx, s.insExec).Exec(e.ARN, e.Name, e.StateMachineARN, e.StateMachineName, def, defHash, e.Type, e.RoleARN, e.TestCase, e.Input,
			status, output, errName, cause, codec.Nanos(e.Started), codec.Nanos(stopped))
		if isDuplicate(err) {
			return refuse(fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists))
		}
		if err != nil {
			return err
		}
		// From here on a failure rolls the batch back: the row is written.
		key, err := res.LastInsertId()
		if err != nil {
			return unrefused(err)
		}
		s.changes = append(s.changes, change{kind: created, s: summary{key: key, arn: e.ARN, name: e.Name, smARN: e.StateMachineARN, smName: e.StateMachineName,
			typ: e.Type, status: e.Status, started: codec.Nanos(e.Started), stopped: codec.Nanos(e.Stopped)}, e: e})
		if first == nil {
			return nil
		}
		c := &execState{key: key, smARN: e.StateMachineARN, status: e.Status, dirty: e.Output != "" || e.Error != "" || e.Cause != "" || !e.Stopped.IsZero()}
		s.remember(e.ARN, c)
		if err := s.insertStep(tx, c, first); err != nil {
			return unrefused(err)
		}
		if st == nil || takeErr != nil {
			return takeErr
		}
		if ends {
			c.written = st
		}
		return unrefused(s.insertStep(tx, c, st))
	})
}

// listColumns are the summary columns that ListExecutions reads (the
// store contract leaves definitions, inputs and outputs out of a list),
// followed by the row key.
const listColumns = `arn, name, state_machine_arn, state_machine_name, type, status, started, stopped, seq`

// scanListed scans an execution's summary (listColumns).
func scanListed(row sqlrow.Scanner) (sqlrow.Keyed[*store.Execution], error) {
	var e store.Execution
	var started, stopped, key int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Type, &e.Status, &started, &stopped, &key); err != nil {
		return sqlrow.Keyed[*store.Execution]{}, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return sqlrow.Keyed[*store.Execution]{V: &e, Key: key}, nil
}

// GetExecution implements store.Store.
// Executions created lately come from memory (recent.go).
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if e, ok := s.recent.execution(arn); ok {
		return e, nil
	}
	e, err := sqlrow.ScanExec(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.ExecColumns+` FROM executions WHERE arn=?`, arn))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ListExecutions implements store.Store: from the state machine's window
// of recent executions when it holds the page (recent.go), else from the
// database.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	filter := codec.FilterHash(smARN, status)
	limit := codec.PageLimit(p)
	before := int64(math.MaxInt64)
	if p.Token != "" {
		b, _, err := codec.ParseToken(p.Token, kindExecutions, filter, 0)
		if err != nil {
			return nil, "", err
		}
		before = b
	}
	if list, keys, ok := s.recent.list(ctx, smARN, status, before, limit+1, s.fillRecent); ok {
		next := ""
		if len(list) > limit {
			list = list[:limit]
			next = codec.MakeToken(kindExecutions, filter, keys[limit-1])
		}
		return list, next, nil
	}
	return bySeq(ctx, s.db, kindExecutions, filter, `SELECT `+listColumns+` FROM executions WHERE state_machine_arn=?`,
		[]any{smARN}, status, p, scanListed)
}

// fillRecent reads the newest executions of a state machine for its
// window; complete says that there are no others.
func (s *Store) fillRecent(ctx context.Context, smARN string) ([]summary, bool, error) {
	rows, err := query(ctx, s.db, scanListed, `SELECT `+listColumns+` FROM executions WHERE state_machine_arn=? ORDER BY seq DESC LIMIT ?`, smARN, recentWindow+1)
	if err != nil {
		return nil, false, err
	}
	complete := len(rows) <= recentWindow
	rows = rows[:min(len(rows), recentWindow)]
	items := make([]summary, len(rows))
	for i, r := range rows {
		e := r.V
		items[len(rows)-1-i] = summary{key: r.Key, arn: e.ARN, name: e.Name, smARN: e.StateMachineARN, smName: e.StateMachineName, typ: e.Type,
			status: e.Status, started: codec.Nanos(e.Started), stopped: codec.Nanos(e.Stopped)}
	}
	return items, complete, nil
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		c, err := s.execState(tx, st.ExecutionARN)
		if err != nil {
			return err
		}
		if st.Seq != c.next {
			return refuse(fmt.Errorf("execution %s: step %d, want %d: %w", st.ExecutionARN, st.Seq, c.next, store.ErrConflict))
		}
		return s.insertStep(tx, c, st)
	})
}

// execKey returns the row key of an execution.
func (s *Store) execKey(ctx context.Context, arn string) (int64, error) {
	var exec int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM executions WHERE arn=?`, arn).Scan(&exec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	return exec, err
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	exec, err := s.execKey(ctx, arn)
	if err != nil {
		return nil, err
	}
	return query(ctx, s.db, func(row sqlrow.Scanner) (*store.Step, error) { return sqlrow.ScanStep(row, arn) },
		`SELECT `+sqlrow.StepColumns+` FROM step_log WHERE exec=? ORDER BY seq`, exec)
}

// ScanRunning implements store.RunningScanner: in one read transaction,
// the running executions in row-key order and, beside them, their steps in
// (execution, Seq) order, which the step index yields without sorting;
// each execution is handed over with its steps as soon as they are read.
// Of an execution whose last step has a wake time only that step is read,
// and of a step's events only their ids (the row's range).
func (s *Store) ScanRunning(ctx context.Context, fn func(*store.Execution, []*store.Step) error) error {
	tx, done, err := s.db.BeginTx(ctx)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback()
	execs, err := tx.QueryContext(ctx, `SELECT `+sqlrow.RunningColumns+`, seq FROM executions WHERE status='RUNNING' ORDER BY seq`)
	if err != nil {
		return err
	}
	defer execs.Close()
	steps, err := tx.QueryContext(ctx, `SELECT s.exec, s.seq, s.at, s.input, s.first_event, s.last_event, s.wake
		FROM executions e
		JOIN step_log l ON l.exec = e.seq AND l.seq = (SELECT MAX(seq) FROM step_log WHERE exec = e.seq)
		JOIN step_log s ON s.exec = e.seq AND (l.wake = 0 OR s.seq = l.seq)
		WHERE e.status='RUNNING' ORDER BY s.exec, s.seq`)
	if err != nil {
		return err
	}
	defer steps.Close()
	cur := sqlrow.NewStepCursor(steps)
	for execs.Next() {
		x, err := sqlrow.ScanRunning(execs)
		if err != nil {
			return err
		}
		list, err := cur.StepsOf(x.Key, x.V.ARN)
		if err != nil {
			return err
		}
		if err := fn(x.V, list); err != nil {
			return err
		}
	}
	if err := execs.Err(); err != nil {
		return err
	}
	return cur.Err()
}

// Events implements store.Store. The rows' event ranges grow with Seq, so
// the first row of a page is found by binary search over Seq and the page
// is read from there in key order.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	// The first page (after 0) starts at the first step, or ends at the
	// last: one query, which finds the execution by its ARN itself, reads
	// it (each query is a read transaction of its own, and SQLite drops a
	// connection's page cache at the start of one whenever the writer has
	// committed since). A later page first finds its first step.
	exec, execBy, from, to, order := any(arn), `(SELECT seq FROM executions WHERE arn=?)`, int64(0), int64(math.MaxInt64), "ASC"
	if reverse {
		order = "DESC"
	}
	if after > 0 {
		k, err := s.execKey(ctx, arn)
		if err != nil {
			return nil, err
		}
		exec, execBy = k, `?`
		if reverse {
			// Up to the last step holding an event before after.
			k, err := s.searchSteps(ctx, k, func(first, _ int64) bool { return first >= after })
			if err != nil {
				return nil, err
			}
			to = k - 1
		} else if from, err = s.searchSteps(ctx, k, func(_, last int64) bool { return last > after }); err != nil {
			// From the first step holding an event after after.
			return nil, err
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT events FROM step_log WHERE exec=`+execBy+` AND seq BETWEEN ? AND ? ORDER BY seq `+order, exec, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := sqlrow.Events(rows, after, limit, reverse)
	if err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 && after == 0 {
		// No step at all: is there such an execution?
		if _, err := s.execKey(ctx, arn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// searchSteps returns the Seq of the first step of execution exec for
// which ok(first_event, last_event) holds, or the Seq after its last step
// when there is none; ok must be false for a prefix of the steps and true
// for the rest.
func (s *Store) searchSteps(ctx context.Context, exec int64, ok func(first, last int64) bool) (int64, error) {
	var top sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(seq) FROM step_log WHERE exec=?`, exec).Scan(&top); err != nil {
		return 0, err
	}
	if !top.Valid {
		return 0, nil
	}
	return sqlrow.SearchSteps(top.Int64, func(seq int64) (first, last int64, err error) {
		if err := s.db.QueryRowContext(ctx, `SELECT first_event, last_event FROM step_log WHERE exec=? AND seq=?`, exec, seq).Scan(&first, &last); err != nil {
			return 0, 0, fmt.Errorf("step %d of execution %d: %w", seq, exec, err)
		}
		return first, last, nil
	}, ok)
}

// RunningExecutions implements store.Store.
func (s *Store) RunningExecutions(ctx context.Context) ([]*store.Execution, error) {
	return query(ctx, s.db, func(row sqlrow.Scanner) (*store.Execution, error) { return sqlrow.ScanExec(row) },
		`SELECT `+sqlrow.ExecColumns+` FROM executions WHERE status='RUNNING' ORDER BY seq`)
}
