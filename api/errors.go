package api

import (
	"errors"

	"github.com/stepd/stepd/fault"
)

// wireError is how the API answers a condition: AWS's error code (the
// answer's __type and X-Amzn-Errortype) and the HTTP status.
type wireError struct {
	code   string
	status int
}

// wireErrors is the one table of the answers to the conditions of package
// fault; every condition has one (TestWireErrors).
var wireErrors = map[error]wireError{
	fault.ErrValidation:           {"ValidationException", 400},
	fault.ErrInvalidARN:           {"InvalidArn", 400},
	fault.ErrInvalidDefinition:    {"InvalidDefinition", 400},
	fault.ErrInvalidName:          {"InvalidName", 400},
	fault.ErrInvalidInput:         {"InvalidExecutionInput", 400},
	fault.ErrInvalidOutput:        {"InvalidOutput", 400},
	fault.ErrInvalidLogging:       {"InvalidLoggingConfiguration", 400},
	fault.ErrInvalidEncryption:    {"InvalidEncryptionConfiguration", 400},
	fault.ErrMissingParameter:     {"MissingRequiredParameter", 400},
	fault.ErrTooManyTags:          {"TooManyTags", 400},
	fault.ErrStateMachineNotFound: {"StateMachineDoesNotExist", 400},
	fault.ErrExecutionNotFound:    {"ExecutionDoesNotExist", 400},
	fault.ErrActivityNotFound:     {"ActivityDoesNotExist", 400},
	fault.ErrResourceNotFound:     {"ResourceNotFound", 400},
	fault.ErrStateMachineExists:   {"StateMachineAlreadyExists", 400},
	fault.ErrExecutionExists:      {"ExecutionAlreadyExists", 400},
	fault.ErrNoTask:               {"TaskDoesNotExist", 400},
	fault.ErrTaskClosed:           {"TaskTimedOut", 400},
	fault.ErrBadToken:             {"InvalidToken", 400},
	fault.ErrConflict:             {"ConflictException", 400},
	fault.ErrQuota:                {"ServiceQuotaExceededException", 400},
	fault.ErrNotRedrivable:        {"ExecutionNotRedrivable", 400},
	fault.ErrTypeNotSupported:     {"StateMachineTypeNotSupported", 400},
	fault.ErrUnsupported:          {"UnsupportedOperation", 400},
	fault.ErrUnavailable:          {"ServiceUnavailable", 503},
}

// AWSError returns the AWS error code and message that the API answers
// err with; ok is false when err has no condition of package fault (the
// API answers it as an InternalFailure).
func AWSError(err error) (code, message string, ok bool) {
	message, kind := fault.Of(err)
	w, ok := wireErrors[kind]
	return w.code, message, ok
}

// answerOf is the answer to err: its own (an *apiError of the protocol),
// its condition's, or an InternalFailure.
func answerOf(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if message, kind := fault.Of(err); kind != nil {
		if w, ok := wireErrors[kind]; ok {
			return &apiError{status: w.status, code: w.code, message: message}
		}
	}
	return &apiError{status: 500, code: "InternalFailure", message: err.Error()}
}
