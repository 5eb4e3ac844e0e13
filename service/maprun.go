package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// Map Runs: the interpreter runs a Distributed Map's iterations as threads
// of the parent execution and keeps each one's history as a child
// execution's (interp.ChildExecution); the service stores the Map Runs and
// the children a step changed once the step is committed, and again, all
// of them, whenever it rebuilds the parent by replay (the writes are
// idempotent), so a crash between the two commits loses nothing.

// mapRunJournal is a journal that, once a step is committed, stores what
// the step changed of the execution's Map Runs.
type mapRunJournal struct {
	engine.Journal
	s  *Service
	st store.Store
	d  **engine.Driver
}

func (j mapRunJournal) AppendStep(ctx context.Context, st *store.Step) error {
	err := j.Journal.AppendStep(ctx, st)
	if err == nil && *j.d != nil {
		// On the driver's goroutine, between its steps: the execution
		// may be read.
		j.s.putMapRuns(ctx, j.st, (*j.d).Execution())
	}
	return err
}

// putMapRuns stores the Map Runs and child executions that changed in x,
// retrying for a while when the store refuses.
func (s *Service) putMapRuns(ctx context.Context, st store.Store, x *interp.Execution) {
	if x == nil {
		return
	}
	runs, kids := x.TakeMapRuns()
	if len(runs) == 0 && len(kids) == 0 {
		return
	}
	parent := x.Info().ExecutionArn
	srs := make([]*store.MapRun, len(runs))
	for i, r := range runs {
		srs[i] = storedMapRun(parent, r)
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
			s.log.Error("cannot store the Map Runs of a step; they are stored again when the execution is rebuilt", "execution", parent, "err", err)
			return
		}
		time.Sleep(wait)
		wait *= 2
	}
}

func storedMapRun(parent string, r *interp.MapRun) *store.MapRun {
	sr := &store.MapRun{ARN: r.Arn, ExecutionARN: parent, Status: r.Status, Started: r.Start, Stopped: r.Stop, MaxConcurrency: r.MaxConcurrency,
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
	c := &store.ChildExecution{MapRunARN: k.MapRunArn}
	e := &c.Execution
	e.ARN, e.Name, e.StateMachineARN, e.Status, e.Started, e.Stopped = k.Arn, k.Name, k.StateMachineArn, string(k.Status), k.Start, k.Stop
	if a, err := arn.Parse(k.StateMachineArn); err == nil && len(a.Names) > 0 {
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

// DescribeMapRun returns a Map Run.
func (s *Service) DescribeMapRun(ctx context.Context, mapRunARN string) (*store.MapRun, error) {
	if err := checkARN(mapRunARN, arn.MapRun); err != nil {
		return nil, err
	}
	r, err := s.store.GetMapRun(ctx, mapRunARN)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf("ResourceNotFound", "Resource not found: '%s'", mapRunARN)
	}
	if err != nil {
		return nil, err
	}
	s.notRedrivable(ctx, r)
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
func (s *Service) notRedrivable(ctx context.Context, r *store.MapRun) {
	if r.Status == "RUNNING" {
		return
	}
	parent, err := s.store.GetExecution(ctx, r.ExecutionARN)
	if err != nil {
		return
	}
	if status, _ := s.redrivable(ctx, parent); status == NotRedrivable {
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
	list, next, err := s.store.ListMapRuns(ctx, executionARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
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
	kids, next, err := s.store.ListChildExecutions(ctx, mapRunARN, status, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
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
	c, err := s.store.GetChildExecution(ctx, executionARN)
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
func (s *Service) childExecution(ctx context.Context, executionARN string) (*store.Execution, bool) {
	if !isChildARN(executionARN) {
		return nil, false
	}
	c, err := s.store.GetChildExecution(ctx, executionARN)
	if err != nil {
		return nil, false
	}
	c.Definition, c.RoleARN = s.childDefinition(ctx, c)
	return &c.Execution, true
}

// childEvents reads a page of a child execution's history.
func (s *Service) childEvents(ctx context.Context, executionARN string, after int64, limit int, reverse bool) ([]store.Event, error) {
	if !isChildARN(executionARN) {
		return nil, store.ErrNotFound
	}
	return s.store.ChildEvents(ctx, executionARN, after, limit, reverse)
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
		return errorf("ValidationException", "at least one of maxConcurrency, toleratedFailureCount and toleratedFailurePercentage must be given")
	}
	if u.MaxConcurrency != nil && (*u.MaxConcurrency < 0 || *u.MaxConcurrency > 10000) {
		return errorf("ValidationException", "1 validation error detected: Value '%d' at 'maxConcurrency' failed to satisfy constraint: Member must have value between 0 and 10000", *u.MaxConcurrency)
	}
	if u.ToleratedFailureCount != nil && *u.ToleratedFailureCount < 0 {
		return errorf("ValidationException", "1 validation error detected: Value '%d' at 'toleratedFailureCount' failed to satisfy constraint: Member must have value greater than or equal to 0", *u.ToleratedFailureCount)
	}
	if p := u.ToleratedFailurePercentage; p != nil && (*p < 0 || *p > 100) {
		return errorf("ValidationException", "1 validation error detected: Value '%v' at 'toleratedFailurePercentage' failed to satisfy constraint: Member must have value between 0 and 100", *p)
	}
	if r.Status != "RUNNING" {
		return errorf("ValidationException", "Map Run %s is not running (status %s)", mapRunARN, r.Status)
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
	d := s.driver(r.ExecutionARN)
	if d == nil {
		// Another node runs it (a shared store): the update reaches the
		// owner as a forwarded message, like a stop.
		if sh := s.shared(r.ExecutionARN); sh != nil {
			msg := encodeForwarded(forwarded{Kind: "updateMapRun", Output: string(value.Append(nil, args))})
			if err := sh.Send(ctx, r.ExecutionARN, msg); err != nil {
				return fmt.Errorf("forwarding UpdateMapRun to the node that runs %s: %w", r.ExecutionARN, err)
			}
			return nil
		}
		return errorf("ValidationException", "the execution of Map Run %s is not running on this node", mapRunARN)
	}
	d.UpdateMapRun(args)
	return nil
}

// checkStatusFilter checks ListExecutions' statusFilter.
func checkStatusFilter(status string) error {
	switch status {
	case "", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE":
		return nil
	}
	return errorf("ValidationException", "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", status)
}

// childDefinition is the definition AWS gives a Map Run's child execution:
// the ItemProcessor of the Map state (by Label, else by name) in the parent's
// definition.
func (s *Service) childDefinition(ctx context.Context, c *store.ChildExecution) (def, role string) {
	r, err := s.store.GetMapRun(ctx, c.MapRunARN)
	if err != nil {
		return "", ""
	}
	parent, err := s.store.GetExecution(ctx, r.ExecutionARN)
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
