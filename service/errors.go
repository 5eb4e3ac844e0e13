package service

import (
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/validate"
)

// memberError is the fault for a request member that breaks one of
// package validate's checks (a name, a definition's or an input's size):
// validate answers with AWS's code, which this maps, with its message.
func memberError(e *validate.MemberError) error {
	kind := fault.ErrValidation // ValidationException: a length
	switch e.Code {
	case "InvalidName":
		kind = fault.ErrInvalidName
	case "InvalidExecutionInput":
		kind = fault.ErrInvalidInput
	}
	return fault.New(kind, "%s", e.Message)
}
