package postgres

import (
	"strings"
	"unicode/utf8"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// PostgreSQL's text cannot hold NUL, nor bytes that are not UTF-8 in a
// UTF-8 database, and refuses the whole write that carries one. The
// strings that reach the store as they were given, and may hold either
// (an execution's or a step's error and cause, as a task or
// SendTaskFailure gave them; a version's or an alias's description; an
// execution's trace header), are kept escaped: toText and fromText.
// JSON (inputs, outputs, definitions) holds NUL only escaped (\u0000),
// and names and ARNs with one are refused by the API.
//
// A string that holds no NUL, no byte outside UTF-8 and no U+FFFF (a
// noncharacter, which no text is expected to hold) is kept as it is.
// Any other is kept as U+FFFF followed by the string, where each NUL,
// each byte that is not part of a valid UTF-8 sequence and each byte of
// a U+FFFF is written as U+FFFF and the byte's two lower-case hex
// digits. A stored value that begins with U+FFFF is thus always escaped,
// and fromText(toText(s)) == s for every s.

// textEscape is U+FFFF, the escape.
const textEscape = "\uffff"

const hexDigits = "0123456789abcdef"

// toText returns s as a PostgreSQL text value can hold it.
func toText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(textEscape)
	escapeByte := func(c byte) {
		b.WriteString(textEscape)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1, r == 0, r == '\uffff':
			for j := i; j < i+n; j++ {
				escapeByte(s[j])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) || strings.Contains(s, textEscape)
}

// fromText returns the string that toText made t of. A value that is not
// escaped, or whose escapes are malformed (no value toText wrote), is
// returned as it is.
func fromText(t string) string {
	body, ok := strings.CutPrefix(t, textEscape)
	if !ok {
		return t
	}
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		i := strings.Index(body, textEscape)
		if i < 0 {
			out = append(out, body...)
			break
		}
		out = append(out, body[:i]...)
		body = body[i+len(textEscape):]
		if len(body) < 2 {
			return t
		}
		hi, lo := strings.IndexByte(hexDigits, body[0]), strings.IndexByte(hexDigits, body[1])
		if hi < 0 || lo < 0 {
			return t
		}
		out = append(out, byte(hi<<4|lo))
		body = body[2:]
	}
	return string(out)
}

// The reads of the escaped fields.

func execFromText(e *store.Execution) *store.Execution {
	if e != nil {
		e.Error, e.Cause = fromText(e.Error), fromText(e.Cause)
	}
	return e
}

func scanExec(row sqlrow.Scanner) (*store.Execution, error) {
	e, err := sqlrow.ScanExec(row)
	return execFromText(e), err
}

func scanExecKeyed(row sqlrow.Scanner) (sqlrow.Keyed[*store.Execution], error) {
	k, err := sqlrow.ScanExecKeyed(row)
	execFromText(k.V)
	return k, err
}

func scanStep(row sqlrow.Scanner, arn string) (*store.Step, error) {
	st, err := sqlrow.ScanStep(row, arn)
	if st != nil {
		st.Error, st.Cause = fromText(st.Error), fromText(st.Cause)
	}
	return st, err
}

func scanChild(row sqlrow.Scanner) (sqlrow.Keyed[*store.ChildExecution], error) {
	k, err := sqlrow.ScanChild(row)
	if k.V != nil {
		k.V.Error, k.V.Cause = fromText(k.V.Error), fromText(k.V.Cause)
	}
	return k, err
}

func scanVersion(row sqlrow.Scanner) (*store.Version, error) {
	v, err := sqlrow.ScanVersion(row)
	if v != nil {
		v.Description = fromText(v.Description)
	}
	return v, err
}

func scanVersionKeyed(row sqlrow.Scanner) (sqlrow.Keyed[*store.Version], error) {
	k, err := sqlrow.ScanVersionKeyed(row)
	if k.V != nil {
		k.V.Description = fromText(k.V.Description)
	}
	return k, err
}

func scanAlias(row sqlrow.Scanner) (*store.Alias, error) {
	a, err := sqlrow.ScanAlias(row)
	if a != nil {
		a.Description = fromText(a.Description)
	}
	return a, err
}

func scanRef(row sqlrow.Scanner) (*store.ExecutionRef, error) {
	r, err := sqlrow.ScanRef(row)
	if r != nil {
		r.TraceHeader = fromText(r.TraceHeader)
	}
	return r, err
}

// versionValues are sqlrow.VersionValues with the description escaped.
func versionValues(v *store.Version) []any {
	c := *v
	c.Description = toText(c.Description)
	return sqlrow.VersionValues(&c)
}
