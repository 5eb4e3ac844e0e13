package intrinsic

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/value"
)

type function struct {
	name     string
	min, max int // max < 0: unbounded
	eval     func(c *Call, args []any) (any, error)
	// random replaces eval for the functions that draw random values.
	random func(c *Call, args []any, src Rand) (any, error)
}

var functions = map[string]*function{}

func def(name string, min, max int, eval func(c *Call, args []any) (any, error)) {
	functions[name] = &function{name: name, min: min, max: max, eval: eval}
}

func defRandom(name string, min, max int, eval func(c *Call, args []any, src Rand) (any, error)) {
	functions[name] = &function{name: name, min: min, max: max, random: eval}
}

// Limits AWS applies.
const (
	maxRange       = 1000  // items States.ArrayRange may produce
	maxBase64Input = 10000 // characters of input to Base64Encode/Decode
	maxHashInput   = 10000 // characters of input to States.Hash
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
	def("States.ArrayContains", 2, 2, arrayContains)
	def("States.ArrayRange", 3, 3, arrayRange)
	def("States.ArrayGetItem", 2, 2, arrayGetItem)
	def("States.ArrayLength", 1, 1, func(c *Call, a []any) (any, error) {
		arr, err := arrayArg(c, a, 0)
		if err != nil {
			return nil, err
		}
		return value.Int(int64(len(arr))), nil
	})
	def("States.ArrayUnique", 1, 1, arrayUnique)
	def("States.Base64Encode", 1, 1, base64Encode)
	def("States.Base64Decode", 1, 1, base64Decode)
	def("States.Hash", 2, 2, hashFn)
	def("States.JsonMerge", 3, 3, jsonMerge)
	defRandom("States.MathRandom", 2, 3, mathRandom)
	def("States.MathAdd", 2, 2, mathAdd)
	def("States.StringSplit", 2, 2, stringSplit)
	defRandom("States.UUID", 0, 0, func(c *Call, a []any, src Rand) (any, error) { return uuid.FromSource(src), nil })
}

// --- argument checks ---

func typeErr(c *Call, i int, want string, v any) error {
	return failf("The value of argument %d of %s must be %s, but was %s: %s", i+1, c.Name, want, value.KindOf(v), value.String(v))
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

// intArg returns an argument that must be an integer.
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

// roundedArg returns a number argument rounded to the nearest integer, as
// AWS rounds the non-integer arguments of ArrayPartition, ArrayRange,
// MathRandom and MathAdd. Values outside the 32-bit range are rejected.
func roundedArg(c *Call, a []any, i int) (int64, error) {
	n, ok := a[i].(value.Number)
	if !ok {
		return 0, typeErr(c, i, "a number", a[i])
	}
	f := roundHalfUp(n.Float64())
	if math.IsNaN(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, failf("The value of argument %d of %s must be an integer between %d and %d, but was %s", i+1, c.Name, math.MinInt32, math.MaxInt32, value.String(n))
	}
	return int64(f), nil
}

// roundHalfUp rounds to the nearest integer, halves towards positive
// infinity, as Java's Math.round does: 2.5 → 3, -2.5 → -2.
func roundHalfUp(f float64) float64 {
	fl := math.Floor(f)
	if f-fl >= 0.5 {
		return fl + 1
	}
	return fl
}

// utf16Len is the length of s as Java counts characters.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// --- the functions ---

func format(c *Call, a []any) (any, error) {
	tmpl, err := stringArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	if c.Args[0].Kind == ArgLiteral {
		// Use the literal as written, so that \{ and \} stay apart from the
		// {} placeholders.
		tmpl = c.Args[0].Raw
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
			if next < len(a) {
				writeJava(&b, a[next])
			}
			next++
			i++
		default:
			b.WriteByte(ch)
		}
	}
	if holes := next - 1; holes != len(a)-1 {
		return nil, failf("The number of arguments to %s (%d) does not match the number of placeholders {} in the format string (%d)", c.Name, len(a)-1, holes)
	}
	return b.String(), nil
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
		return nil, failf("The argument of %s is not valid JSON: %s", c.Name, s)
	}
	return normalizeNumbers(v), nil
}

// normalizeNumbers rewrites the numbers of freshly parsed JSON the way AWS
// re-serialises them: -0 becomes 0 and exponent forms are written out
// (2.5e1 becomes 25). v must not be shared yet.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case value.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return value.Int(i)
			}
		}
		if strings.ContainsAny(s, "eE") {
			return value.Float(x.Float64())
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
	n, err := roundedArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, failf("The chunk size argument of %s must be greater than 0, but was %s", c.Name, value.String(a[1]))
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

func arrayContains(c *Call, a []any) (any, error) {
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
}

func arrayRange(c *Call, a []any) (any, error) {
	var v [3]int64
	for i := range v {
		n, err := roundedArg(c, a, i)
		if err != nil {
			return nil, err
		}
		v[i] = n
	}
	start, end, step := v[0], v[1], v[2]
	if step == 0 {
		return nil, failf("The step argument of %s must not be 0", c.Name)
	}
	count := int64(0)
	if step > 0 && end >= start {
		count = (end-start)/step + 1
	} else if step < 0 && end <= start {
		count = (start-end)/-step + 1
	}
	if count > maxRange {
		return nil, failf("%s would produce %d items; at most %d are allowed", c.Name, count, maxRange)
	}
	out := make([]any, count)
	for i := range out {
		out[i] = value.Int(start + int64(i)*step)
	}
	return out, nil
}

func arrayGetItem(c *Call, a []any) (any, error) {
	arr, err := arrayArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	i, err := intArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= int64(len(arr)) {
		return nil, failf("The index %d is out of bounds for the array of length %d in %s", i, len(arr), c.Name)
	}
	return arr[i], nil
}

func arrayUnique(c *Call, a []any) (any, error) {
	arr, err := arrayArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(arr))
	seen := make(map[string]bool, len(arr))
	for _, e := range arr {
		// Equal values have equal keys, except numbers written
		// differently (1 and 1.0) and objects with reordered members:
		// fall back to Equal for those.
		k := value.String(e)
		if seen[k] {
			continue
		}
		seen[k] = true
		dup := false
		switch value.KindOf(e) {
		case value.KindNumber, value.KindArray, value.KindObject:
			for _, o := range out {
				if value.Equal(e, o) {
					dup = true
					break
				}
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out, nil
}

func base64Encode(c *Call, a []any) (any, error) {
	s, err := stringArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	if n := utf16Len(s); n > maxBase64Input {
		return nil, failf("The input to %s is %d characters long; at most %d are allowed", c.Name, n, maxBase64Input)
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// base64Decode decodes like a MIME decoder: characters outside the base64
// alphabet (line breaks, spaces) are skipped and padding is optional.
func base64Decode(c *Call, a []any) (any, error) {
	s, err := stringArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	if n := utf16Len(s); n > maxBase64Input {
		return nil, failf("The input to %s is %d characters long; at most %d are allowed", c.Name, n, maxBase64Input)
	}
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '=' {
			break
		}
		if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '+' || ch == '/' {
			clean = append(clean, ch)
		}
	}
	b, derr := base64.RawStdEncoding.DecodeString(string(clean))
	if derr != nil {
		return nil, failf("The input to %s is not valid base64: %s", c.Name, s)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

func hashFn(c *Call, a []any) (any, error) {
	data, ok := a[0].(string)
	if !ok {
		data = value.String(a[0])
	}
	alg, err := stringArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if n := utf16Len(data); n > maxHashInput {
		return nil, failf("The input to %s is %d characters long; at most %d are allowed", c.Name, n, maxHashInput)
	}
	sum, ok := Hash(data, alg)
	if !ok {
		return nil, failf("The hash algorithm '%s' of %s is not supported; use MD5, SHA-1, SHA-256, SHA-384 or SHA-512", alg, c.Name)
	}
	return sum, nil
}

// Hash returns the hex digest of data with one of the algorithms AWS
// offers (MD5, SHA-1, SHA-256, SHA-384, SHA-512); ok is false for any
// other name. JSONata's $hash uses it too.
func Hash(data, alg string) (sum string, ok bool) {
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
		return "", false
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), true
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
		return nil, failf("%s supports only shallow merging: its third argument must be false", c.Name)
	}
	out := x.Clone()
	for k, v := range y.All {
		out.Set(k, v)
	}
	return out, nil
}

// mathRandom returns an integer in [start, end). With a seed the result
// depends only on the three arguments.
func mathRandom(c *Call, a []any, src Rand) (any, error) {
	lo, err := roundedArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	hi, err := roundedArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	if hi <= lo {
		return nil, failf("The end argument of %s (%d) must be greater than its start argument (%d)", c.Name, hi, lo)
	}
	var r *mrand.Rand
	if len(a) == 3 {
		seed, err := roundedArg(c, a, 2)
		if err != nil {
			return nil, err
		}
		r = mrand.New(mrand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	} else {
		r = mrand.New(src)
	}
	return value.Int(lo + r.Int64N(hi-lo)), nil
}

func mathAdd(c *Call, a []any) (any, error) {
	x, err := roundedArg(c, a, 0)
	if err != nil {
		return nil, err
	}
	y, err := roundedArg(c, a, 1)
	if err != nil {
		return nil, err
	}
	return value.Int(x + y), nil
}

// stringSplit splits at every character of the delimiter string and drops
// empty parts.
func stringSplit(c *Call, a []any) (any, error) {
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
}
