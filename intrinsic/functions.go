package intrinsic

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"
	"strings"

	"github.com/stepd/stepd/value"
)

type function struct {
	name     string
	min, max int // max < 0: unbounded
	eval     func(c *Call, args []any) (any, error)
}

var functions = map[string]*function{}

func def(name string, min, max int, eval func(c *Call, args []any) (any, error)) {
	functions[name] = &function{name: name, min: min, max: max, eval: eval}
}

// Limits AWS applies.
const (
	maxRange        = 1000
	maxBase64Input  = 10000
	maxHashInput    = 10000
	maxFormatResult = 256 * 1024
)

func init() {
	def("States.Format", 1, -1, format)
	def("States.StringToJson", 1, 1, stringToJSON)
	def("States.JsonToString", 1, 1, func(c *Call, a []any) (any, error) { return value.String(a[0]), nil })
	def("States.Array", 0, -1, func(c *Call, a []any) (any, error) {
		out := make([]any, len(a))
		copy(out, a)
		return out, nil
	})
	def("States.ArrayPartition", 2, 2, arrayPartition)
	def("States.ArrayContains", 2, 2, func(c *Call, a []any) (any, error) {
		arr, err := arrayArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		for _, e := range arr {
			if value.Equal(e, a[1]) {
				return true, nil
			}
		}
		return false, nil
	})
	def("States.ArrayRange", 3, 3, arrayRange)
	def("States.ArrayGetItem", 2, 2, func(c *Call, a []any) (any, error) {
		arr, err := arrayArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		i, err := intArg(c, a, 1)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(arr)) {
			return nil, failf("The index %d is out of bounds for the array of length %d in %s", i, len(arr), c.text)
		}
		return arr[i], nil
	})
	def("States.ArrayLength", 1, 1, func(c *Call, a []any) (any, error) {
		arr, err := arrayArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		return value.Int(int64(len(arr))), nil
	})
	def("States.ArrayUnique", 1, 1, func(c *Call, a []any) (any, error) {
		arr, err := arrayArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(arr))
	next:
		for _, e := range arr {
			for _, o := range out {
				if value.Equal(e, o) {
					continue next
				}
			}
			out = append(out, e)
		}
		return out, nil
	})
	def("States.Base64Encode", 1, 1, func(c *Call, a []any) (any, error) {
		s, err := stringArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		if len(s) > maxBase64Input {
			return nil, failf("The input to %s must be at most %d characters", c.Name, maxBase64Input)
		}
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	})
	def("States.Base64Decode", 1, 1, func(c *Call, a []any) (any, error) {
		s, err := stringArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		if len(s) > maxBase64Input {
			return nil, failf("The input to %s must be at most %d characters", c.Name, maxBase64Input)
		}
		b, derr := base64.StdEncoding.DecodeString(s)
		if derr != nil {
			return nil, failf("The input to %s is not valid base64: %s", c.Name, s)
		}
		return string(b), nil
	})
	def("States.Hash", 2, 2, hashFn)
	def("States.JsonMerge", 3, 3, jsonMerge)
	def("States.MathRandom", 2, 3, mathRandom)
	def("States.MathAdd", 2, 2, func(c *Call, a []any) (any, error) {
		x, err := numArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		y, err := numArg(c, a, 1)
		if err != nil {
			return nil, err
		}
		return value.Float(javaRound(x) + javaRound(y)), nil
	})
	def("States.StringSplit", 2, 2, func(c *Call, a []any) (any, error) {
		s, err := stringArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		d, err := stringArg(c, a, 1)
		if err != nil {
			return nil, err
		}
		parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(d, r) })
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil
	})
	def("States.UUID", 0, 0, func(c *Call, a []any) (any, error) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
	})
}

// javaRound rounds half up, as Java's Math.round does.
func javaRound(f float64) float64 { return math.Floor(f + 0.5) }

func argType(v any) string {
	switch value.KindOf(v) {
	case value.KindNull:
		return "null"
	case value.KindBool:
		return "boolean"
	case value.KindNumber:
		return "number"
	case value.KindString:
		return "string"
	case value.KindArray:
		return "array"
	}
	return "object"
}

func typeErr(c *Call, i int, want string, v any) error {
	return failf("The value of argument %d of %s must be %s, but was %s: %s", i+1, c.Name, want, argType(v), value.String(v))
}

func stringArg(c *Call, a []any, i int) (string, error) {
	s, ok := a[i].(string)
	if !ok {
		return "", typeErr(c, i, "a string", a[i])
	}
	return s, nil
}

func arrayArg(c *Call, a []any, i int) ([]any, error) {
	arr, ok := a[i].([]any)
	if !ok {
		return nil, typeErr(c, i, "an array", a[i])
	}
	return arr, nil
}

func numArg(c *Call, a []any, i int) (float64, error) {
	n, ok := a[i].(value.Number)
	if !ok {
		return 0, typeErr(c, i, "a number", a[i])
	}
	return n.Float64(), nil
}

func intArg(c *Call, a []any, i int) (int64, error) {
	n, ok := a[i].(value.Number)
	if !ok {
		return 0, typeErr(c, i, "an integer", a[i])
	}
	v, exact := n.Int64()
	if !exact {
		return 0, typeErr(c, i, "an integer", a[i])
	}
	return v, nil
}

func format(c *Call, a []any) (any, error) {
	var tmpl string
	if c.Args[0].Kind == ArgLiteral {
		if _, ok := a[0].(string); !ok {
			return nil, typeErr(c, 0, "a string", a[0])
		}
		tmpl = c.Args[0].Raw
	} else {
		s, err := stringArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		tmpl = s
	}
	var b strings.Builder
	next := 1
	for i := 0; i < len(tmpl); i++ {
		ch := tmpl[i]
		switch {
		case ch == '\\' && i+1 < len(tmpl):
			b.WriteByte(tmpl[i+1])
			i++
		case ch == '{' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			if next >= len(a) {
				return nil, failf("The number of arguments to %s does not match the number of placeholders in the format string", c.Name)
			}
			writeJava(&b, a[next])
			next++
			i++
		default:
			b.WriteByte(ch)
		}
	}
	if next != len(a) {
		return nil, failf("The number of arguments to %s does not match the number of placeholders in the format string", c.Name)
	}
	return b.String(), nil
}

func stringToJSON(c *Call, a []any) (any, error) {
	s, err := stringArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	v, perr := value.ParseString(s)
	if perr != nil {
		return nil, failf("The input to %s is not valid JSON: %s", c.Name, s)
	}
	return normalizeNumbers(v), nil
}

// normalizeNumbers rewrites numbers as AWS re-serialises parsed JSON:
// integers without sign of zero or exponent.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case value.Number:
		if i, ok := x.Int64(); ok && !strings.ContainsAny(string(x), ".eE") {
			return value.Int(i)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case *value.Object:
		for i := 0; i < x.Len(); i++ {
			k, e := x.At(i)
			x.Set(k, normalizeNumbers(e))
		}
	}
	return v
}

func arrayPartition(c *Call, a []any) (any, error) {
	arr, err := arrayArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	n, err := intArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, failf("The chunk size argument of %s must be greater than 0, but was %d", c.Name, n)
	}
	out := make([]any, 0, (int64(len(arr))+n-1)/n)
	for i := int64(0); i < int64(len(arr)); i += n {
		end := min(i+n, int64(len(arr)))
		chunk := make([]any, end-i)
		copy(chunk, arr[i:end])
		out = append(out, chunk)
	}
	return out, nil
}

func arrayRange(c *Call, a []any) (any, error) {
	var v [3]int64
	for i := range v {
		n, err := intArg(c, a, i)
		if err != nil {
			return nil, err
		}
		v[i] = n
	}
	start, end, step := v[0], v[1], v[2]
	if step == 0 {
		return nil, failf("The step argument of %s must not be 0", c.Name)
	}
	var out []any
	for x := start; (step > 0 && x <= end) || (step < 0 && x >= end); x += step {
		if len(out) == maxRange {
			return nil, failf("%s produced more than %d items", c.Name, maxRange)
		}
		out = append(out, value.Int(x))
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func hashFn(c *Call, a []any) (any, error) {
	data, ok := a[0].(string)
	if !ok {
		data = value.String(a[0])
	}
	if len(data) > maxHashInput {
		return nil, failf("The input to %s must be at most %d characters", c.Name, maxHashInput)
	}
	alg, err := stringArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return nil, failf("%s: unsupported hash algorithm '%s' (supported: MD5, SHA-1, SHA-256, SHA-384, SHA-512)", c.Name, alg)
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func jsonMerge(c *Call, a []any) (any, error) {
	x, ok := a[0].(*value.Object)
	if !ok {
		return nil, typeErr(c, 0, "an object", a[0])
	}
	y, ok := a[1].(*value.Object)
	if !ok {
		return nil, typeErr(c, 1, "an object", a[1])
	}
	deep, ok := a[2].(bool)
	if !ok {
		return nil, typeErr(c, 2, "a boolean", a[2])
	}
	if deep {
		return nil, failf("%s does not support deep merging: the third argument must be false", c.Name)
	}
	out := x.Clone()
	for k, v := range y.All {
		out.Set(k, v)
	}
	return out, nil
}

func mathRandom(c *Call, a []any) (any, error) {
	lo, err := intArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	hi, err := intArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if hi <= lo {
		return nil, failf("The end argument of %s must be greater than the start argument", c.Name)
	}
	var r *mrand.Rand
	if len(a) == 3 {
		seed, err := intArg(c, a, 2)
		if err != nil {
			return nil, err
		}
		r = mrand.New(mrand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	} else {
		r = mrand.New(mrand.NewPCG(mrand.Uint64(), mrand.Uint64()))
	}
	return value.Int(lo + r.Int64N(hi-lo)), nil
}

// writeJava writes v as the Java runtime behind AWS formats values in
// States.Format: strings unquoted, objects as {k=v, ...}, arrays as [a, b].
func writeJava(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		b.WriteString(x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJava(b, e)
		}
		b.WriteByte(']')
	case *value.Object:
		b.WriteByte('{')
		for i := 0; i < x.Len(); i++ {
			k, e := x.At(i)
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			writeJava(b, e)
		}
		b.WriteByte('}')
	default:
		b.WriteString(value.String(v))
	}
}
