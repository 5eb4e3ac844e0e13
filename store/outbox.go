package store

import (
	"context"
	"time"
)

// Notice is an execution status change waiting to be delivered as an
// EventBridge event (stepd serve --events-webhook, --events-command).
type Notice struct {
	ID           int64
	ExecutionARN string
	Status       string    // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE
	At           time.Time // when it was queued
	Attempts     int       // failed deliveries so far
}

// Outbox is the part of a Store that keeps status changes until they are
// delivered: the service queues one before it commits the change (so a
// crash between the two loses nothing), and a dispatcher delivers and
// removes it. Every backend implements it; storetest.Run checks it.
type Outbox interface {
	// AddNotice queues the status change of an execution. Queuing the same
	// execution and status again, while the first is queued, changes
	// nothing.
	AddNotice(ctx context.Context, executionARN, status string, at time.Time) error
	// TakeNotices returns up to limit notices due at now, oldest first,
	// and makes them due again only after hold: a dispatcher that dies
	// while it delivers them leaves them to be taken again, and two
	// dispatchers (two nodes of a shared store) do not take one notice at
	// once.
	TakeNotices(ctx context.Context, now time.Time, hold time.Duration, limit int) ([]*Notice, error)
	// DoneNotice removes a notice delivered (or given up); removing one
	// that is gone is not an error.
	DoneNotice(ctx context.Context, id int64) error
	// RetryNotice records a failed delivery: the notice's Attempts grows by
	// one and it is due again at due.
	RetryNotice(ctx context.Context, id int64, due time.Time) error
}
