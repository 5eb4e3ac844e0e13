package interp

import "fmt"

// Failure is an ASL error value: an error name such as "States.Timeout" or
// a task's own error type, and a cause text.
type Failure struct {
	Error string
	Cause string
	// evaluation marks a JSONata evaluation failure, which AWS records with
	// an EvaluationFailed event naming the field (location).
	evaluation bool
	location   string
}

func (f *Failure) String() string {
	if f.Cause == "" {
		return f.Error
	}
	return f.Error + ": " + f.Cause
}

// The predefined ASL error names.
const (
	ErrALL                     = "States.ALL"
	ErrRuntime                 = "States.Runtime"
	ErrTimeout                 = "States.Timeout"
	ErrHeartbeatTimeout        = "States.HeartbeatTimeout"
	ErrTaskFailed              = "States.TaskFailed"
	ErrDataLimitExceeded       = "States.DataLimitExceeded"
	ErrNoChoiceMatched         = "States.NoChoiceMatched"
	ErrIntrinsicFailure        = "States.IntrinsicFailure"
	ErrParameterPathFailure    = "States.ParameterPathFailure"
	ErrResultPathMatchFailure  = "States.ResultPathMatchFailure"
	ErrQueryEvaluationError    = "States.QueryEvaluationError"
	ErrExceedToleratedFailures = "States.ExceedToleratedFailureThreshold"
	ErrBranchFailed            = "States.BranchFailed"
	ErrItemReaderFailed        = "States.ItemReaderFailed"
)

// runtimeFailure builds a States.Runtime failure with AWS's cause prefix
// naming the state and the event id at which it was entered.
func runtimeFailure(state string, entered int64, format string, args ...any) *Failure {
	return &Failure{Error: ErrRuntime, Cause: statePrefix(state, entered) + fmt.Sprintf(format, args...)}
}

func statePrefix(state string, entered int64) string {
	return fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). ", state, entered)
}

// matches reports whether an ErrorEquals list matches the error name.
// States.Runtime is terminal: nothing matches it, not even an explicit
// States.Runtime entry.
func matches(list []string, name string) bool {
	if name == ErrRuntime {
		return false // never retried or caught, even when listed
	}
	for _, e := range list {
		if e == name {
			return true
		}
		if e == ErrALL && name != ErrRuntime {
			return true
		}
		if e == ErrTaskFailed && isTaskError(name) {
			return true
		}
	}
	return false
}

// isTaskError reports whether name is an error raised by a task itself
// (anything not predefined, or States.TaskFailed), which States.TaskFailed
// matches.
func isTaskError(name string) bool {
	switch name {
	case ErrRuntime, ErrTimeout, ErrHeartbeatTimeout, ErrDataLimitExceeded, ErrNoChoiceMatched,
		ErrIntrinsicFailure, ErrParameterPathFailure, ErrResultPathMatchFailure,
		ErrQueryEvaluationError, ErrExceedToleratedFailures, ErrBranchFailed, ErrItemReaderFailed:
		return false
	}
	return true
}
