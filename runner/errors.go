package runner

import "fmt"

// TEMPORARY until package fault is merged.
type kind string

var (
	ErrBadToken   = kind("InvalidToken")
	ErrNoTask     = kind("TaskDoesNotExist")
	ErrTaskClosed = kind("TaskTimedOut")
)

func (k kind) Error() string { return string(k) }

type kindError struct {
	k   kind
	msg string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.k }

func errorf(k kind, format string, args ...any) error {
	return &kindError{k, fmt.Sprintf(format, args...)}
}
