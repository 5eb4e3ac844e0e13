package value

import (
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// Append appends the compact JSON encoding of v to dst, as AWS Step Functions
// writes JSON: no insignificant space, '/' and non-ASCII characters written
// as they are, control characters escaped.
func Append(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, x...)
	case string:
		return AppendString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Append(dst, e)
		}
		return append(dst, ']')
	case *Object:
		dst = append(dst, '{')
		for i, k := range x.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			dst = Append(dst, x.vals[i])
		}
		return append(dst, '}')
	case int:
		return append(dst, Int(int64(x))...)
	case int64:
		return append(dst, Int(x)...)
	case float64:
		return append(dst, Float(x)...)
	}
	panic(fmt.Sprintf("value: cannot encode %T", v))
}

// AppendString appends s as a JSON string literal.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i += n
				start = i
				continue
			}
			i += n
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// String returns the compact JSON text of v.
func String(v any) string { return string(Append(nil, v)) }

// Indent returns v as JSON indented with two spaces, for people to read.
func Indent(v any) string { return string(appendIndent(nil, v, "")) }

func appendIndent(dst []byte, v any, pre string) []byte {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, "[\n"...)
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ",\n"...)
			}
			dst = append(dst, pre+"  "...)
			dst = appendIndent(dst, e, pre+"  ")
		}
		return append(dst, "\n"+pre+"]"...)
	case *Object:
		if x.Len() == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, "{\n"...)
		for i, k := range x.keys {
			if i > 0 {
				dst = append(dst, ",\n"...)
			}
			dst = append(dst, pre+"  "...)
			dst = AppendString(dst, k)
			dst = append(dst, ": "...)
			dst = appendIndent(dst, x.vals[i], pre+"  ")
		}
		return append(dst, "\n"+pre+"}"...)
	}
	return Append(dst, v)
}

// MarshalJSON lets an Object be encoded by encoding/json.
func (o *Object) MarshalJSON() ([]byte, error) { return Append(nil, o), nil }

// FromGo converts a value built from encoding/json-like Go types (map[string]any
// with sorted keys, []any, float64, string, bool, nil, int) into a value.
// Values already of this package's types pass through.
func FromGo(v any) any {
	switch x := v.(type) {
	case nil, bool, string, Number, *Object:
		return x
	case float64:
		return Float(x)
	case int:
		return Int(int64(x))
	case int64:
		return Int(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = FromGo(e)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := NewObject(len(keys))
		for _, k := range keys {
			o.Set(k, FromGo(x[k]))
		}
		return o
	}
	panic(fmt.Sprintf("value: cannot convert %T", v))
}

// EncodedLen returns the length of v's compact JSON encoding (what Append
// writes) without encoding it; it stops counting once the length exceeds
// limit (a negative limit counts everything), so a caller checking a size
// limit walks no more of a large value than it must.
func EncodedLen(v any, limit int) int {
	return encodedLen(v, 0, limit)
}

func encodedLen(v any, n, limit int) int {
	if limit >= 0 && n > limit {
		return n
	}
	switch x := v.(type) {
	case nil:
		return n + 4
	case bool:
		if x {
			return n + 4
		}
		return n + 5
	case Number:
		return n + len(x)
	case string:
		return n + stringLen(x)
	case []any:
		n += 2
		if len(x) > 1 {
			n += len(x) - 1
		}
		for _, e := range x {
			if n = encodedLen(e, n, limit); limit >= 0 && n > limit {
				return n
			}
		}
		return n
	case *Object:
		// An object remembers its length once counted in full: a state's
		// output that shares members with its input counts only what is
		// new.
		if size := x.size.Load() &^ watched; size > 0 {
			return n + int(size)
		}
		start := n
		n += 2
		if len(x.keys) > 1 {
			n += len(x.keys) - 1
		}
		for i, k := range x.keys {
			n += stringLen(k) + 1
			if n = encodedLen(x.vals[i], n, limit); limit >= 0 && n > limit {
				return n
			}
		}
		x.size.Or(int64(n - start)) // keeping the watched bit
		return n
	}
	return n + len(Append(nil, v))
}

// stringLen is the length of AppendString's literal for s.
func stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				n++
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				n += len("\ufffd")
			} else {
				n += size
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\', '\n', '\r', '\t', '\b', '\f':
			n += 2
		default:
			n += 6
		}
		i++
	}
	return n
}

// textPool holds the scratch buffers of AppendText.
var textPool = sync.Pool{New: func() any { return new([]byte) }}

// AppendText appends, as a JSON string literal, the compact JSON text of v:
// what AppendString(dst, String(v)) appends, without the intermediate
// string.
func AppendText(dst []byte, v any) []byte {
	bp := textPool.Get().(*[]byte)
	b := Append((*bp)[:0], v)
	if len(b) == 0 {
		dst = AppendString(dst, "")
	} else {
		dst = AppendString(dst, unsafe.String(&b[0], len(b)))
	}
	if cap(b) <= 64<<10 {
		*bp = b
		textPool.Put(bp)
	}
	return dst
}
