package sqlrow

import (
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// ScheduleColumns are the columns of a schedule, in ScanSchedule's order.
const ScheduleColumns = `grp, name, state, doc, next, version`

// ScanSchedule scans a schedule (ScheduleColumns).
func ScanSchedule(row Scanner) (*store.Schedule, error) {
	var sc store.Schedule
	var next int64
	if err := row.Scan(&sc.Group, &sc.Name, &sc.State, &sc.Doc, &next, &sc.Version); err != nil {
		return nil, err
	}
	sc.Next = codec.FromNanos(next)
	return &sc, nil
}
