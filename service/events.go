package service

import (
	"context"
	"fmt"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/store"
)

// QueueStatus queues a status change of a Standard execution in the
// store's outbox, to be delivered as an EventBridge event (see
// Config.StatusEvents and package notify), and returns once it is durable.
// The service calls it before it commits the change (start and end); a
// change made elsewhere (a redrive's PENDING_REDRIVE) calls it the same
// way. It does nothing without Config.StatusEvents.
func (s *Service) QueueStatus(ctx context.Context, executionARN, status string) error {
	if s.cfg.StatusEvents == nil {
		return nil
	}
	// The outbox runs on the real clock, whatever the executions' clock.
	if err := s.store.AddNotice(ctx, executionARN, status, time.Now()); err != nil {
		return fmt.Errorf("queuing the %s event of %s: %w", status, executionARN, err)
	}
	return nil
}

// notifying is the journal of a Standard execution whose status changes
// are delivered as events: a step that ends the execution is queued in the
// outbox before it is committed, so that a crash between the two leaves a
// notice behind (the dispatcher checks that the change was committed
// before it delivers it).
type notifying struct {
	engine.Journal
	s   *Service
	arn string
}

func (n notifying) AppendStep(ctx context.Context, st *store.Step) error {
	final := st.Status != "" && st.Status != "RUNNING"
	if final {
		if err := n.s.QueueStatus(ctx, n.arn, st.Status); err != nil {
			return err
		}
	}
	err := n.Journal.AppendStep(ctx, st)
	if final && err == nil {
		n.s.cfg.StatusEvents()
	}
	return err
}
