package service

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// jsonProblem describes the first fault of a text that is not JSON in the
// words of the Jackson parser that AWS reads an execution's input with,
// without Jackson's location suffix, as StartExecution answers it
// (recorded: "Unrecognized token 'not': was expecting (JSON String,
// Number, Array, Object or token 'null', 'true' or 'false')" and
// "Unexpected character (”' (code 39)): was expecting double-quote to
// start field name"). ok is false when the text is JSON as far as this
// reading goes (trailing content after a whole value, which Jackson
// leaves to its caller).
func jsonProblem(text string) (msg string, ok bool) {
	r := &jsonReader{s: text}
	r.space()
	if r.i >= len(r.s) {
		return "Invalid execution input.", true
	}
	r.value()
	return r.msg, r.msg != ""
}

// jsonReader walks a text as Jackson does and keeps the first fault.
type jsonReader struct {
	s   string
	i   int
	msg string
}

const expectedValue = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

func (r *jsonReader) fail(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
	}
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// char names the character at i as Jackson does: ('x' (code 120)), or
// (CTRL-CHAR, code 10) for a control character.
func (r *jsonReader) char() string {
	c, _ := utf8.DecodeRuneInString(r.s[r.i:])
	if c < 32 {
		return fmt.Sprintf("(CTRL-CHAR, code %d)", c)
	}
	return fmt.Sprintf("('%c' (code %d))", c, c)
}

// value reads one value; the reader stands after it, or r.msg is set.
func (r *jsonReader) value() {
	if r.i >= len(r.s) {
		r.fail("Unexpected end-of-input: expected a value %s", expectedValue)
		return
	}
	switch c := r.s[r.i]; {
	case c == '{':
		r.object()
	case c == '[':
		r.array()
	case c == '"':
		r.i++
		r.str()
	case c == '-' || c >= '0' && c <= '9':
		r.number()
	case c == ']' || c == '}' || c == ',' || c == ':':
		r.fail("Unexpected character %s: expected a value %s", r.char(), expectedValue)
	default:
		tok := r.token()
		if tok != "true" && tok != "false" && tok != "null" {
			r.fail("Unrecognized token '%s': was expecting %s", tok, expectedValue)
		}
	}
}

// token reads a run of identifier characters (at least one character), as
// Jackson quotes an unrecognized token.
func (r *jsonReader) token() string {
	start := r.i
	for r.i < len(r.s) {
		c, n := utf8.DecodeRuneInString(r.s[r.i:])
		if r.i > start && !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_' && c != '$' {
			break
		}
		r.i += n
	}
	return r.s[start:r.i]
}

func (r *jsonReader) object() {
	r.i++ // {
	r.space()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return
	}
	for r.msg == "" {
		r.space()
		if r.i >= len(r.s) {
			r.fail("Unexpected end-of-input: expected close marker for Object")
			return
		}
		if r.s[r.i] != '"' {
			r.fail("Unexpected character %s: was expecting double-quote to start field name", r.char())
			return
		}
		r.i++
		if r.str(); r.msg != "" {
			return
		}
		r.space()
		if r.i >= len(r.s) {
			r.fail("Unexpected end-of-input: expected close marker for Object")
			return
		}
		if r.s[r.i] != ':' {
			r.fail("Unexpected character %s: was expecting a colon to separate field name and value", r.char())
			return
		}
		r.i++
		r.space()
		if r.value(); r.msg != "" {
			return
		}
		r.space()
		switch {
		case r.i >= len(r.s):
			r.fail("Unexpected end-of-input: expected close marker for Object")
		case r.s[r.i] == '}':
			r.i++
			return
		case r.s[r.i] == ',':
			r.i++
		default:
			r.fail("Unexpected character %s: was expecting comma to separate Object entries", r.char())
		}
	}
}

func (r *jsonReader) array() {
	r.i++ // [
	r.space()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		return
	}
	for r.msg == "" {
		r.space()
		if r.i >= len(r.s) {
			r.fail("Unexpected end-of-input: expected close marker for Array")
			return
		}
		if r.value(); r.msg != "" {
			return
		}
		r.space()
		switch {
		case r.i >= len(r.s):
			r.fail("Unexpected end-of-input: expected close marker for Array")
		case r.s[r.i] == ']':
			r.i++
			return
		case r.s[r.i] == ',':
			r.i++
		default:
			r.fail("Unexpected character %s: was expecting comma to separate Array entries", r.char())
		}
	}
}

// str reads a string's content and its closing quote.
func (r *jsonReader) str() {
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return
		case c == '\\':
			r.i++
			if r.i >= len(r.s) {
				break
			}
			e := r.s[r.i]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i++
			case 'u':
				r.i++
				for k := 0; k < 4; k++ {
					if r.i >= len(r.s) {
						break
					}
					if !isHex(r.s[r.i]) {
						r.fail("Unexpected character %s: expected a hex-digit for character escape sequence", r.char())
						return
					}
					r.i++
				}
			default:
				r.fail("Unrecognized character escape %s", r.char())
				return
			}
		case c < 32:
			r.fail("Illegal unquoted character %s: has to be escaped using backslash to be included in string value", r.char())
			return
		default:
			r.i++
		}
	}
	r.fail("Unexpected end-of-input: was expecting closing quote for a string value")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads a number: [-] digits [. digits] [e [+-] digits].
func (r *jsonReader) number() {
	if r.s[r.i] == '-' {
		r.i++
		if r.i >= len(r.s) || !isDigit(r.s[r.i]) {
			if r.i >= len(r.s) {
				r.fail("Unexpected end-of-input in numeric value")
			} else {
				r.fail("Unexpected character %s in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value", r.char())
			}
			return
		}
	}
	if r.s[r.i] == '0' && r.i+1 < len(r.s) && isDigit(r.s[r.i+1]) {
		r.fail("Invalid numeric value: Leading zeroes not allowed")
		return
	}
	r.digits()
	if r.i < len(r.s) && r.s[r.i] == '.' {
		r.i++
		if r.i >= len(r.s) || !isDigit(r.s[r.i]) {
			r.fractionFault("Decimal point not followed by a digit")
			return
		}
		r.digits()
	}
	if r.i < len(r.s) && (r.s[r.i] == 'e' || r.s[r.i] == 'E') {
		r.i++
		if r.i < len(r.s) && (r.s[r.i] == '+' || r.s[r.i] == '-') {
			r.i++
		}
		if r.i >= len(r.s) || !isDigit(r.s[r.i]) {
			r.fractionFault("Exponent indicator not followed by a digit")
			return
		}
		r.digits()
	}
}

func (r *jsonReader) fractionFault(what string) {
	if r.i >= len(r.s) {
		r.fail("Unexpected end-of-input in numeric value")
		return
	}
	r.fail("Unexpected character %s in numeric value: %s", r.char(), what)
}

func (r *jsonReader) digits() {
	for r.i < len(r.s) && isDigit(r.s[r.i]) {
		r.i++
	}
}
