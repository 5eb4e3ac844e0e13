package jsonata

import (
	"errors"
	"fmt"

	"github.com/stepd/stepd/value"
)

// The texts below are the expression-dependent parts of the causes AWS
// gives States.QueryEvaluationError; the interpreter prefixes them with
// "An error occurred while executing the state 'S' (entered at the event
// id #N). ". A field is named by the state field and, inside it, the JSON
// path of the member, joined by "/" ("Arguments/FunctionName").

// FieldPath returns the field name followed by the path of the failing
// member ("Output" and "result" give "Output/result").
func (e *TemplateError) FieldPath(field string) string {
	if e.Path == "" {
		return field
	}
	return field + "/" + e.Path
}

// Cause returns AWS's cause text for the failure, for a template that is
// the value of the given state field.
func (e *TemplateError) Cause(field string) string {
	where := e.FieldPath(field)
	switch {
	case e.Undefined:
		return undefinedCause(e.Expr, where)
	case errors.Is(e.Err, errUnsupported):
		return unsupportedCause(e.Expr, where)
	}
	return errorCause(e.Expr, where, e.Err)
}

// undefinedCause is the cause for an expression that returned nothing:
// "The JSONata expression '$x' specified for the field 'Output' returned
// nothing (undefined)."
func undefinedCause(expr, field string) string {
	return fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", expr, field)
}

// errorCause is the cause for an expression that failed: "The JSONata
// expression '$f()' specified for the field 'Output' threw an error during
// evaluation. T1006: Attempted to invoke a non-function".
func errorCause(expr, field string, err error) string {
	return fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' threw an error during evaluation. %s", expr, field, err.Error())
}

// unsupportedCause is the cause for an expression whose result has no JSON
// form (a function).
func unsupportedCause(expr, field string) string {
	return fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' returned an unsupported result type.", expr, field)
}

// TypeCause is the cause for a field whose expression returned a value of
// the wrong type, such as a non-array for a Map state's Items: "The JSONata
// expression '$v' specified for the field 'Items' returned an unexpected
// result type. Expected 'array', but was 'string' for value: \"x\"".
func TypeCause(expr, field, want string, v any) string {
	return fmt.Sprintf("The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected '%s', but was '%s' for value: %s",
		expr, field, want, value.KindOf(v), value.String(v))
}
