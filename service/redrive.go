package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/runner"
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
	info.Status, info.Reason = s.cat.redrivable(ctx, e)
	return info
}

// Redrives returns the redrive records of those of the Standard
// executions of list that were redriven, by ARN, in one read of the store
// (ListExecutions' page).
func (s *Service) Redrives(ctx context.Context, list []*store.Execution) (map[string]store.Redrive, error) {
	ms := s.store
	arns := make([]string, 0, len(list))
	for _, e := range list {
		if e.Type != "EXPRESS" {
			arns = append(arns, e.ARN)
		}
	}
	rs, err := ms.GetRedrives(ctx, arns)
	if err != nil {
		return nil, fmt.Errorf("reading the redrives of executions: %w", err)
	}
	return rs, nil
}

func (cat *catalog) redrivable(ctx context.Context, e *store.Execution) (status, reason string) {
	switch {
	case e.Status == "RUNNING":
		return NotRedrivable, reasonRunning
	case e.Status == "SUCCEEDED":
		return NotRedrivable, reasonSucceeded
	case !e.Stopped.IsZero() && cat.clock.Now().Sub(e.Stopped) > RedrivePeriod:
		return NotRedrivable, reasonPeriod
	case e.Error == interp.ErrRuntime && strings.HasPrefix(e.Cause, historyLimitMessage):
		return NotRedrivable, reasonHistoryLimit
	case cat.svc.MapRunOf(ctx, e.ARN) != "":
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
		return time.Time{}, fault.New(fault.ErrNotRedrivable, "Execution of type EXPRESS cannot be redriven: '%s'", executionARN)
	}
	e, err := s.store.GetExecution(ctx, executionARN)
	if errors.Is(err, store.ErrNotFound) {
		if _, child := s.cat.childExecution(ctx, executionARN); child {
			return time.Time{}, fault.New(fault.ErrNotRedrivable, "A Map Run's child execution is redriven with its parent: '%s'", executionARN)
		}
		return time.Time{}, fault.New(fault.ErrExecutionNotFound, "Execution Does Not Exist: '%s'", executionARN)
	}
	if err != nil {
		return time.Time{}, err
	}
	if status, reason := s.cat.redrivable(ctx, e); status != Redrivable {
		return time.Time{}, fault.New(fault.ErrNotRedrivable, "%s: '%s'", reason, executionARN)
	}
	at, err := s.run.Redrive(ctx, e)
	switch {
	case errors.Is(err, store.ErrConflict):
		return time.Time{}, fault.New(fault.ErrNotRedrivable, "%s: '%s'", reasonRunning, executionARN)
	case errors.Is(err, runner.ErrNotRedrivable):
		return time.Time{}, fault.New(fault.ErrNotRedrivable, "%s: '%s'", reasonHistoryLimit, executionARN)
	case err != nil:
		return time.Time{}, err
	}
	return at, nil
}
