package validate

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxNameLength is AWS's limit on the names of state machines, executions,
// activities and aliases.
const MaxNameLength = 80

// MemberError is a request member that breaks AWS's rules (a name, a
// definition's size), with the error code and message AWS answers with.
type MemberError struct {
	Code    string // InvalidName, or ValidationException for the length
	Message string
}

func (e *MemberError) Error() string { return e.Code + ": " + e.Message }

// CheckName applies AWS's rules to the name of a state machine, execution,
// activity or alias given in the request member field ("name"): 1 to 80
// characters, none of them white space, a bracket (< > { } [ ]), a wildcard
// (? *), one of " # % \ ^ | ~ ` $ & , ; : /, a control character
// (U+0000–001F, U+007F–009F), U+FFFE, U+FFFF, or a byte sequence that is not
// UTF-8. Anything else is accepted, as AWS accepts it: dots, @, +, non-ASCII
// letters.
func CheckName(field, name string) *MemberError {
	n := utf8.RuneCountInString(name)
	if n == 0 {
		return &MemberError{Code: "ValidationException", Message: fmt.Sprintf("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", field)}
	}
	if n > MaxNameLength {
		return &MemberError{Code: "ValidationException", Message: fmt.Sprintf("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", field, MaxNameLength)}
	}
	for i, r := range name {
		if !nameRune(r) || r == utf8.RuneError && isBadByte(name, i) {
			return &MemberError{Code: "InvalidName", Message: fmt.Sprintf("Invalid Name: '%s'", name)}
		}
	}
	return nil
}

// isBadByte reports whether the RuneError at i stands for a byte that is
// not UTF-8 (rather than an encoded U+FFFD).
func isBadByte(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 1
}

func nameRune(r rune) bool {
	switch {
	case r <= 0x1f, r >= 0x7f && r <= 0x9f, r == 0xfffe, r == 0xffff:
		return false
	case unicode.IsSpace(r):
		return false
	}
	switch r {
	case '<', '>', '{', '}', '[', ']', '?', '*', '"', '#', '%', '\\', '^', '|', '~', '`', '$', '&', ',', ';', ':', '/':
		return false
	}
	return true
}

// MaxDefinitionLength is AWS's limit on a definition: 1,048,576
// characters.
const MaxDefinitionLength = 1 << 20

// CheckDefinitionLength applies AWS's size limit to a definition given in
// the request member field ("definition").
func CheckDefinitionLength(field, def string) *MemberError {
	if len(def) <= MaxDefinitionLength || utf8.RuneCountInString(def) <= MaxDefinitionLength {
		return nil
	}
	return &MemberError{Code: "ValidationException", Message: fmt.Sprintf("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", field, MaxDefinitionLength)}
}

// MaxPayload is AWS's limit on an execution's input and output, and on a
// state's: 262,144 bytes.
const MaxPayload = 256 * 1024

// CheckInputSize applies AWS's limit to an execution input (JSON text).
func CheckInputSize(input string) *MemberError {
	if len(input) <= MaxPayload {
		return nil
	}
	return &MemberError{Code: "InvalidExecutionInput", Message: fmt.Sprintf("Invalid execution input: the input exceeds the maximum size of %d bytes", MaxPayload)}
}
