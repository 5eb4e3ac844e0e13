package store

import (
	"context"
	"time"
)

// Schedule is an EventBridge Scheduler schedule as a store keeps it: its
// key, the scheduler's own document (JSON, opaque to the store) and the
// fields the store queries.
type Schedule struct {
	Group, Name string
	State       string // ENABLED or DISABLED (ListSchedules filters on it)
	Doc         []byte
	// Next is when the schedule is next due to fire; zero: never (disabled
	// or done).
	Next time.Time
	// Version counts the schedule's writes; PutSchedule and DeleteSchedule
	// compare it.
	Version int64
}

// Schedules is the part of a Store that keeps schedules (package
// scheduler). Every method is safe for concurrent use; a write that returns
// without error is durable.
type Schedules interface {
	// CreateSchedule stores a new schedule with Version 1 (and sets it on
	// s); ErrExists when the group holds one of that name.
	CreateSchedule(ctx context.Context, s *Schedule) error
	// GetSchedule returns a schedule; ErrNotFound when missing.
	GetSchedule(ctx context.Context, group, name string) (*Schedule, error)
	// PutSchedule replaces a schedule whose Version is still s.Version,
	// releases its claim and increments s.Version; ErrConflict when the
	// version differs, ErrNotFound when it is missing.
	PutSchedule(ctx context.Context, s *Schedule) error
	// DeleteSchedule removes a schedule, whatever its version when version
	// is 0; ErrConflict when it differs, ErrNotFound when it is missing.
	DeleteSchedule(ctx context.Context, group, name string, version int64) error
	// ListSchedules lists a group's schedules by name (all groups when
	// group is empty), those whose name starts with prefix and, when state
	// is not empty, in that state.
	ListSchedules(ctx context.Context, group, prefix, state string, p Page) ([]*Schedule, string, error)
	// ClaimSchedules claims up to limit schedules due at now (Next not
	// after now) that nobody claimed, or whose claim ended before now,
	// until until: among nodes sharing a store, one claims each. A claimed
	// schedule is released by PutSchedule or DeleteSchedule.
	ClaimSchedules(ctx context.Context, now, until time.Time, limit int) ([]*Schedule, error)
}
