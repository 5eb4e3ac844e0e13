package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// hooks returns the engine's Committing and Committed hooks of an
// execution committing to st: what each step committed tells the outbox
// (a Standard execution's final status, queued before the step and
// announced after it), the Observer, the execution's log (logs; nil when
// it logs nothing) and the store of Map Runs. Hooks with nothing to do are
// nil, so that an execution that needs none costs none.
func (r *Runner) hooks(arn string, st store.Store, logs *logSetup) (
	committing func(context.Context, *store.Step) error,
	committed func(context.Context, *store.Step, *interp.Execution, time.Duration, error),
) {
	notices := r.cfg.StatusEvents != nil && st == r.cfg.Store
	if notices {
		committing = func(ctx context.Context, s *store.Step) error {
			if final(s) {
				return r.queueStatus(ctx, arn, s.Status)
			}
			return nil
		}
	}
	obs := r.cfg.Observer
	var buf []byte // the driver commits one step at a time
	committed = func(ctx context.Context, s *store.Step, x *interp.Execution, took time.Duration, err error) {
		if obs != nil {
			obs.Committed(s, took, err)
		}
		if err != nil {
			return
		}
		if notices && final(s) {
			r.cfg.StatusEvents()
		}
		if logs != nil {
			buf = r.writeLog(buf[:0], arn, logs, s)
		}
		r.putMapRuns(ctx, st, x)
	}
	return committing, committed
}

// final reports whether a step ends its execution.
func final(s *store.Step) bool { return s.Status != "" && s.Status != "RUNNING" }

// queueStatus queues a status change of a Standard execution in the
// store's outbox, to be delivered as an EventBridge event (see
// Config.StatusEvents and package notify), and returns once it is
// durable: before the change is committed (its start and its end). It
// does nothing without Config.StatusEvents.
func (r *Runner) queueStatus(ctx context.Context, executionARN, status string) error {
	if r.cfg.StatusEvents == nil {
		return nil
	}
	// The outbox runs on the real clock, whatever the executions' clock.
	if err := r.cfg.Store.AddNotice(ctx, executionARN, status, time.Now()); err != nil {
		return fmt.Errorf("queuing the %s event of %s: %w", status, executionARN, err)
	}
	return nil
}

// Map Runs: the interpreter runs a Distributed Map's iterations as threads
// of the parent execution and keeps each one's history as a child
// execution's (interp.ChildExecution); the runner stores the Map Runs and
// the children a step changed once the step is committed, and again, all
// of them, whenever it rebuilds the parent by replay (the writes are
// idempotent), so a crash between the two commits loses nothing.

// putMapRuns stores the Map Runs and child executions that changed in x,
// retrying for a while when the store refuses.
func (r *Runner) putMapRuns(ctx context.Context, st store.Store, x *interp.Execution) {
	if x == nil {
		return
	}
	runs, kids := x.TakeMapRuns()
	if len(runs) == 0 && len(kids) == 0 {
		return
	}
	parent := x.Info().ExecutionARN
	srs := make([]*store.MapRun, len(runs))
	for i, run := range runs {
		srs[i] = storedMapRun(parent, run)
	}
	sks := make([]*store.ChildExecution, len(kids))
	for i, k := range kids {
		sks[i] = storedChild(k)
	}
	wait := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := st.PutMapRuns(ctx, srs, sks)
		if err == nil {
			return
		}
		if attempt == 5 || ctx.Err() != nil || errors.Is(err, store.ErrConflict) {
			r.log.Error("cannot store the Map Runs of a step; they are stored again when the execution is rebuilt", "execution", parent, "err", err)
			return
		}
		time.Sleep(wait)
		wait *= 2
	}
}

func storedMapRun(parent string, r *interp.MapRun) *store.MapRun {
	sr := &store.MapRun{ARN: r.ARN, ExecutionARN: parent, Status: r.Status, Started: r.Start, Stopped: r.Stop, MaxConcurrency: r.MaxConcurrency,
		ToleratedFailureCount: max(r.ToleratedFailureCount, 0), ToleratedFailurePercentage: r.ToleratedFailurePercentage,
		RedriveCount: r.RedriveCount, RedriveDate: r.RedriveDate}
	sr.Executions, sr.Items = storedCounts(r.Executions), storedCounts(r.Items)
	return sr
}

func storedCounts(c interp.MapRunCounts) store.MapRunCounts {
	return store.MapRunCounts{Pending: c.Pending, Running: c.Running, Succeeded: c.Succeeded, Failed: c.Failed, TimedOut: c.TimedOut,
		Aborted: c.Aborted, Total: c.Total, ResultsWritten: c.ResultsWritten, FailuresNotRedrivable: c.FailuresNotRedrivable,
		PendingRedrive: c.PendingRedrive}
}

func storedChild(k *interp.ChildExecution) *store.ChildExecution {
	c := &store.ChildExecution{MapRunARN: k.MapRunARN}
	e := &c.Execution
	e.ARN, e.Name, e.StateMachineARN, e.Status, e.Started, e.Stopped = k.ARN, k.Name, k.StateMachineARN, string(k.Status), k.Start, k.Stop
	if a, err := arn.Parse(k.StateMachineARN); err == nil && len(a.Names) > 0 {
		e.StateMachineName = a.Names[0]
	}
	e.Type = "STANDARD"
	if k.Express {
		e.Type = "EXPRESS"
	}
	e.Input = value.String(k.Input)
	if k.Status == interp.Succeeded {
		e.Output = value.String(k.Output)
	}
	if k.Failure != nil {
		e.Error, e.Cause = k.Failure.Error, k.Failure.Cause
	}
	var buf []byte
	c.Events = make([]store.Event, len(k.Events))
	for i, ev := range k.Events {
		start := len(buf)
		buf = ev.AppendJSON(buf, true)
		c.Events[i] = store.Event{ID: ev.ID, Type: ev.Type, JSON: buf[start:len(buf):len(buf)]}
	}
	return c
}

// putRedrive records an execution's redrive count and date (again after a
// replay, in case a crash came between the redrive's step and this).
func (r *Runner) putRedrive(ctx context.Context, executionARN string, n int, at time.Time) {
	if n == 0 {
		return
	}
	if err := r.cfg.Store.PutRedrive(ctx, executionARN, store.Redrive{Count: n, Date: at}); err != nil {
		r.log.Error("cannot record an execution's redrive; it is recorded again when the execution is rebuilt", "execution", executionARN, "err", err)
	}
}

// logSetup is what an execution logs, from its state machine's
// configuration: nothing (nil) when the level is OFF or the runner has no
// destination, so that an execution that logs nothing pays nothing.
type logSetup struct {
	level    string
	data     bool
	logGroup string
}

func (r *Runner) logSetup(text string) *logSetup {
	if r.cfg.ExecutionLogs == nil || text == "" {
		return nil
	}
	c := execlog.ParseConfiguration(text)
	if c.Level == execlog.Off || len(c.Destinations) == 0 || c.Destinations[0].CloudWatchLogsLogGroup == nil {
		return nil
	}
	return &logSetup{level: c.Level, data: c.IncludeExecutionData, logGroup: c.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn}
}

// logSetupOf is logSetup for an execution rebuilt (Resume, a dormant one
// waking, a claim): its state machine's configuration is read once for
// all the executions of a state machine resumed within a few seconds,
// rather than once each.
func (r *Runner) logSetupOf(ctx context.Context, smARN string) *logSetup {
	if r.cfg.ExecutionLogs == nil {
		return nil
	}
	type memo struct {
		text string
		at   time.Time
	}
	if v, ok := r.logMemo.Load(smARN); ok && time.Since(v.(memo).at) < 5*time.Second {
		return r.logSetup(v.(memo).text)
	}
	sm, err := r.cfg.Store.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil // deleted: nothing to log to
	}
	r.logMemo.Store(smARN, memo{sm.Logging, time.Now()})
	return r.logSetup(sm.Logging)
}

// writeLog writes the records of a committed step's events that the
// setup's level includes, reusing buf; a record that cannot be written is
// reported in the server's log, and the execution goes on.
func (r *Runner) writeLog(buf []byte, arn string, set *logSetup, st *store.Step) []byte {
	for _, ev := range st.Events {
		if !execlog.Includes(set.level, ev.Type) {
			continue
		}
		var err error
		if buf, err = execlog.AppendRecord(buf, ev.JSON, arn, set.data, 0); err != nil {
			r.log.Warn("execution log: cannot write an event", "execution", arn, "event", ev.ID, "err", err)
		}
	}
	if len(buf) > 0 {
		if err := r.cfg.ExecutionLogs.Write(set.logGroup, buf); err != nil {
			r.log.Warn("execution log: cannot write", "execution", arn, "logGroup", set.logGroup, "err", err)
		}
	}
	return buf
}
