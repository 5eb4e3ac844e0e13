// Package task defines how the interpreter's Task states reach the code that
// does the work: a Request describing one invocation (its integration
// Pattern, its Context object built on first read, Submit and Submitted for
// a .sync job that outlives a restart), its Result, and the Invoker
// interface that serves it, with InvokerFunc; Immediate and ImmediateFunc
// for invokers that answer at once on the engine's goroutine, Waiting and
// WaitingFunc for those that wait, and HowAnswers, which tells them apart;
// ErrCancelled, the cause of a withdrawn task's
// context; Partial for invokers that serve only some requests, and Router,
// which composes invokers by resource.
//
// It is the contract only: it does no I/O. The backends are packages
// beside it, one per backend: mock (mock configurations), command (local
// programs), endpoint (an HTTP URL or Lambda Invoke API endpoint), httptask
// (the HTTP Task), lambdasdk (the real AWS Lambda function, through the AWS
// SDK), awssdk (AWS services, called over HTTP from their API models),
// s3folder (local folders standing in for S3 buckets) and registry (the
// --config file that wires them); lambdashape holds the Lambda shapes they
// share (no I/O), awsmodel the AWS API models.
//
// It imports nothing of stepd's and must not: the interpreter and the
// engine build on it, so it must not import them or anything above them
// (service, api, cmd/stepd), nor any of its backends.
package task

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Request is one invocation of a Task state.
type Request struct {
	// Resource is the state's Resource field, e.g.
	// "arn:aws:states:::lambda:invoke" or
	// "arn:aws:lambda:us-east-1:111111111111:function:fn".
	Resource string
	// Pattern is the integration pattern the Resource names, as the
	// interpreter parsed it: what is decided by the pattern (an activity
	// offered to its workers, a .sync job's Submit, a callback's token) is
	// decided by this field, never by reading Resource again.
	Pattern Pattern
	// StateName is the name of the Task state.
	StateName string
	// StateMachineName is the name of the state machine (used to pick a
	// mock test case).
	StateMachineName string
	// TestCase names the mock test case, if any.
	TestCase string
	// Input is the effective input: the result of Parameters/Arguments, or
	// the state input after InputPath when there is none. A JSON value.
	Input any
	// TaskToken is set for .waitForTaskToken integrations.
	TaskToken string
	// Attempt counts invocations of this state in this execution, from 0.
	// Mocks use it to select a response.
	Attempt int
	// Context is the Context object ($$) at invocation, a JSON value. Read
	// it with ContextObject: it is nil while ContextFrom has not built it.
	Context any
	// ContextFrom, when set, builds the Context object when it is first
	// read, so that an invocation that never reads it does not pay for it.
	// An engine calls ContextObject before handing the request to another
	// goroutine.
	ContextFrom interface{ ContextObject() any }
	// Submitted is, for a .sync integration dispatched again (after a
	// restart), what the call that started its job returned, as recorded
	// by TaskSubmitted: the invoker goes on waiting for that job instead
	// of starting another. Nil on a first dispatch.
	Submitted any
	// Submit, set by the engine for a .sync integration, records what the
	// call that started the job returned (a TaskSubmitted event, committed
	// with the execution) while the invoker goes on waiting for the job to
	// end. It does not wait for the record to be committed.
	Submit func(output any)
	// RawBody, when not nil, is the Body of an S3 PutObject as it is,
	// where a Task's Body is its JSON text: a Distributed Map's
	// ResultWriter writes its JSON Lines files so.
	RawBody []byte
}

// Pattern is a Task's service integration pattern: how its state waits for
// the work it asks for.
type Pattern uint8

// The integration patterns.
const (
	// RequestResponse: the call's answer is the task's result. Lambda
	// function ARNs, resources of no pattern and requests built for other
	// uses (a Map's ItemReader) are request-response. The zero value.
	RequestResponse Pattern = iota
	// Sync (".sync"): the call starts a job and the task waits for it to
	// end; its result is the job as the service describes it then.
	Sync
	// Sync2 (".sync:2"): as Sync, the result's JSON text fields given as
	// JSON values.
	Sync2
	// WaitForTaskToken (".waitForTaskToken"): the call hands the task's
	// token on and the task waits for the token to come back.
	WaitForTaskToken
	// Activity: the resource is an activity ARN; a worker takes the task
	// and answers it by its token.
	Activity
)

// String names the pattern: "request-response", ".sync", ".sync:2",
// ".waitForTaskToken" or "activity".
func (p Pattern) String() string {
	switch p {
	case RequestResponse:
		return "request-response"
	case Activity:
		return "activity"
	}
	if s := p.Suffix(); s != "" {
		return s
	}
	return "Pattern(" + strconv.Itoa(int(p)) + ")"
}

// Suffix is what ends a resource of the pattern: ".sync", ".sync:2" or
// ".waitForTaskToken"; empty for RequestResponse and Activity.
func (p Pattern) Suffix() string {
	switch p {
	case Sync:
		return ".sync"
	case Sync2:
		return ".sync:2"
	case WaitForTaskToken:
		return ".waitForTaskToken"
	}
	return ""
}

// Job reports whether the pattern starts a job and waits for it to end
// (Sync or Sync2).
func (p Pattern) Job() bool { return p == Sync || p == Sync2 }

// ErrCancelled is the cause (context.Cause) of an invocation's context
// when the state no longer needs its result: the state timed out, a
// sibling branch failed, the execution was stopped. An invoker that
// started a job elsewhere stops it then; a context that ends for another
// cause (the server shuts down) leaves the job running, to be waited for
// again when the execution resumes.
var ErrCancelled = errors.New("the task was cancelled: its state no longer needs its result")

// ContextObject returns the Context object ($$) at invocation: Context,
// built by ContextFrom on the first call. Not safe for concurrent use
// before that first call.
func (r *Request) ContextObject() any {
	if r.Context == nil && r.ContextFrom != nil {
		r.Context = r.ContextFrom.ContextObject()
	}
	return r.Context
}

// Result is what an invocation produced.
type Result struct {
	// Output is the integration result (a JSON value) when Error is empty.
	Output any
	// Error and Cause are set when the task failed. Error is the ASL error
	// name (e.g. "States.TaskFailed", "Lambda.ServiceException"); Cause is
	// text (often JSON text).
	Error string
	Cause string
	// Delay is simulated run time: the engine delivers this result only
	// after Delay has passed on its clock (so a virtual clock can skip it
	// while timeouts still apply). Real invokers leave it zero and simply
	// take the time.
	Delay time.Duration
	// Submitted, when not nil, is the output of a TaskSubmitted event the
	// engine records before the result. An invoker that answers a
	// .waitForTaskToken or .sync task in one go (a mock configuration
	// answers for the whole task) sets it: AWS records TaskSubmitted for
	// the call that handed the token on or started the job before the
	// task's success or failure. The engine's driver turns it into a
	// TaskSubmitted input of its own; it is not journalled with the result.
	Submitted any
}

// Failed reports whether the result is a task failure.
func (r Result) Failed() bool { return r.Error != "" }

// NoError is the Error of a failure that names no error: a
// SendTaskFailure without an error. AWS records its TaskFailed (and the
// execution's failure) without an error, and a catcher sees "Error": null.
// It is a string no ASL error name is, so that it goes through the
// journal and between nodes as any error name does.
const NoError = "\x00"

// Invoker serves Task states. Invoke blocks until the task has a result or
// ctx is done. It must be safe for concurrent use, and must not use req,
// nor ctx, once it has returned: the engine may call it on its own
// goroutine, with a request and a context it reuses for a later task (see
// Waiting).
type Invoker interface {
	Invoke(ctx context.Context, req *Request) Result
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, req *Request) Result

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, req *Request) Result { return f(ctx, req) }

// Immediate is implemented by invokers that answer some requests at once,
// in process: without blocking, waiting for I/O or calling back into the
// engine (an in-process function, a mock configuration). The engine calls
// Invoke for such a request on its own goroutine, in the order the
// interpreter asked for the tasks, instead of starting a goroutine for each
// invocation. An invoker that may block must report false. Such an invoker
// must not keep req, nor anything it points to that may change (its
// Context), once Invoke has returned: the interpreter reuses the request's
// memory for a later task.
type Immediate interface {
	Invoker
	Immediate(req *Request) bool
}

// IsImmediate reports whether inv answers req at once (see Immediate).
func IsImmediate(inv Invoker, req *Request) bool {
	im, ok := inv.(Immediate)
	return ok && im.Immediate(req)
}

// Waiting is implemented by invokers that know which requests make them
// wait: for I/O, another process, a job, or another execution. The engine
// calls Invoke for such a request on a goroutine of its own, so that the
// execution's timers, stops and other branches go on meanwhile.
//
// An invoker that is neither Immediate nor Waiting for a request (a plain
// InvokerFunc) is called first on the engine's own goroutine, as an
// Immediate one is, with the Context object built only if it asks for it.
// If the call has not returned within a millisecond or two, the engine
// goes on without it on another goroutine, and calls that resource's
// handler on goroutines of their own from then on: a function that answers
// at once costs no goroutine, and one that waits costs the execution a
// millisecond or two, once.
type Waiting interface {
	Invoker
	Waits(req *Request) bool
}

// Answer is how an invoker answers a request, as far as it tells: see
// HowAnswers.
type Answer uint8

// The answers of HowAnswers.
const (
	// Unknown: the invoker does not tell (see Waiting).
	Unknown Answer = iota
	// AtOnce: the invoker is Immediate for the request.
	AtOnce
	// Waits: the invoker is Waiting for the request.
	Waits
)

// HowAnswers tells how inv answers req: AtOnce when it is Immediate for
// req, Waits when it is Waiting for req, Unknown otherwise.
func HowAnswers(inv Invoker, req *Request) Answer {
	if IsImmediate(inv, req) {
		return AtOnce
	}
	if w, ok := inv.(Waiting); ok && w.Waits(req) {
		return Waits
	}
	return Unknown
}

// WaitingFunc adapts a function that may wait (for I/O, a process, a job)
// to Waiting: the engine calls it on a goroutine of its own.
type WaitingFunc func(ctx context.Context, req *Request) Result

// Invoke calls f.
func (f WaitingFunc) Invoke(ctx context.Context, req *Request) Result { return f(ctx, req) }

// Waits reports true: f may wait for every request.
func (f WaitingFunc) Waits(*Request) bool { return true }

// ImmediateFunc adapts a function that answers at once, without blocking,
// to Immediate.
type ImmediateFunc func(ctx context.Context, req *Request) Result

// Invoke calls f.
func (f ImmediateFunc) Invoke(ctx context.Context, req *Request) Result { return f(ctx, req) }

// Immediate reports true: f answers every request at once.
func (f ImmediateFunc) Immediate(*Request) bool { return true }
