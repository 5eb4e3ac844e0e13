package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// StartExecution starts an execution. A Standard execution is committed
// to the store before this returns; starting one with the same name and
// input while it runs (or, with in.Again, at all) returns the same
// execution.
func (s *Service) StartExecution(ctx context.Context, in StartInput) (*store.Execution, error) {
	return s.start(ctx, in, false)
}

// start starts an execution; sync marks one StartSyncExecution waits for.
func (s *Service) start(ctx context.Context, in StartInput, sync bool) (*store.Execution, error) {
	smARN, testCase, _ := strings.Cut(in.StateMachineARN, "#")
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, err
	}
	t, err := s.cat.resolveStart(ctx, smARN, true)
	if err != nil {
		return nil, err
	}
	if err := checkTraceHeader(in.TraceHeader); err != nil {
		return nil, err
	}
	sm := t.running()
	if in.Name == "" {
		in.Name = uuid.New()
	}
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	inputVal, err := parseInput(in.Input)
	if err != nil {
		return nil, err
	}
	if in.Input == "" {
		in.Input = "{}"
	}
	if testCase != "" && s.cfg.Mocks == nil {
		return nil, fault.New(fault.ErrValidation, "test case %q named, but no mock configuration is loaded (SFN_MOCK_CONFIG)", testCase)
	}
	express := sm.Type == "EXPRESS"
	execARN := s.scope().Execution(sm.Name, in.Name)
	if express {
		execARN = s.scope().Express(sm.Name, in.Name, uuid.New())
	}
	if _, err := s.program(sm.Definition); err != nil {
		return nil, fault.New(fault.ErrInvalidDefinition, "%v", err)
	}
	e := &store.Execution{ARN: execARN, Name: in.Name, StateMachineARN: sm.ARN, StateMachineName: sm.Name, Definition: sm.Definition,
		Type: sm.Type, RoleARN: sm.RoleARN, TestCase: testCase, Input: in.Input, Status: string(interp.Running), Sync: sync && express}
	if testCase != "" {
		// A test case the mocks do not have is refused before anything
		// is stored.
		if _, _, err := s.invoker(e); err != nil {
			return nil, err
		}
	}
	if err := s.cat.putRef(ctx, s.cat.storeFor(execARN), e.ARN, t, in.TraceHeader); err != nil {
		return nil, err
	}
	err = s.run.Start(ctx, e, inputVal, sm.Logging)
	if errors.Is(err, store.ErrExists) {
		old, gerr := s.cat.storeFor(execARN).GetExecution(ctx, execARN)
		if gerr == nil && old.Input == in.Input && (old.Status == string(interp.Running) || in.Again) {
			return old, nil
		}
		return nil, fault.New(fault.ErrExecutionExists, "Execution Already Exists: '%s'", execARN)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// StartSyncExecution runs an Express execution to completion and returns
// it with its final history.
func (s *Service) StartSyncExecution(ctx context.Context, in StartInput) (*store.Execution, error) {
	smARN, _, _ := strings.Cut(in.StateMachineARN, "#")
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, err
	}
	t, err := s.cat.resolveStart(ctx, smARN, false)
	if err != nil {
		return nil, err
	}
	if t.sm.Type != "EXPRESS" {
		return nil, fault.New(fault.ErrTypeNotSupported, "This operation is not supported by this type of state machine")
	}
	e, err := s.start(ctx, in, true)
	if err != nil {
		return nil, err
	}
	return s.run.WaitExpress(ctx, e)
}

// Wait blocks until the execution is no longer running (or ctx ends) and
// returns it.
func (s *Service) Wait(ctx context.Context, arn string) (*store.Execution, error) {
	e, err := s.run.Wait(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return s.DescribeExecution(ctx, arn)
	}
	return e, err
}

// StopExecution stops a running execution (status ABORTED).
func (s *Service) StopExecution(ctx context.Context, arn, errName, cause string) (*store.Execution, error) {
	e, err := s.DescribeExecution(ctx, arn)
	if err != nil {
		return nil, err
	}
	if e.Status != string(interp.Running) {
		return e, nil
	}
	if err := s.run.Stop(ctx, arn, errName, cause); errors.Is(err, runner.ErrNotRunningHere) {
		return nil, fault.New(fault.ErrExecutionNotFound, "Execution Does Not Exist: '%s'", arn)
	} else if err != nil {
		return nil, err
	}
	return s.DescribeExecution(ctx, arn)
}

// storeFor returns the store that keeps the execution of ARN s.
func (cat *catalog) storeFor(execution string) store.Store {
	if arn.TypeOf(execution) == arn.Express {
		return cat.express
	}
	return cat.store
}

// DescribeExecution returns an execution.
func (s *Service) DescribeExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if err := checkARN(arn, "execution"); err != nil {
		return nil, err
	}
	e, err := s.cat.storeFor(arn).GetExecution(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		if c, ok := s.cat.childExecution(ctx, arn); ok {
			return c, nil
		}
		return nil, fault.New(fault.ErrExecutionNotFound, "Execution Does Not Exist: '%s'", arn)
	}
	return e, err
}

// ListExecutions lists a state machine's executions, newest first.
func (s *Service) ListExecutions(ctx context.Context, smARN, status string, page store.Page) ([]*store.Execution, string, error) {
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, "", err
	}
	t, err := s.cat.resolve(ctx, smARN, false)
	if err != nil {
		return nil, "", err
	}
	sm := t.sm
	if sm.Type == "EXPRESS" && ctx.Value(expressListingKey{}) == nil {
		// As AWS: Express executions are recorded in CloudWatch Logs, not
		// listed (ListExecutions' StateMachineTypeNotSupported).
		return nil, "", fault.New(fault.ErrTypeNotSupported, "This operation is not supported by this type of state machine")
	}
	switch status {
	case "", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE":
	default:
		return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", status)
	}
	st := s.store
	if sm.Type == "EXPRESS" {
		st = s.express
	}
	var list []*store.Execution
	var next string
	if t.version == nil {
		list, next, err = st.ListExecutions(ctx, smARN, status, page)
	} else {
		list, next, err = st.ListExecutionsOf(ctx, smARN, status, page)
	}
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

type expressListingKey struct{}

// WithExpressListing returns a context in which ListExecutions lists the
// executions of an Express state machine, which AWS refuses to: stepd's
// console asks for them (the API's X-Stepd-Express-Details header).
func WithExpressListing(ctx context.Context) context.Context {
	return context.WithValue(ctx, expressListingKey{}, true)
}

// History returns a page of an execution's history. The token is the id
// of the last event returned.
func (s *Service) History(ctx context.Context, arn string, token string, limit int, reverse bool) ([]store.Event, string, error) {
	if err := checkARN(arn, "execution"); err != nil {
		return nil, "", err
	}
	var after int64
	if token != "" {
		if _, err := fmt.Sscanf(token, "%d", &after); err != nil || after <= 0 {
			return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", token)
		}
	}
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	evs, err := s.cat.storeFor(arn).Events(ctx, arn, after, limit+1, reverse)
	if errors.Is(err, store.ErrNotFound) {
		evs, err = s.cat.childEvents(ctx, arn, after, limit+1, reverse)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", fault.New(fault.ErrExecutionNotFound, "Execution Does Not Exist: '%s'", arn)
	}
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(evs) > limit {
		evs = evs[:limit]
		next = fmt.Sprint(evs[len(evs)-1].ID)
	}
	return evs, next, nil
}

// maxPayload is AWS's limit on execution input and output.
const maxPayload = validate.MaxPayload

// StartInput is StartExecution's input.
type StartInput struct {
	StateMachineARN string // may end in #TestCase (Step Functions Local mocks)
	Name            string
	Input           string
	TraceHeader     string // kept and returned by DescribeExecution (stepd sends no traces)
	// Again marks a start that may have happened before (a parent's
	// nested start run again after a restart): an execution with the same
	// name and input is returned even when it has ended.
	Again bool
}

// parseInput checks an execution input.
func parseInput(text string) (any, error) {
	if text == "" {
		text = "{}"
	}
	if e := validate.CheckInputSize(text); e != nil {
		return nil, memberError(e)
	}
	v, err := value.ParseString(text)
	if err != nil {
		if msg, ok := jsonProblem(text); ok {
			return nil, fault.New(fault.ErrInvalidInput, "Invalid State Machine Execution Input: '%s'", msg)
		}
		return nil, fault.New(fault.ErrInvalidInput, "Invalid State Machine Execution Input: '%v'", err)
	}
	return v, nil
}
