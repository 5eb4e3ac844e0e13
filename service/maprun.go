package service

import (
	"context"
	"errors"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// DescribeMapRun returns a Map Run.
func (s *Service) DescribeMapRun(ctx context.Context, mapRunARN string) (*store.MapRun, error) {
	if err := checkARN(mapRunARN, arn.MapRun); err != nil {
		return nil, err
	}
	ms := s.store
	r, err := ms.GetMapRun(ctx, mapRunARN)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrResourceNotFound, "Resource not found: '%s'", mapRunARN)
	}
	if err != nil {
		return nil, err
	}
	s.cat.notRedrivable(ctx, r)
	return r, nil
}

// notRedrivable counts as failuresNotRedrivable the unsuccessful children
// of a Map Run that ended and whose parent cannot be redriven (AWS's
// MapRunExecutionCounts: "FAILED, ABORTED, or TIMED_OUT child workflow
// executions that cannot be redriven because their execution status is
// terminal"; "Redriving Map Runs": they are redriven by redriving the
// parent, which must be redrivable). A parent still running has left the
// Map state (caught or retried: a retry starts a new Map Run), so that
// Map Run is not redriven either.
func (cat *catalog) notRedrivable(ctx context.Context, r *store.MapRun) {
	if r.Status == "RUNNING" {
		return
	}
	parent, err := cat.store.GetExecution(ctx, r.ExecutionARN)
	if err != nil {
		return
	}
	if status, _ := cat.redrivable(ctx, parent); status == NotRedrivable {
		for _, c := range []*store.MapRunCounts{&r.Executions, &r.Items} {
			c.FailuresNotRedrivable = c.Failed + c.TimedOut + c.Aborted
		}
	}
}

// ListMapRuns lists the Map Runs of an execution, newest first.
func (s *Service) ListMapRuns(ctx context.Context, executionARN string, page store.Page) ([]*store.MapRun, string, error) {
	if _, err := s.DescribeExecution(ctx, executionARN); err != nil {
		return nil, "", err
	}
	ms := s.store
	list, next, err := ms.ListMapRuns(ctx, executionARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// ListMapRunExecutions lists the child executions of a Map Run, newest
// first (ListExecutions with mapRunArn).
func (s *Service) ListMapRunExecutions(ctx context.Context, mapRunARN, status string, page store.Page) ([]*store.Execution, string, error) {
	if _, err := s.DescribeMapRun(ctx, mapRunARN); err != nil {
		return nil, "", err
	}
	if err := checkStatusFilter(status); err != nil {
		return nil, "", err
	}
	ms := s.store
	kids, next, err := ms.ListChildExecutions(ctx, mapRunARN, status, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	if err != nil {
		return nil, "", err
	}
	list := make([]*store.Execution, len(kids))
	for i, k := range kids {
		list[i] = &k.Execution
	}
	return list, next, nil
}

// MapRunOf returns the Map Run that started execution arn ("" when it is
// not a Map Run's child execution).
func (s *Service) MapRunOf(ctx context.Context, executionARN string) string {
	if !isChildARN(executionARN) {
		return ""
	}
	ms := s.store
	c, err := ms.GetChildExecution(ctx, executionARN)
	if err != nil {
		return ""
	}
	return c.MapRunARN
}

// isChildARN reports whether an execution ARN may be a Map Run's child's:
// its state machine part is "stateMachine/label".
func isChildARN(executionARN string) bool {
	a, err := arn.Parse(executionARN)
	return err == nil && len(a.Names) > 0 && strings.Contains(a.Names[0], "/")
}

// childExecution returns a Map Run's child execution, for DescribeExecution.
func (cat *catalog) childExecution(ctx context.Context, executionARN string) (*store.Execution, bool) {
	if !isChildARN(executionARN) {
		return nil, false
	}
	ms := cat.store
	c, err := ms.GetChildExecution(ctx, executionARN)
	if err != nil {
		return nil, false
	}
	c.Definition, c.RoleARN = cat.childDefinition(ctx, c)
	return &c.Execution, true
}

// childEvents reads a page of a child execution's history.
func (cat *catalog) childEvents(ctx context.Context, executionARN string, after int64, limit int, reverse bool) ([]store.Event, error) {
	ms := cat.store
	if !isChildARN(executionARN) {
		return nil, store.ErrNotFound
	}
	return ms.ChildEvents(ctx, executionARN, after, limit, reverse)
}

// MapRunUpdate is UpdateMapRun's request; nil members are left as they are.
type MapRunUpdate struct {
	MaxConcurrency             *int
	ToleratedFailureCount      *int64
	ToleratedFailurePercentage *float64
}

// UpdateMapRun changes a running Map Run's limits: the request is
// delivered to the parent execution's driver, like a stop, and committed
// with the step it causes, so a replay applies it again.
func (s *Service) UpdateMapRun(ctx context.Context, mapRunARN string, u MapRunUpdate) error {
	r, err := s.DescribeMapRun(ctx, mapRunARN)
	if err != nil {
		return err
	}
	if u.MaxConcurrency == nil && u.ToleratedFailureCount == nil && u.ToleratedFailurePercentage == nil {
		return fault.New(fault.ErrValidation, "at least one of maxConcurrency, toleratedFailureCount and toleratedFailurePercentage must be given")
	}
	if u.MaxConcurrency != nil && (*u.MaxConcurrency < 0 || *u.MaxConcurrency > 10000) {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%d' at 'maxConcurrency' failed to satisfy constraint: Member must have value between 0 and 10000", *u.MaxConcurrency)
	}
	if u.ToleratedFailureCount != nil && *u.ToleratedFailureCount < 0 {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%d' at 'toleratedFailureCount' failed to satisfy constraint: Member must have value greater than or equal to 0", *u.ToleratedFailureCount)
	}
	if p := u.ToleratedFailurePercentage; p != nil && (*p < 0 || *p > 100) {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%v' at 'toleratedFailurePercentage' failed to satisfy constraint: Member must have value between 0 and 100", *p)
	}
	if r.Status != "RUNNING" {
		return fault.New(fault.ErrValidation, "Map Run %s is not running (status %s)", mapRunARN, r.Status)
	}
	args := value.NewObject(4)
	args.Set("mapRunArn", mapRunARN)
	if u.MaxConcurrency != nil {
		args.Set("maxConcurrency", value.Int(int64(*u.MaxConcurrency)))
	}
	if u.ToleratedFailureCount != nil {
		args.Set("toleratedFailureCount", value.Int(*u.ToleratedFailureCount))
	}
	if u.ToleratedFailurePercentage != nil {
		args.Set("toleratedFailurePercentage", value.Float(*u.ToleratedFailurePercentage))
	}
	// Delivered to the parent's driver, here or on the node that runs it.
	if err := s.run.UpdateMapRun(ctx, r.ExecutionARN, args); errors.Is(err, runner.ErrNotRunningHere) {
		return fault.New(fault.ErrValidation, "the execution of Map Run %s is not running on this node", mapRunARN)
	} else if err != nil {
		return err
	}
	return nil
}

// checkStatusFilter checks ListExecutions' statusFilter.
func checkStatusFilter(status string) error {
	switch status {
	case "", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE":
		return nil
	}
	return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", status)
}

// childDefinition is the definition AWS gives a Map Run's child execution:
// the ItemProcessor of the Map state (by Label, else by name) in the parent's
// definition.
func (cat *catalog) childDefinition(ctx context.Context, c *store.ChildExecution) (def, role string) {
	ms := cat.store
	r, err := ms.GetMapRun(ctx, c.MapRunARN)
	if err != nil {
		return "", ""
	}
	parent, err := cat.store.GetExecution(ctx, r.ExecutionARN)
	if err != nil {
		return "", ""
	}
	label := c.StateMachineName[strings.IndexByte(c.StateMachineName, '/')+1:]
	v, err := value.ParseString(parent.Definition)
	if err != nil {
		return "", parent.RoleARN
	}
	if p := findProcessor(v, label); p != nil {
		return value.String(p), parent.RoleARN
	}
	return "", parent.RoleARN
}

// findProcessor finds, in a definition or part of one, the ItemProcessor of
// the distributed Map state labelled (or named) label.
func findProcessor(v any, label string) any {
	o, ok := v.(*value.Object)
	if !ok {
		return nil
	}
	states, _ := o.Get("States")
	so, ok := states.(*value.Object)
	if !ok {
		return nil
	}
	for name, st := range so.All {
		sto, ok := st.(*value.Object)
		if !ok {
			continue
		}
		proc, hasProc := sto.Get("ItemProcessor")
		if hasProc {
			l, hasLabel := sto.Get("Label")
			if l == label || !hasLabel && name == label {
				return proc
			}
			if p := findProcessor(proc, label); p != nil {
				return p
			}
		}
		if branches, ok := sto.Get("Branches"); ok {
			list, _ := branches.([]any)
			for _, b := range list {
				if p := findProcessor(b, label); p != nil {
					return p
				}
			}
		}
	}
	return nil
}
