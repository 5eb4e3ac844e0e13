package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

const startExecutionResource = "arn:aws:states:::states:startExecution"

// withNested serves arn:aws:states:::states:startExecution (fire and
// forget, .sync, .sync:2 and .waitForTaskToken) by starting executions of
// this service; every other resource goes to inv.
func (s *Service) withNested(parent *store.Execution, inv task.Invoker) task.Invoker {
	return &nestedInvoker{s: s, parent: parent, inv: inv}
}

// nestedInvoker is withNested's. It tells the engine how each request is
// answered (task.HowAnswers): a nested execution waits, and the rest as
// inv answers them.
type nestedInvoker struct {
	s      *Service
	parent *store.Execution
	inv    task.Invoker
}

func (n *nestedInvoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	if strings.HasPrefix(req.Resource, startExecutionResource) {
		return n.s.startNested(ctx, n.parent, req)
	}
	if n.inv == nil {
		return engine.NoHandler(req)
	}
	return n.inv.Invoke(ctx, req)
}

// Immediate reports whether req is answered at once: by inv, or with an
// error when there is none.
func (n *nestedInvoker) Immediate(req *task.Request) bool {
	if strings.HasPrefix(req.Resource, startExecutionResource) {
		return false
	}
	return n.inv == nil || task.IsImmediate(n.inv, req)
}

// Waits reports whether answering req waits: a nested execution does.
func (n *nestedInvoker) Waits(req *task.Request) bool {
	if strings.HasPrefix(req.Resource, startExecutionResource) {
		return true
	}
	return n.inv != nil && task.HowAnswers(n.inv, req) == task.Waits
}

// NestedRequest reads a startExecution task's request: the child's state
// machine ARN, its name ("" when not given) and its input (an object, or
// JSON text read as JSON, as given; {} when not given). A request
// without StateMachineArn gives the task's failure.
func NestedRequest(req *task.Request) (smARN, name string, input any, fail *task.Result) {
	params, _ := req.Input.(*value.Object)
	arnV, _ := params.Get("StateMachineArn")
	smARN, _ = arnV.(string)
	if smARN == "" {
		return "", "", nil, &task.Result{Error: "States.Runtime", Cause: "the parameter StateMachineArn is required for " + req.Resource}
	}
	// As on AWS, a child is associated with its parent only when the
	// definition passes "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":
	// "$$.Execution.Id".
	input = value.NewObject(0)
	if in, ok := params.Get("Input"); ok {
		input = in
		if text, isStr := in.(string); isStr {
			if v, err := value.ParseString(text); err == nil {
				input = v
			}
		}
	}
	nv, _ := params.Get("Name")
	name, _ = nv.(string)
	return smARN, name, input, nil
}

// IsNested reports whether req starts an execution of a state machine
// (arn:aws:states:::states:startExecution, with any pattern).
func IsNested(req *task.Request) bool { return strings.HasPrefix(req.Resource, startExecutionResource) }

func (s *Service) startNested(ctx context.Context, parent *store.Execution, req *task.Request) task.Result {
	smARN, nameText, input, fail := NestedRequest(req)
	if fail != nil {
		return *fail
	}
	again := false
	if nameText == "" {
		// Deterministic, so that a parent resumed after a restart finds the
		// child it had started instead of starting another, even when the
		// child ended before the parent could record it.
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d", parent.ARN, req.StateName, req.Attempt)))
		nameText, again = hex.EncodeToString(sum[:16]), true
	}
	var e *store.Execution
	err := untilAvailable(ctx, func() (err error) {
		e, err = s.StartExecution(ctx, StartInput{StateMachineARN: smARN, Name: nameText, Input: value.String(input), Again: again})
		return err
	})
	if err != nil {
		if message, kind := fault.Of(err); startErrors[kind] != "" {
			return task.Result{Error: startErrors[kind], Cause: message}
		}
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	if !req.Pattern.Job() {
		return NestedResult(e, req.Pattern)
	}
	started := value.ObjectOf("ExecutionArn", e.ARN, "StartDate", epochMillis(e))
	if req.Submit != nil && req.Submitted == nil {
		// As for AWS's other .sync integrations, the start call's answer is
		// recorded (TaskSubmitted) while the parent waits for the child.
		req.Submit(started)
	}
	var done *store.Execution
	err = untilAvailable(ctx, func() (err error) {
		done, err = s.Wait(ctx, e.ARN)
		return err
	})
	if err != nil {
		if !s.run.Stopping() {
			// The parent's task was cancelled (the parent stopped or a
			// sibling failed): stop the child too.
			_, _ = s.StopExecution(context.Background(), e.ARN, "States.Aborted", "the parent execution's task was cancelled")
		}
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	return NestedResult(done, req.Pattern)
}

// untilAvailable calls fn again, with back-off, while it fails because
// the store is unavailable (an outage, a full disk), until ctx ends: a
// task does not fail for an outage, it waits for the store.
func untilAvailable(ctx context.Context, fn func() error) error {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := fn()
		if err == nil || !errors.Is(err, fault.ErrUnavailable) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// startErrors name the task errors of a startExecution that
// StartExecution refused, for each condition it refuses with:
// StepFunctions.<AWS's error code>Exception, as the integration's errors
// are named (ValidationException too, as stepd has always named it).
var startErrors = map[error]string{
	fault.ErrExecutionExists:      "StepFunctions.ExecutionAlreadyExistsException",
	fault.ErrInvalidARN:           "StepFunctions.InvalidArnException",
	fault.ErrInvalidDefinition:    "StepFunctions.InvalidDefinitionException",
	fault.ErrInvalidInput:         "StepFunctions.InvalidExecutionInputException",
	fault.ErrInvalidName:          "StepFunctions.InvalidNameException",
	fault.ErrStateMachineNotFound: "StepFunctions.StateMachineDoesNotExistException",
	fault.ErrValidation:           "StepFunctions.ValidationExceptionException",
}

func epochMillis(e *store.Execution) any {
	return value.Int(e.Started.UnixMilli())
}

// NestedResult is what a startExecution task of a parent gives for its
// child e: for .sync and .sync:2, the child's DescribeExecution (its
// Input and Output JSON text with .sync, JSON values with .sync:2) and
// whether it succeeded; for request-response, the StartExecution answer.
// stepd run, which runs a template's state machines without a service,
// answers as the service does.
func NestedResult(e *store.Execution, p task.Pattern) task.Result {
	if !p.Job() {
		return task.Result{Output: value.ObjectOf("ExecutionArn", e.ARN, "StartDate", epochMillis(e))}
	}
	desc := describeValue(e, p == task.Sync2)
	if e.Status != "SUCCEEDED" {
		return task.Result{Error: "States.TaskFailed", Cause: value.String(desc)}
	}
	return task.Result{Output: desc}
}

// describeValue is the .sync result: the child's DescribeExecution, with
// Input and Output as JSON text (.sync) or JSON values (.sync:2).
func describeValue(e *store.Execution, jsonValues bool) *value.Object {
	o := value.NewObject(14)
	o.Set("ExecutionArn", e.ARN)
	o.Set("Input", jsonOrText(e.Input, jsonValues))
	o.Set("InputDetails", value.ObjectOf("Included", true))
	o.Set("Name", e.Name)
	if e.Status == "SUCCEEDED" {
		o.Set("Output", jsonOrText(e.Output, jsonValues))
		o.Set("OutputDetails", value.ObjectOf("Included", true))
	}
	if e.Error != "" {
		o.Set("Error", e.Error)
	}
	if e.Cause != "" {
		o.Set("Cause", e.Cause)
	}
	o.Set("RedriveCount", value.Int(0))
	o.Set("RedriveStatus", "NOT_REDRIVABLE")
	o.Set("StartDate", value.Int(e.Started.UnixMilli()))
	o.Set("StateMachineArn", e.StateMachineARN)
	o.Set("Status", e.Status)
	if !e.Stopped.IsZero() {
		o.Set("StopDate", value.Int(e.Stopped.UnixMilli()))
	}
	return o
}

func jsonOrText(text string, parse bool) any {
	if !parse {
		return text
	}
	v, err := value.ParseString(text)
	if err != nil {
		return text
	}
	return v
}
