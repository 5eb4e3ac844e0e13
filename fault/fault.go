// Package fault holds the conditions that stepd's service reports to its
// callers: one sentinel error for each condition that a caller can tell
// apart (a state machine that does not exist, a task token that is not
// valid, ...), and Error, which carries a sentinel and the message that
// AWS answers with. A caller asks errors.Is(err, fault.ErrNoTask); a
// fault wrapped with %w keeps its condition.
//
// The sentinels are named for the condition, not for AWS's error code:
// the codes and HTTP statuses that the AWS JSON API answers with are the
// API's, in one table (package api, errors.go).
//
// It imports only the standard library, so that every layer may use it.
package fault

import (
	"errors"
	"fmt"
)

// The conditions, with the AWS error code that package api answers each
// with today.
var (
	// ErrValidation: a request member breaks a constraint
	// (ValidationException).
	ErrValidation = errors.New("validation error")
	// ErrInvalidARN: an ARN is malformed or names the wrong kind of
	// resource (InvalidArn).
	ErrInvalidARN = errors.New("invalid ARN")
	// ErrInvalidDefinition: a state machine definition is not valid
	// (InvalidDefinition).
	ErrInvalidDefinition = errors.New("invalid definition")
	// ErrInvalidName: a name breaks AWS's naming rules (InvalidName).
	ErrInvalidName = errors.New("invalid name")
	// ErrInvalidInput: an execution's input is not valid JSON or is too
	// large (InvalidExecutionInput).
	ErrInvalidInput = errors.New("invalid execution input")
	// ErrInvalidOutput: a task's output is not valid JSON (InvalidOutput).
	ErrInvalidOutput = errors.New("invalid output")
	// ErrInvalidLogging: a logging configuration is not valid
	// (InvalidLoggingConfiguration).
	ErrInvalidLogging = errors.New("invalid logging configuration")
	// ErrInvalidEncryption: an encryption configuration is not valid
	// (InvalidEncryptionConfiguration).
	ErrInvalidEncryption = errors.New("invalid encryption configuration")
	// ErrMissingParameter: a request lacks a member it needs
	// (MissingRequiredParameter).
	ErrMissingParameter = errors.New("missing required parameter")
	// ErrTooManyTags: a resource would have more tags than allowed
	// (TooManyTags).
	ErrTooManyTags = errors.New("too many tags")
	// ErrStateMachineNotFound: no such state machine, version or alias
	// (StateMachineDoesNotExist).
	ErrStateMachineNotFound = errors.New("state machine does not exist")
	// ErrExecutionNotFound: no such execution (ExecutionDoesNotExist).
	ErrExecutionNotFound = errors.New("execution does not exist")
	// ErrActivityNotFound: no such activity (ActivityDoesNotExist).
	ErrActivityNotFound = errors.New("activity does not exist")
	// ErrResourceNotFound: no such resource: an alias, a Map Run, a
	// resource to tag (ResourceNotFound).
	ErrResourceNotFound = errors.New("resource not found")
	// ErrStateMachineExists: a state machine of that name exists with
	// other settings (StateMachineAlreadyExists).
	ErrStateMachineExists = errors.New("state machine already exists")
	// ErrExecutionExists: an execution of that name exists with another
	// input, or has ended (ExecutionAlreadyExists).
	ErrExecutionExists = errors.New("execution already exists")
	// ErrNoTask: no task waits for a task token (TaskDoesNotExist).
	ErrNoTask = errors.New("task does not exist")
	// ErrTaskClosed: the task of a task token has ended: it timed out,
	// was answered, or its execution ended (TaskTimedOut).
	ErrTaskClosed = errors.New("task closed")
	// ErrBadToken: a task token or a page token is not valid
	// (InvalidToken).
	ErrBadToken = errors.New("invalid token")
	// ErrConflict: the request conflicts with the resource's state, e.g.
	// a version that an alias routes to (ConflictException).
	ErrConflict = errors.New("conflict")
	// ErrQuota: a quota would be exceeded, e.g. of versions or aliases
	// (ServiceQuotaExceededException).
	ErrQuota = errors.New("service quota exceeded")
	// ErrNotRedrivable: the execution cannot be redriven
	// (ExecutionNotRedrivable).
	ErrNotRedrivable = errors.New("execution not redrivable")
	// ErrTypeNotSupported: the operation does not apply to the state
	// machine's type (StateMachineTypeNotSupported).
	ErrTypeNotSupported = errors.New("state machine type not supported")
	// ErrUnsupported: the operation needs what this store does not have
	// (UnsupportedOperation).
	ErrUnsupported = errors.New("unsupported operation")
	// ErrUnavailable: the service cannot answer now but may in a moment:
	// its store cannot be reached, is restarting, or cannot write (a full
	// disk), or this node is taking its lease again. Clients retry it
	// (ServiceUnavailable, HTTP 503, which AWS's SDKs retry with
	// back-off).
	ErrUnavailable = errors.New("service unavailable")
)

// All lists every sentinel above, so that a table keyed by them (the
// API's) can be checked for completeness.
func All() []error {
	return []error{
		ErrValidation, ErrInvalidARN, ErrInvalidDefinition, ErrInvalidName, ErrInvalidInput,
		ErrInvalidOutput, ErrInvalidLogging, ErrInvalidEncryption, ErrMissingParameter, ErrTooManyTags,
		ErrStateMachineNotFound, ErrExecutionNotFound, ErrActivityNotFound, ErrResourceNotFound,
		ErrStateMachineExists, ErrExecutionExists, ErrNoTask, ErrTaskClosed, ErrBadToken,
		ErrConflict, ErrQuota, ErrNotRedrivable, ErrTypeNotSupported, ErrUnsupported, ErrUnavailable,
	}
}

// Error is a condition (one of the sentinels) with the message AWS
// answers with.
type Error struct {
	Kind    error
	Message string
}

// Error returns the message, as AWS words it (without the code).
func (e *Error) Error() string { return e.Message }

// Unwrap returns the condition, so that errors.Is(err, kind) holds.
func (e *Error) Unwrap() error { return e.Kind }

// New returns the condition kind with a message formatted as by
// fmt.Sprintf.
func New(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Of returns the message of err and its condition: those of the first
// *Error in its chain, or else err's text and a sentinel in the chain;
// kind is nil when err has no condition.
func Of(err error) (message string, kind error) {
	var e *Error
	if errors.As(err, &e) {
		return e.Message, e.Kind
	}
	for _, k := range All() {
		if errors.Is(err, k) {
			return err.Error(), k
		}
	}
	return "", nil
}
