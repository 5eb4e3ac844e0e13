package api

import (
	"context"
	"time"
)

// ReleaseWhenIdleTicks is h.ReleaseWhenIdle on the ticks the test sends on
// tick instead of a ticker's, idle since start.
func ReleaseWhenIdleTicks(ctx context.Context, h *Handler, idle time.Duration, tick <-chan time.Time, start time.Time) {
	h.releaseWhenIdle(ctx, idle, tick, start)
}
