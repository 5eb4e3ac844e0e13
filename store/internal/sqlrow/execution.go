package sqlrow

import (
	"crypto/sha256"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// ExecColumns are the columns of an execution, in ScanExec's order, for a
// query of the executions table (aliased or not).
const ExecColumns = `arn, name, state_machine_arn, state_machine_name, ` + Definition + `, type, role_arn, test_case, input, status, output, error, cause, started, stopped`

// Definition is the expression of an execution's definition: a row kept
// since the definitions table holds it by def_hash (DefinitionHash), a
// row of an older stepd in its own definition column. One copy of a
// definition then serves every execution of it: a real definition of
// several KiB was written again with each execution.
const Definition = `CASE WHEN def_hash IS NULL THEN definition ELSE (SELECT body FROM definitions WHERE hash = def_hash) END`

// InsertColumns are the columns an execution is inserted with, in
// InsertValues's order.
const InsertColumns = `arn, name, state_machine_arn, state_machine_name, definition, def_hash, type, role_arn, test_case, input, status, output, error, cause, started, stopped`

// DefinitionHash is the key of definition in the definitions table: its
// SHA-256. An empty definition has none (nil: the row keeps it).
func DefinitionHash(definition string) []byte {
	if definition == "" {
		return nil
	}
	h := sha256.Sum256([]byte(definition))
	return h[:]
}

// ScanExec scans an execution (ExecColumns), then the columns that follow
// into more (a row key, say).
func ScanExec(row Scanner, more ...any) (*store.Execution, error) {
	var e store.Execution
	var started, stopped int64
	dest := append([]any{&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input,
		&e.Status, &e.Output, &e.Error, &e.Cause, &started, &stopped}, more...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	e.Started, e.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return &e, nil
}

// ScanExecKeyed scans an execution (ExecColumns) and its row key.
func ScanExecKeyed(row Scanner) (Keyed[*store.Execution], error) {
	var key int64
	e, err := ScanExec(row, &key)
	return Keyed[*store.Execution]{e, key}, err
}

// StepColumns are the columns of a step, in ScanStep's order.
const StepColumns = `seq, at, input, events, status, output, error, cause, stopped, wake`

// ScanStep scans a step of execution arn (StepColumns), its events
// decoded.
func ScanStep(row Scanner, arn string) (*store.Step, error) {
	st := &store.Step{ExecutionARN: arn}
	var at, stopped, wake int64
	var evs []byte
	if err := row.Scan(&st.Seq, &at, &st.Input, &evs, &st.Status, &st.Output, &st.Error, &st.Cause, &stopped, &wake); err != nil {
		return nil, err
	}
	st.At, st.Stopped, st.Wake = codec.FromNanos(at), codec.FromNanos(stopped), codec.FromNanos(wake)
	var err error
	st.Events, err = codec.DecodeEvents(evs)
	return st, err
}

// Events reads a page of history from rows of packed events (one column;
// the rows of the page's steps, in ascending Seq order, or descending when
// reverse): up to limit events after the event with id after (or, reverse,
// before it; 0 means from the end), as store.Store's Events orders them.
// It may stop before the last row: the caller closes rs and then checks
// its Err (pgx.Rows tells its error only once closed).
func Events(rs Rows, after int64, limit int, reverse bool) ([]store.Event, error) {
	var out []store.Event
	err := eachPacked(rs, func(evs []store.Event) bool {
		if reverse {
			for i := len(evs) - 1; i >= 0 && len(out) < limit; i-- {
				if after == 0 || evs[i].ID < after {
					out = append(out, evs[i])
				}
			}
		} else {
			for _, ev := range evs {
				if ev.ID > after && len(out) < limit {
					out = append(out, ev)
				}
			}
		}
		return len(out) < limit
	})
	return out, err
}

// eachPacked hands fn the events of each row of rs (one column of packed
// events), decoded, until fn returns false or the rows end; it does not
// check rs.Err.
func eachPacked(rs Rows, fn func(evs []store.Event) (more bool)) error {
	for rs.Next() {
		var b []byte
		if err := rs.Scan(&b); err != nil {
			return err
		}
		evs, err := codec.DecodeEvents(b)
		if err != nil {
			return err
		}
		if !fn(evs) {
			return nil
		}
	}
	return nil
}

// SearchSteps returns the Seq of the first of an execution's steps 0 to
// top for which ok(first event id, last event id) holds, or top+1 when
// there is none; ok must be false for a prefix of the steps and true for
// the rest. bounds reads the event ids of a step.
func SearchSteps(top int64, bounds func(seq int64) (first, last int64, err error), ok func(first, last int64) bool) (int64, error) {
	lo, hi := int64(0), top+1 // the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		first, last, err := bounds(mid)
		if err != nil {
			return 0, err
		}
		if ok(first, last) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}
