package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
)

// RedrivePeriod is how long after it stopped an execution can be redriven
// (AWS: 14 days).
const RedrivePeriod = 14 * 24 * time.Hour

// Redrive statuses and reasons, as DescribeExecution gives them.
const (
	Redrivable          = "REDRIVABLE"
	NotRedrivable       = "NOT_REDRIVABLE"
	RedrivableByMapRun  = "REDRIVABLE_BY_MAP_RUN"
	reasonRunning       = "Execution is RUNNING and cannot be redriven"
	reasonSucceeded     = "Execution is SUCCEEDED and cannot be redriven"
	reasonPeriod        = "Execution redrivable period exceeded"
	reasonHistoryLimit  = "Execution history event limit exceeded"
	historyLimitMessage = "The execution history reached the limit of"
)

// RedriveInfo is what DescribeExecution and ListExecutions say of an
// execution's redrives.
type RedriveInfo struct {
	Count  int
	Date   time.Time // zero: never redriven
	Status string    // REDRIVABLE, NOT_REDRIVABLE, REDRIVABLE_BY_MAP_RUN ("" for Express executions)
	Reason string    // why not, when NOT_REDRIVABLE
}

// Redrive returns an execution's redrive record and whether it can be
// redriven now.
func (s *Service) Redrive(ctx context.Context, e *store.Execution) RedriveInfo {
	var info RedriveInfo
	if e.Type == "EXPRESS" {
		return info
	}
	if r, err := s.store.GetRedrive(ctx, e.ARN); err == nil {
		info.Count, info.Date = r.Count, r.Date
	}
	info.Status, info.Reason = s.redrivable(ctx, e)
	return info
}

// Redrives returns the redrive records of those of the Standard
// executions of list that were redriven, by ARN, in one read of the store
// (ListExecutions' page).
func (s *Service) Redrives(ctx context.Context, list []*store.Execution) (map[string]store.Redrive, error) {
	arns := make([]string, 0, len(list))
	for _, e := range list {
		if e.Type != "EXPRESS" {
			arns = append(arns, e.ARN)
		}
	}
	rs, err := s.store.GetRedrives(ctx, arns)
	if err != nil {
		return nil, fmt.Errorf("reading the redrives of executions: %w", err)
	}
	return rs, nil
}

func (s *Service) redrivable(ctx context.Context, e *store.Execution) (status, reason string) {
	switch {
	case e.Status == "RUNNING":
		return NotRedrivable, reasonRunning
	case e.Status == "SUCCEEDED":
		return NotRedrivable, reasonSucceeded
	case !e.Stopped.IsZero() && s.clock.Now().Sub(e.Stopped) > RedrivePeriod:
		return NotRedrivable, reasonPeriod
	case e.Error == interp.ErrRuntime && strings.HasPrefix(e.Cause, historyLimitMessage):
		return NotRedrivable, reasonHistoryLimit
	case s.MapRunOf(ctx, e.ARN) != "":
		return RedrivableByMapRun, ""
	}
	return Redrivable, ""
}

// RedriveExecution runs a FAILED, TIMED_OUT or ABORTED Standard execution
// again from the states that did not succeed: the execution is rebuilt by
// replay, the redrive is committed as its next step (so it survives a
// restart like any other step) and the execution runs on. It returns the
// redrive's date.
func (s *Service) RedriveExecution(ctx context.Context, executionARN string) (time.Time, error) {
	if err := checkARN(executionARN, arn.Execution); err != nil {
		return time.Time{}, err
	}
	if a, err := arn.Parse(executionARN); err == nil && a.Type == arn.Express {
		return time.Time{}, errorf("ExecutionNotRedrivable", "Execution of type EXPRESS cannot be redriven: '%s'", executionARN)
	}
	e, err := s.store.GetExecution(ctx, executionARN)
	if errors.Is(err, store.ErrNotFound) {
		if _, child := s.childExecution(ctx, executionARN); child {
			return time.Time{}, errorf("ExecutionNotRedrivable", "A Map Run's child execution is redriven with its parent: '%s'", executionARN)
		}
		return time.Time{}, errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", executionARN)
	}
	if err != nil {
		return time.Time{}, err
	}
	if status, reason := s.redrivable(ctx, e); status != Redrivable {
		return time.Time{}, errorf("ExecutionNotRedrivable", "%s: '%s'", reason, executionARN)
	}
	if err := s.gone(ctx, executionARN); err != nil {
		return time.Time{}, err
	}
	steps, err := s.store.Steps(ctx, executionARN)
	if err != nil {
		return time.Time{}, err
	}
	d, err := s.rebuild(ctx, e, steps)
	if err != nil {
		return time.Time{}, err
	}
	ok, err := d.Redrive(ctx)
	if errors.Is(err, store.ErrConflict) {
		return time.Time{}, errorf("ExecutionNotRedrivable", "%s: '%s'", reasonRunning, executionARN)
	}
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, errorf("ExecutionNotRedrivable", "%s: '%s'", reasonHistoryLimit, executionARN)
	}
	s.putMapRuns(ctx, s.store, d.Execution())
	n, at := d.Execution().RedriveCount()
	s.putRedrive(ctx, executionARN, n, at)
	s.register(executionARN, d)
	s.start(executionARN, d)
	return at, nil
}

// putRedrive records an execution's redrive count and date (again after a
// replay, in case a crash came between the redrive's step and this).
func (s *Service) putRedrive(ctx context.Context, executionARN string, n int, at time.Time) {
	if n == 0 {
		return
	}
	if err := s.store.PutRedrive(ctx, executionARN, store.Redrive{Count: n, Date: at}); err != nil {
		s.log.Error("cannot record an execution's redrive; it is recorded again when the execution is rebuilt", "execution", executionARN, "err", err)
	}
}

// gone waits until the driver of an execution that has ended has left
// (its end is committed before its driver unregisters).
func (s *Service) gone(ctx context.Context, executionARN string) error {
	for {
		d := s.driver(executionARN)
		if d == nil {
			return nil
		}
		select {
		case <-d.Done():
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
