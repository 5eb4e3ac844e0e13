package store

import (
	"context"
	"time"
)

// Retainer is the part of a Store that deletes finished executions once
// they are old enough (stepd serve --retention; AWS keeps a closed
// execution 90 days). Every backend implements it; storetest.Run checks it.
type Retainer interface {
	// DeleteEnded deletes up to limit executions that ended (any status
	// but RUNNING) before the time given, with their steps and history,
	// oldest stop first, and returns how many it deleted. A call is one
	// short transaction, so that a caller deleting many executions in
	// batches leaves the store to other writers between batches.
	DeleteEnded(ctx context.Context, before time.Time, limit int) (int, error)
}
