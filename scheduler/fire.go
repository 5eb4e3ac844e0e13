package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// claimFor is how long a claim on a due schedule lasts, in the clock's
// time: a node that dies while firing leaves the schedule to another one
// after that (its firing then runs again, and finds its execution).
const claimFor = 30 * time.Second

// batch is the most schedules claimed at once.
const batch = 32

// Run fires due schedules until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		n := s.FireDue(ctx)
		for n == batch && ctx.Err() == nil {
			n = s.FireDue(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.cfg.Clock.After(time.Second):
		case <-s.wake:
		}
	}
}

// FireDue fires the schedules due now and returns how many it claimed.
func (s *Scheduler) FireDue(ctx context.Context) int {
	now := s.cfg.Clock.Now()
	list, err := s.cfg.Store.ClaimSchedules(ctx, now, now.Add(claimFor), batch)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Warn("claiming due schedules", "err", err)
		}
		return 0
	}
	var wg sync.WaitGroup
	for _, st := range list {
		wg.Go(func() {
			if err := s.fire(ctx, st); err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("firing a schedule", "schedule", st.Group+"/"+st.Name, "err", err)
			}
		})
	}
	wg.Wait()
	return len(list)
}

// ExecutionID is the id of a schedule's firing at due: the same for every
// attempt, different for every due time and every schedule created.
func ExecutionID(scheduleARN string, created, due time.Time) string {
	sum := sha256.Sum256([]byte(scheduleARN + "\x00" + created.UTC().Format(time.RFC3339Nano) + "\x00" + due.UTC().Format(time.RFC3339Nano)))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// executionName is the name of the execution a firing starts: the
// schedule's name (clipped) and the firing's id, at most 80 characters.
func executionName(name, id string) string {
	if len(name) > 43 {
		name = name[:43]
	}
	return name + "_" + id
}

// fire invokes a claimed schedule's target for its due time and records
// the next one.
func (s *Scheduler) fire(ctx context.Context, st *store.Schedule) error {
	var r record
	if err := json.Unmarshal(st.Doc, &r); err != nil {
		return fmt.Errorf("schedule %s/%s: %w", st.Group, st.Name, err)
	}
	e, err := s.expr(&r)
	if err != nil {
		return err
	}
	due := r.Due
	id := ExecutionID(r.Arn, r.CreationDate.Time, due)
	ierr := s.invoke(ctx, &r, due, id)
	if ctx.Err() != nil {
		return ctx.Err() // the claim ends and the firing runs again
	}
	now := s.cfg.Clock.Now()
	if ierr != nil {
		maxAttempts, maxAge := 185, 24*time.Hour
		if p := r.Target.RetryPolicy; p != nil {
			if p.MaximumRetryAttempts != nil {
				maxAttempts = *p.MaximumRetryAttempts
			}
			if p.MaximumEventAgeInSeconds != nil {
				maxAge = time.Duration(*p.MaximumEventAgeInSeconds) * time.Second
			}
		}
		r.Attempts++
		backoff := min(time.Second<<min(r.Attempts-1, 6), time.Minute)
		if r.Attempts <= maxAttempts && now.Add(backoff).Sub(due) <= maxAge {
			s.cfg.Log.Warn("schedule target failed; retrying", "schedule", r.Arn, "attempt", r.Attempts, "err", ierr)
			doc, err := json.Marshal(&r)
			if err != nil {
				return err
			}
			st.Doc, st.Next = doc, now.Add(backoff)
			return s.put(ctx, st)
		}
		s.cfg.Log.Error("schedule target failed; giving the invocation up", "schedule", r.Arn, "due", due, "attempts", r.Attempts, "err", ierr)
	}
	after := now
	if due.After(after) {
		after = due
	}
	ns, err := s.save(&r, e, after, true)
	if err != nil {
		return err
	}
	ns.Version = st.Version
	if ns.Next.IsZero() && r.ActionAfterCompletion == "DELETE" {
		if err := s.cfg.Store.DeleteSchedule(ctx, st.Group, st.Name, st.Version); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	}
	return s.put(ctx, ns)
}

// put records a firing; a schedule updated or deleted meanwhile keeps
// what its update made of it.
func (s *Scheduler) put(ctx context.Context, st *store.Schedule) error {
	if err := s.cfg.Store.PutSchedule(ctx, st); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// input is the target's input with EventBridge Scheduler's context
// attributes replaced.
func input(r *record, due time.Time, id string) string {
	if r.Target.Input == nil {
		return ""
	}
	return strings.NewReplacer(
		"<aws.scheduler.schedule-arn>", r.Arn,
		"<aws.scheduler.scheduled-time>", due.UTC().Format(time.RFC3339),
		"<aws.scheduler.execution-id>", id,
		"<aws.scheduler.attempt-number>", strconv.Itoa(r.Attempts+1),
	).Replace(*r.Target.Input)
}

// invoke starts the target once for due.
func (s *Scheduler) invoke(ctx context.Context, r *record, due time.Time, id string) error {
	in := input(r, due, id)
	switch targetKind(r.Target.Arn) {
	case "states":
		if s.cfg.Service == nil {
			return fmt.Errorf("no service to start %s", r.Target.Arn)
		}
		// Again: a firing run again (after a crash, or by another node)
		// finds the execution it started, even finished.
		_, err := s.cfg.Service.StartExecution(ctx, service.StartInput{StateMachineARN: r.Target.Arn, Name: executionName(r.Name, id), Input: in, Again: true})
		return err
	case "lambda":
		if s.cfg.Invoker == nil {
			return fmt.Errorf("no resource registry to invoke %s", r.Target.Arn)
		}
		var payload any = map[string]any{}
		if in != "" {
			v, err := value.ParseString(in)
			if err != nil {
				v = in // a Lambda function takes any text; a string stands for it
			}
			payload = v
		}
		res := s.cfg.Invoker.Invoke(ctx, &task.Request{Resource: r.Target.Arn, StateName: "EventBridge Scheduler", Input: payload})
		if res.Failed() {
			return fmt.Errorf("%s: %s", res.Error, res.Cause)
		}
		return nil
	}
	return fmt.Errorf("target %s: not a state machine nor a Lambda function", r.Target.Arn)
}
