package sqlrow

import (
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// StepCursor hands out the steps of a query ordered by execution row key,
// then Seq (columns: the execution's row key, seq, at, input, first_event,
// last_event, wake), execution by execution, for a scan of
// running executions in row-key order (store.RunningScanner): a step holds
// its Seq, At, Input, Wake and its events' IDs (the row's range).
type StepCursor struct {
	rows Rows
	next *store.Step // read ahead: the first step of the next execution
	exec int64       // next's execution
	err  error
}

// NewStepCursor reads the first step of rows.
func NewStepCursor(rows Rows) *StepCursor {
	c := &StepCursor{rows: rows}
	c.read()
	return c
}

func (c *StepCursor) read() {
	c.next = nil
	if c.err != nil || !c.rows.Next() {
		return
	}
	st := &store.Step{}
	var at, first, last, wake int64
	if c.err = c.rows.Scan(&c.exec, &st.Seq, &at, &st.Input, &first, &last, &wake); c.err != nil {
		return
	}
	st.At, st.Wake = codec.FromNanos(at), codec.FromNanos(wake)
	if last >= first {
		st.Events = make([]store.Event, last-first+1)
		for i := range st.Events {
			st.Events[i].ID = first + int64(i)
		}
	}
	c.next = st
}

// StepsOf returns the steps of the execution of row key key and ARN arn,
// skipping those of executions before it; the executions must be asked
// for in ascending key order.
func (c *StepCursor) StepsOf(key int64, arn string) ([]*store.Step, error) {
	var list []*store.Step
	for c.next != nil && c.exec <= key {
		if c.exec == key {
			c.next.ExecutionARN = arn
			list = append(list, c.next)
		}
		c.read()
	}
	return list, c.err
}

// Err is the error of the rows once every step is read.
func (c *StepCursor) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.rows.Err()
}

// RunningColumns are the columns of a running execution that
// store.RunningScanner hands over (a running execution has no output,
// error, cause or stop time), before its row key: ScanRunning reads them.
const RunningColumns = `arn, name, state_machine_arn, state_machine_name, ` + Definition + `, type, role_arn, test_case, input, started`

// ScanRunning scans a running execution (RunningColumns, then its row
// key).
func ScanRunning(row Scanner) (Keyed[*store.Execution], error) {
	e := &store.Execution{Status: "RUNNING"}
	var started, key int64
	if err := row.Scan(&e.ARN, &e.Name, &e.StateMachineARN, &e.StateMachineName, &e.Definition, &e.Type, &e.RoleARN, &e.TestCase, &e.Input, &started, &key); err != nil {
		return Keyed[*store.Execution]{}, err
	}
	e.Started = codec.FromNanos(started)
	return Keyed[*store.Execution]{e, key}, nil
}
