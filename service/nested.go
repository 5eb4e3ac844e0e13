package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/internal/uuid"
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
	// "$$.Execution.Id". An absent or null Input starts the child with {},
	// as AWS does.
	input = value.NewObject(0)
	if in, ok := params.Get("Input"); ok && in != nil {
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
		if message, kind := fault.Of(err); startErrors[kind].name != "" {
			return task.Result{Error: startErrors[kind].name, Cause: fmt.Sprintf(
				"%s (Service: AWSStepFunctions; Status Code: 400; Error Code: %s; Request ID: %s; Proxy: null)",
				message, startErrors[kind].code, uuid.New())}
		}
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	started := startedValue(e)
	if !req.Pattern.Job() {
		return task.Result{Output: started}
	}
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
	return nestedResult(done, s.Redrive(ctx, done), req.Pattern)
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
// are named (ValidationException too, as stepd has always named it), and
// the API's error code, which the cause names as the AWS SDK for Java
// does.
var startErrors = map[error]struct{ name, code string }{
	fault.ErrExecutionExists:      {"StepFunctions.ExecutionAlreadyExistsException", "ExecutionAlreadyExists"},
	fault.ErrInvalidARN:           {"StepFunctions.InvalidArnException", "InvalidArn"},
	fault.ErrInvalidDefinition:    {"StepFunctions.InvalidDefinitionException", "InvalidDefinition"},
	fault.ErrInvalidInput:         {"StepFunctions.InvalidExecutionInputException", "InvalidExecutionInput"},
	fault.ErrInvalidName:          {"StepFunctions.InvalidNameException", "InvalidName"},
	fault.ErrStateMachineNotFound: {"StepFunctions.StateMachineDoesNotExistException", "StateMachineDoesNotExist"},
	fault.ErrValidation:           {"StepFunctions.ValidationExceptionException", "ValidationException"},
}

// startedValue is what states:startExecution answers (the result of a
// request-response call, the TaskSubmitted output of .sync): StartExecution's
// answer with the HTTP metadata of the AWS SDK for Java, members by name,
// as AWS records it.
func startedValue(e *store.Execution) *value.Object {
	reqID := uuid.New()
	// The body StartExecution answers with, whose length the headers give:
	// the start date in seconds, as the SDK for Java writes a double.
	secs := strconv.FormatFloat(float64(e.Started.UnixMilli())/1000, 'E', -1, 64)
	secs = strings.Replace(strings.Replace(secs, "E+0", "E", 1), "E+", "E", 1)
	body := `{"executionArn":` + value.String(e.ARN) + `,"startDate":` + secs + `}`
	length := strconv.Itoa(len(body))
	date := time.Now().UTC().Format(http.TimeFormat)
	all := value.ObjectOf(
		"x-amzn-RequestId", []any{reqID},
		"connection", []any{"keep-alive"},
		"Content-Length", []any{length},
		"Date", []any{date},
		"Content-Type", []any{"application/x-amz-json-1.0"})
	headers := value.ObjectOf(
		"connection", "keep-alive",
		"Content-Length", length,
		"Content-Type", "application/x-amz-json-1.0",
		"Date", date,
		"x-amzn-RequestId", reqID)
	meta := value.ObjectOf("AllHttpHeaders", all, "HttpHeaders", headers, "HttpStatusCode", value.Int(200))
	return value.ObjectOf("ExecutionArn", e.ARN, "SdkHttpMetadata", meta,
		"SdkResponseMetadata", value.ObjectOf("RequestId", reqID), "StartDate", value.Int(e.Started.UnixMilli()))
}

// NestedResult is what a startExecution task of a parent gives for its
// child e when no service runs the child (stepd run serves a template's
// other state machines so): for .sync and .sync:2, the child's
// DescribeExecution (its Input and Output JSON text with .sync, JSON
// values with .sync:2) and whether it succeeded; for request-response,
// the StartExecution answer. The service answers the same (startNested).
func NestedResult(e *store.Execution, p task.Pattern) task.Result {
	if !p.Job() {
		return task.Result{Output: startedValue(e)}
	}
	r := RedriveInfo{Status: Redrivable}
	switch e.Status {
	case "SUCCEEDED":
		r = RedriveInfo{Status: NotRedrivable, Reason: reasonSucceeded}
	case "RUNNING":
		r = RedriveInfo{Status: NotRedrivable, Reason: reasonRunning}
	}
	if e.Type == "EXPRESS" {
		r = RedriveInfo{}
	}
	return nestedResult(e, r, p)
}

// nestedResult is the result of a .sync or .sync:2 task whose child e
// ended, with its redrive status r.
func nestedResult(e *store.Execution, r RedriveInfo, p task.Pattern) task.Result {
	desc := describeValue(e, r, p == task.Sync2)
	if e.Status != "SUCCEEDED" {
		return task.Result{Error: "States.TaskFailed", Cause: value.String(desc)}
	}
	return task.Result{Output: desc}
}

// describeValue is the .sync result: the child's DescribeExecution, with
// Input and Output as JSON text (.sync) or JSON values (.sync:2), its
// members by name (AWS's order) and its redrive status as DescribeExecution
// gives it.
func describeValue(e *store.Execution, r RedriveInfo, jsonValues bool) *value.Object {
	o := value.NewObject(16)
	if e.Cause != "" {
		o.Set("Cause", e.Cause)
	}
	if e.Error != "" {
		o.Set("Error", e.Error)
	}
	o.Set("ExecutionArn", e.ARN)
	o.Set("Input", jsonOrText(e.Input, jsonValues))
	o.Set("InputDetails", value.ObjectOf("Included", true))
	o.Set("Name", e.Name)
	if e.Status == "SUCCEEDED" {
		o.Set("Output", jsonOrText(e.Output, jsonValues))
		o.Set("OutputDetails", value.ObjectOf("Included", true))
	}
	if r.Status != "" {
		o.Set("RedriveCount", value.Int(int64(r.Count)))
		o.Set("RedriveStatus", r.Status)
		if r.Status == NotRedrivable && r.Reason != "" {
			o.Set("RedriveStatusReason", r.Reason)
		}
	}
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
