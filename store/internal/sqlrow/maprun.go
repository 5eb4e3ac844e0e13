package sqlrow

import (
	"encoding/json"
	"fmt"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// counts is the stored form of a Map Run's counters (JSON).
type counts struct{ Items, Executions store.MapRunCounts }

// Counts is the stored form of a Map Run's item and execution counters.
func Counts(r *store.MapRun) (string, error) {
	b, err := json.Marshal(counts{r.Items, r.Executions})
	if err != nil {
		return "", fmt.Errorf("map run %s: counts: %w", r.ARN, err)
	}
	return string(b), nil
}

// MapRunColumns are the columns of a Map Run, in ScanMapRun's order.
const MapRunColumns = `arn, exec_arn, status, started, stopped, max_concurrency, tolerated_count, tolerated_percentage, counts, redrive_count, redrive_date`

// ScanMapRun scans a Map Run (MapRunColumns) and its row key.
func ScanMapRun(row Scanner) (Keyed[*store.MapRun], error) {
	var r store.MapRun
	var started, stopped, redrive, key int64
	var text string
	if err := row.Scan(&r.ARN, &r.ExecutionARN, &r.Status, &started, &stopped, &r.MaxConcurrency, &r.ToleratedFailureCount,
		&r.ToleratedFailurePercentage, &text, &r.RedriveCount, &redrive, &key); err != nil {
		return Keyed[*store.MapRun]{}, err
	}
	var c counts
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return Keyed[*store.MapRun]{}, fmt.Errorf("map run %s: counts: %w", r.ARN, err)
	}
	r.Items, r.Executions = c.Items, c.Executions
	r.Started, r.Stopped, r.RedriveDate = codec.FromNanos(started), codec.FromNanos(stopped), codec.FromNanos(redrive)
	return Keyed[*store.MapRun]{&r, key}, nil
}

// ChildColumns are the columns of a Map Run's child execution, in
// ScanChild's order.
const ChildColumns = `arn, map_run_arn, name, state_machine_arn, state_machine_name, type, input, status, output, error, cause, started, stopped`

// ScanChild scans a child execution's summary (ChildColumns) and its row
// key.
func ScanChild(row Scanner) (Keyed[*store.ChildExecution], error) {
	var c store.ChildExecution
	var started, stopped, key int64
	if err := row.Scan(&c.ARN, &c.MapRunARN, &c.Name, &c.StateMachineARN, &c.StateMachineName, &c.Type, &c.Input, &c.Status, &c.Output,
		&c.Error, &c.Cause, &started, &stopped, &key); err != nil {
		return Keyed[*store.ChildExecution]{}, err
	}
	c.Started, c.Stopped = codec.FromNanos(started), codec.FromNanos(stopped)
	return Keyed[*store.ChildExecution]{&c, key}, nil
}

// ChildEvents reads every event of a child execution from its rows of
// packed events (one column, in the order of their first event); rows
// that overlap (a write stored twice) give their events once.
func ChildEvents(rs Rows) ([]store.Event, error) {
	var all []store.Event
	err := eachPacked(rs, func(evs []store.Event) bool {
		for _, ev := range evs {
			if n := len(all); n == 0 || ev.ID > all[n-1].ID {
				all = append(all, ev)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return all, rs.Err()
}

// RedriveColumns are the columns of a redrive record, in ScanRedrive's
// order (the execution's ARN first).
const RedriveColumns = `arn, count, date`

// Redrive is an execution's redrive record with the execution's ARN.
type Redrive struct {
	ARN string
	R   store.Redrive
}

// ScanRedrive scans an execution's redrive record (RedriveColumns).
func ScanRedrive(row Scanner) (Redrive, error) {
	var r Redrive
	var date int64
	if err := row.Scan(&r.ARN, &r.R.Count, &date); err != nil {
		return Redrive{}, err
	}
	r.R.Date = codec.FromNanos(date)
	return r, nil
}
