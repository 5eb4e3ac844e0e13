package service

import (
	"context"
	"time"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// GetActivityTask waits up to wait (AWS: 60 seconds) for a task of the
// activity. It returns an empty token when none came.
func (s *Service) GetActivityTask(ctx context.Context, arn, worker string, wait time.Duration) (token, input string, err error) {
	if _, err := s.cat.activity(ctx, arn); err != nil {
		return "", "", err
	}
	return s.run.TakeActivityTask(ctx, arn, worker, wait)
}

// SendTaskSuccess completes the task of token with output (JSON text).
// A token that is not one is reported before the output, as AWS does.
func (s *Service) SendTaskSuccess(ctx context.Context, token, output string) error {
	if err := s.run.CheckToken(ctx, token); err != nil {
		return err
	}
	v, err := value.ParseString(output)
	if err != nil {
		return fault.New(fault.ErrInvalidOutput, "Invalid Output: '%v'", err)
	}
	if len(output) > maxPayload {
		return fault.New(fault.ErrInvalidOutput, "Invalid Output: the output exceeds the maximum size of 262144 bytes")
	}
	return s.run.Callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: v}})
}

// SendTaskFailure fails the task of token.
func (s *Service) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	if errName == "" {
		// AWS records the failure without an error; a catcher sees null.
		errName = task.NoError
	}
	return s.run.Callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Error: errName, Cause: cause}})
}

// SendTaskHeartbeat records a heartbeat for the task of token.
func (s *Service) SendTaskHeartbeat(ctx context.Context, token string) error {
	return s.run.Callback(ctx, token, interp.Input{Kind: interp.TaskHeartbeat})
}
