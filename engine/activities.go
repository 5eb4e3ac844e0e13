package engine

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// lookupTimeout bounds one question whether an activity exists; an answer
// not given in time is "it exists" (the offer then decides).
const lookupTimeout = 10 * time.Second

// lookups answers an execution's questions whether an activity exists
// (interp.Info.Activities). The answers are inputs of the step that asked:
// live, it asks Config.ActivityExists and numbers the step's questions,
// keeping the numbers of those answered "no" until the driver takes them
// into the step (journal.go's "noActivity"); replaying, it answers "no"
// exactly to the questions a step recorded so, and "yes" to every other,
// so that a step written before the questions were asked (its task
// scheduled, with ActivityScheduled) replays as it ran.
type lookups struct {
	ask func(ctx context.Context, activityARN string) (bool, error)
	log *slog.Logger
	n   int   // questions asked since the step began
	no  []int // live: the numbers of those answered no
	// replaying: the step's recorded numbers answered no.
	replaying bool
	script    []int
}

// ActivityExists answers the interpreter; an answer the hook cannot give
// (an error, a timeout) is yes.
func (l *lookups) ActivityExists(activityARN string) bool {
	i := l.n
	l.n++
	if l.replaying {
		return !slices.Contains(l.script, i)
	}
	if l.ask == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	ok, err := l.ask(ctx, activityARN)
	if err != nil {
		l.log.Warn("cannot tell whether an activity exists; offering its task", "activity", activityARN, "err", err)
		return true
	}
	if !ok {
		l.no = append(l.no, i)
	}
	return ok
}

// take returns the numbers answered no since the last take and begins a
// step; the slice is reused, so it is only valid until the next question.
func (l *lookups) take() []int {
	no := l.no
	l.no, l.n = l.no[:0], 0
	return no
}

// replay makes the next step's questions answered from its record.
func (l *lookups) replay(no []int) {
	l.replaying, l.script, l.n = true, no, 0
}

// live ends replay.
func (l *lookups) live() {
	l.replaying, l.script, l.n = false, nil, 0
}
