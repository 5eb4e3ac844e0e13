package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bytes AWS refuses (docs/compatibility.md, "Bytes AWS refuses"). A
// request body is JSON, which is UTF-8: a body with bytes outside UTF-8 is
// refused whole, with a SerializationException that names the member
// holding them, before any member is read (Go's decoder would replace
// them with U+FFFD). A name or an ARN that holds NUL (\u0000) or a lone
// UTF-16 surrogate escape (\ud800 without its pair) is refused with the
// member's own error, InvalidName or InvalidArn: AWS's naming rules
// exclude the control characters, and no ARN holds one. Anywhere else a
// lone surrogate escape is read as U+FFFD, as the JSON parsers of AWS's
// services read it (inferred: AWS documents no other answer), and NUL
// is kept as it is: \u0000 in an execution's input is valid JSON.

const nul = "NUL (\\u0000)"

// checkBytes refuses a request body that holds bytes outside UTF-8
// anywhere, or NUL or a lone surrogate escape in a name or an ARN.
func checkBytes(body []byte) error {
	valid := utf8.Valid(body)
	if valid && !bytes.Contains(body, []byte(`\u`)) {
		return nil // the common case: nothing to look at
	}
	member, raw, val, ok := firstOdd(body)
	if !ok {
		if !valid {
			// The body is not JSON either; say where its first bad byte is.
			return &apiError{status: 400, code: "SerializationException", message: fmt.Sprintf(
				"the request body is not UTF-8: a byte outside UTF-8 at offset %d", badOffset(body))}
		}
		return nil // malformed JSON, which decode refuses
	}
	if !utf8.Valid(raw) {
		return &apiError{status: 400, code: "SerializationException", message: fmt.Sprintf(
			"Invalid UTF-8 in the request body: member '%s' holds a byte outside UTF-8 (at offset %d of the body)", member, badOffset(body))}
	}
	what := nul
	if strings.IndexByte(val, 0) < 0 {
		what = "a lone UTF-16 surrogate escape"
	}
	key := lastKey(member)
	switch {
	case key == "name" && what == nul:
		// AWS's own answer to a control character in a name.
		return &apiError{status: 400, code: "InvalidName", message: "Invalid Name: " + quote(val)}
	case key == "name":
		return &apiError{status: 400, code: "InvalidName", message: fmt.Sprintf("Invalid Name: %s: member '%s' holds %s, which a name must not", quote(val), member, what)}
	case strings.HasSuffix(strings.ToLower(key), "arn"):
		return &apiError{status: 400, code: "InvalidArn", message: fmt.Sprintf("Invalid Arn: %s: member '%s' holds %s, which no ARN does", quote(val), member, what)}
	}
	return nil
}

// lastKey is the last key of a member's path (tags[0].key: key).
func lastKey(member string) string {
	if i := strings.LastIndexAny(member, ".]"); i >= 0 {
		return member[i+1:]
	}
	return member
}

// badOffset is the offset of the first byte of b outside UTF-8.
func badOffset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// firstOdd walks the JSON body and returns the first string (a key or a
// value) that holds a byte outside UTF-8 or, when it is a name's or an
// ARN's value, NUL or a lone surrogate escape: its member's path, its raw
// bytes and its value. ok is false when there is none, or the body is
// not JSON.
func firstOdd(body []byte) (member string, raw []byte, val string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type level struct {
		array bool
		key   string // an object's current key
		index int    // an array's current index
		isKey bool   // an object's next string is a key
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.array {
				fmt.Fprintf(&b, "[%d]", l.index)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(l.key)
		}
		return b.String()
	}
	// A value ends: the next string of its object is a key, its array's
	// index moves on.
	ended := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].isKey = true
			}
		}
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil { // the end of the body, or not JSON
			return "", nil, "", false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, level{isKey: true})
			case '[':
				stack = append(stack, level{array: true})
			default:
				stack = stack[:len(stack)-1]
				ended()
			}
		case string:
			raw := body[start:dec.InputOffset()]
			n := len(stack)
			if n > 0 && !stack[n-1].array && stack[n-1].isKey {
				stack[n-1].key, stack[n-1].isKey = t, false
				if !utf8.Valid(raw) {
					return path(), raw, t, true
				}
				continue
			}
			p := path()
			if !utf8.Valid(raw) {
				return p, raw, t, true
			}
			key := lastKey(p)
			if key == "name" || strings.HasSuffix(strings.ToLower(key), "arn") {
				if strings.IndexByte(t, 0) >= 0 || loneSurrogate(raw) {
					return p, raw, t, true
				}
			}
			ended()
		default:
			ended()
		}
	}
}

// loneSurrogate reports whether a raw JSON string holds a \u escape of a
// UTF-16 surrogate that is not half of a pair.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escape of one character: \\ is not the start of \u
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			continue
		}
		i += 5
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return true // a low half first
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo, ok := hex4(raw[i+3:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
