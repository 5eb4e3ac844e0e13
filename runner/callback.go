package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// activityTask is a task offered to an activity's workers.
type activityTask struct {
	token     string
	input     string
	execution string
	driver    *engine.Driver
}

// queue returns the (in-memory) task queue of an activity.
func (r *Runner) queue(arn string) chan activityTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queues == nil {
		r.queues = map[string]chan activityTask{}
	}
	q := r.queues[arn]
	if q == nil {
		q = make(chan activityTask, 1024)
		r.queues[arn] = q
	}
	return q
}

// TakeActivityTask waits up to wait (AWS: 60 seconds) for a task of the
// activity (which the caller has checked exists) and hands it to worker.
// It returns an empty token when none came.
func (r *Runner) TakeActivityTask(ctx context.Context, activityARN, worker string, wait time.Duration) (token, input string, err error) {
	if sh := r.cfg.Shared; sh != nil {
		return r.takeShared(ctx, sh, activityARN, worker, wait)
	}
	q := r.queue(activityARN)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case at := <-q:
			// The task may have been cancelled or timed out meanwhile.
			if at.driver.Deliver(at.token, interp.Input{Kind: interp.TaskStarted, Worker: worker}) != nil {
				continue
			}
			return r.handOut(ctx, &store.ActivityTask{ExecutionARN: at.execution, Token: at.token, Input: at.input}, func() {
				select {
				case q <- at:
				default:
					go func() { q <- at }()
				}
			}, func() {})
		case <-t.C:
			return "", "", nil
		case <-ctx.Done():
			return "", "", nil
		case <-r.polls:
			return "", "", nil
		}
	}
}

// Callback delivers in (a task's result or a heartbeat) to the task of
// token. It returns ErrBadToken for a token this server's key did not
// sign, ErrTaskClosed when the task has closed (completed, timed out or
// cancelled) and ErrNoTask when no task has the token.
func (r *Runner) Callback(ctx context.Context, token string, in interp.Input) error {
	key, err := r.TokenKey(ctx)
	if err != nil {
		return err
	}
	arn, _, ok := interp.VerifyToken(key, token)
	if !ok {
		// Malformed, made by hand, or signed by another server.
		return fault.New(fault.ErrBadToken, "Invalid Token: 'Invalid token'")
	}
	var delivered error
	d := r.withDriver(arn, func(d *engine.Driver) bool {
		delivered = d.Deliver(token, in)
		return !errors.Is(delivered, engine.ErrSlept)
	})
	if d == nil {
		if sh := r.shared(arn); sh != nil {
			return r.forward(ctx, sh, arn, callbackMessage(token, in))
		}
		return r.noDriver(ctx, arn)
	}
	switch err := delivered; {
	case errors.Is(err, engine.ErrEnded):
		return r.noDriver(ctx, arn)
	case errors.Is(err, engine.ErrTaskClosed):
		// Its task completed, timed out or was cancelled.
		return errTaskClosed()
	case errors.Is(err, engine.ErrNoTask):
		return fault.New(fault.ErrNoTask, "Task Does Not Exist: no task is waiting for this token")
	default:
		return err
	}
}

// noDriver answers a callback whose execution has no driver: when the
// execution has ended, every task it had is closed and AWS answers
// TaskTimedOut, as for a token used twice.
func (r *Runner) noDriver(ctx context.Context, arn string) error {
	e, err := r.cfg.Store.GetExecution(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return fault.New(fault.ErrNoTask, "Task Does Not Exist: no execution has this token")
	}
	if err != nil {
		return fmt.Errorf("reading the execution of a task token: %w", err)
	}
	if e.Status != string(interp.Running) {
		return errTaskClosed()
	}
	return fault.New(fault.ErrNoTask, "Task Does Not Exist: the execution of this token is not running in this server")
}

// errTaskClosed is AWS's answer to a token whose task has closed: it
// completed (the token was used already), timed out or was cancelled.
func errTaskClosed() error {
	return fault.New(fault.ErrTaskClosed, "Task Timed Out: 'Provided task does not exist anymore'")
}

// activityExists returns what tells a driver whether an activity of st exists before its
// Task schedules it (engine.Config.ActivityExists): one that does not
// fails the state right after TaskStateEntered, as on AWS. A store that
// cannot tell answers an error, and the task is offered (enqueueActivity
// then asks again, with back-off).
func activityExists(st store.Store) func(ctx context.Context, activityARN string) (bool, error) {
	return func(ctx context.Context, activityARN string) (bool, error) {
		_, err := st.GetActivity(ctx, activityARN)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// enqueueActivity offers an activity task to the activity's workers.
// A store that cannot tell whether the activity exists (an outage) is
// asked again, with back-off, while the task waits: only an activity that
// does not exist fails it.
func (r *Runner) enqueueActivity(d *engine.Driver, id int64, req *task.Request) {
	_, err := r.cfg.Store.GetActivity(r.ctx, req.Resource)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		go func() {
			for wait := 50 * time.Millisecond; err != nil && !errors.Is(err, store.ErrNotFound); wait = min(2*wait, 5*time.Second) {
				r.log.Warn("cannot read an activity for its task; retrying", "activity", req.Resource, "err", err)
				select {
				case <-r.ctx.Done():
					return
				case <-d.Done():
					return
				case <-time.After(wait):
				}
				_, err = r.cfg.Store.GetActivity(r.ctx, req.Resource)
			}
			r.offerActivity(d, id, req, err)
		}()
		return
	}
	r.offerActivity(d, id, req, err)
}

// offerActivity fails the task when its activity does not exist (err),
// or offers it to the activity's workers.
func (r *Runner) offerActivity(d *engine.Driver, id int64, req *task.Request, err error) {
	if err != nil {
		// Deleted after the Task asked (activityExists): AWS's words;
		// the interpreter names the state (interp.taskDone).
		d.Post(id, task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("The activity %s does not exist.", req.Resource)})
		return
	}
	execution := d.Execution().Info().ExecutionARN
	if r.shared(execution) != nil {
		// Any node's workers may take it.
		go r.offerShared(r.shared(execution), &store.ActivityTask{ActivityARN: req.Resource, ExecutionARN: execution, Token: req.TaskToken, Input: value.String(req.Input)})
		return
	}
	q := r.queue(req.Resource)
	at := activityTask{token: req.TaskToken, input: value.String(req.Input), execution: execution, driver: d}
	select {
	case q <- at:
	default:
		go func() { q <- at }()
	}
}
