package service

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
func (s *Service) queue(arn string) chan activityTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = map[string]chan activityTask{}
	}
	q := s.queues[arn]
	if q == nil {
		q = make(chan activityTask, 1024)
		s.queues[arn] = q
	}
	return q
}

// CreateActivity registers an activity; creating an existing one returns it.
func (s *Service) CreateActivity(ctx context.Context, name string) (*store.Activity, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	a := &store.Activity{ARN: s.scope().Activity(name), Name: name, Created: s.clock.Now()}
	if err := s.store.CreateActivity(ctx, a); err != nil {
		if errors.Is(err, store.ErrExists) {
			return s.store.GetActivity(ctx, a.ARN)
		}
		return nil, err
	}
	return a, nil
}

// DescribeActivity returns an activity.
func (s *Service) DescribeActivity(ctx context.Context, arn string) (*store.Activity, error) {
	if err := checkARN(arn, "activity"); err != nil {
		return nil, err
	}
	a, err := s.store.GetActivity(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrActivityNotFound, "Activity Does Not Exist: '%s'", arn)
	}
	return a, err
}

// DeleteActivity removes an activity; deleting a missing one succeeds.
func (s *Service) DeleteActivity(ctx context.Context, arn string) error {
	if err := checkARN(arn, "activity"); err != nil {
		return err
	}
	if err := s.store.DeleteActivity(ctx, arn); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.putSettings(ctx, arn, Settings{}) // its tags and encryption (version.go)
}

// ListActivities lists activities by name.
func (s *Service) ListActivities(ctx context.Context, page store.Page) ([]*store.Activity, string, error) {
	list, next, err := s.store.ListActivities(ctx, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// GetActivityTask waits up to wait (AWS: 60 seconds) for a task of the
// activity. It returns an empty token when none came.
func (s *Service) GetActivityTask(ctx context.Context, arn, worker string, wait time.Duration) (token, input string, err error) {
	if _, err := s.DescribeActivity(ctx, arn); err != nil {
		return "", "", err
	}
	if sh, ok := s.store.(store.Shared); ok {
		return s.takeShared(ctx, sh, arn, worker, wait)
	}
	q := s.queue(arn)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case at := <-q:
			// The task may have been cancelled or timed out meanwhile.
			if at.driver.Deliver(at.token, interp.Input{Kind: interp.TaskStarted, Worker: worker}) != nil {
				continue
			}
			return s.handOut(ctx, &store.ActivityTask{ExecutionARN: at.execution, Token: at.token, Input: at.input}, func() {
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
		case <-s.polls:
			return "", "", nil
		}
	}
}

// SendTaskSuccess completes the task of token with output (JSON text).
// A token that is not one is reported before the output, as AWS does.
func (s *Service) SendTaskSuccess(ctx context.Context, token, output string) error {
	key, err := s.tokenKey(ctx)
	if err != nil {
		return err
	}
	if _, _, ok := interp.VerifyToken(key, token); !ok {
		return fault.New(fault.ErrBadToken, "Invalid Token: 'Invalid token'")
	}
	v, err := value.ParseString(output)
	if err != nil {
		return fault.New(fault.ErrInvalidOutput, "Invalid Output: '%v'", err)
	}
	if len(output) > maxPayload {
		return fault.New(fault.ErrInvalidOutput, "Invalid Output: the output exceeds the maximum size of 262144 bytes")
	}
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: v}})
}

// SendTaskFailure fails the task of token.
func (s *Service) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	if errName == "" {
		errName = "States.TaskFailed"
	}
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Error: errName, Cause: cause}})
}

// SendTaskHeartbeat records a heartbeat for the task of token.
func (s *Service) SendTaskHeartbeat(ctx context.Context, token string) error {
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskHeartbeat})
}

func (s *Service) callback(ctx context.Context, token string, in interp.Input) error {
	key, err := s.tokenKey(ctx)
	if err != nil {
		return err
	}
	arn, _, ok := interp.VerifyToken(key, token)
	if !ok {
		// Malformed, made by hand, or signed by another server.
		return fault.New(fault.ErrBadToken, "Invalid Token: 'Invalid token'")
	}
	d := s.driver(arn)
	if d == nil {
		if sh := s.shared(arn); sh != nil {
			return s.forward(ctx, sh, arn, callbackMessage(token, in))
		}
		return s.noDriver(ctx, arn)
	}
	switch err := d.Deliver(token, in); {
	case errors.Is(err, engine.ErrEnded):
		return s.noDriver(ctx, arn)
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
func (s *Service) noDriver(ctx context.Context, arn string) error {
	e, err := s.store.GetExecution(ctx, arn)
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
