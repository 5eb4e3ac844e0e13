// Package lambdashape holds the shapes of AWS Lambda that the Lambda task
// backends share: function references (Ref), a Lambda task's request (Call:
// the function ARN as Resource, or arn:aws:states:::lambda:invoke), the
// Invoke response that lambda:invoke returns, Lambda's own failures, and the
// decoding of a handler's answer (a JSON result, or a Lambda-style or
// ASL-style error object). It does no I/O.
//
// It imports only task (and value, internal/uuid), and must not import the
// backends that share it, the engine or anything above.
package lambdashape

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// The Lambda integrations, as the mocks and the registry serve them:
//
//   - "arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]"
//     as Resource: the event is the effective input, the task result is the
//     function's return value;
//   - "arn:aws:states:::lambda:invoke": the function is the FunctionName
//     parameter, the event the Payload parameter (absent or null: {}; a
//     string: JSON text that Lambda parses), the task result the Invoke
//     response (ExecutedVersion, [LogResult], Payload, SdkHttpMetadata,
//     SdkResponseMetadata, StatusCode).
//
// A function error fails the task under both forms with the function's
// errorType as the error and the Lambda error JSON as the cause.

var (
	directLambdaRE = regexp.MustCompile(`^arn:[a-z0-9-]+:lambda:[a-z0-9-]+:[0-9]{12}:function:[A-Za-z0-9_-]+(:[A-Za-z0-9$_-]+)?$`)
	invokeLambdaRE = regexp.MustCompile(`^arn:[a-z0-9-]+:states:::lambda:invoke$`)
	funcNameRE     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	qualifierRE    = regexp.MustCompile(`^[A-Za-z0-9$_-]+$`)
)

// Ref is a Lambda function reference as the Lambda API accepts it: a
// name, a partial ARN (account:function:name) or an ARN, each optionally
// qualified by a version or alias.
type Ref struct {
	Region, Account, Name, Qualifier string
}

// ParseRef parses a function reference; it reports false for text that is
// not one.
func ParseRef(s string) (Ref, bool) {
	var r Ref
	parts := strings.Split(s, ":")
	switch {
	case parts[0] == "arn" && (len(parts) == 7 || len(parts) == 8) && parts[2] == "lambda" && parts[5] == "function":
		r.Region, r.Account, r.Name = parts[3], parts[4], parts[6]
		if len(parts) == 8 {
			r.Qualifier = parts[7]
		}
	case (len(parts) == 3 || len(parts) == 4) && parts[1] == "function":
		r.Account, r.Name = parts[0], parts[2]
		if len(parts) == 4 {
			r.Qualifier = parts[3]
		}
	case len(parts) == 1 || len(parts) == 2:
		r.Name = parts[0]
		if len(parts) == 2 {
			r.Qualifier = parts[1]
		}
	default:
		return r, false
	}
	if !funcNameRE.MatchString(r.Name) || (r.Qualifier != "" && !qualifierRE.MatchString(r.Qualifier)) {
		return r, false
	}
	return r, true
}

// Matches reports whether the function m (mocked or registered) serves the
// reference r: same name, and the same region, account and qualifier where
// both give one. An unqualified m serves every version and alias.
func (m Ref) Matches(r Ref) bool {
	same := func(a, b string) bool { return a == "" || b == "" || a == b }
	q := r.Qualifier
	if q == "" {
		q = "$LATEST"
	}
	return m.Name == r.Name && same(m.Region, r.Region) && same(m.Account, r.Account) &&
		(m.Qualifier == "" || m.Qualifier == q)
}

// Call is a Lambda task's request.
type Call struct {
	Function  string       // as named by the task
	Direct    bool         // Resource is the function ARN
	Qualifier string       // the version or alias, from the name or the Qualifier parameter
	Err       *task.Result // the request is invalid
	input     any          // direct: the event; lambda:invoke: the Payload parameter
	logTail   bool
	region    string
	account   string
}

// CallOf recognises a Lambda task.
func CallOf(req *task.Request) (Call, bool) {
	c := Call{region: "us-east-1", account: "111111111111"}
	if ref, ok := accountOf(req.ContextObject()); ok {
		c.region, c.account = ref.Region, ref.Account
	}
	switch {
	case directLambdaRE.MatchString(req.Resource):
		c.Function, c.Direct, c.input = req.Resource, true, req.Input
	case invokeLambdaRE.MatchString(req.Resource):
		in, _ := req.Input.(*value.Object)
		fn, _ := in.Get("FunctionName")
		c.Function, _ = fn.(string)
		if c.Function == "" {
			c.Err = &task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the state %q calls %s without a FunctionName string parameter", req.StateName, req.Resource)}
			return c, true
		}
		c.input, _ = in.Get("Payload")
		if lt, _ := in.Get("LogType"); lt == "Tail" {
			c.logTail = true
		}
		if q, ok := in.Get("Qualifier"); ok {
			c.Qualifier, _ = q.(string)
		}
	default:
		return c, false
	}
	if ref, ok := ParseRef(c.Function); ok {
		if ref.Qualifier != "" {
			c.Qualifier = ref.Qualifier
		}
		if ref.Region != "" {
			c.region = ref.Region
		}
		if ref.Account != "" {
			c.account = ref.Account
		}
	}
	return c, true
}

// accountOf finds the region and account of the execution in the Context
// object ($$.Execution.Id).
func accountOf(ctx any) (Ref, bool) {
	o, _ := ctx.(*value.Object)
	ex, _ := o.Get("Execution")
	eo, _ := ex.(*value.Object)
	id, _ := eo.Get("Id")
	s, _ := id.(string)
	parts := strings.Split(s, ":")
	if len(parts) < 5 || parts[0] != "arn" || parts[3] == "" || parts[4] == "" {
		return Ref{}, false
	}
	return Ref{Region: parts[3], Account: parts[4]}, true
}

// Event is the event the function receives, or the failure Lambda reports
// for a Payload it cannot parse.
func (c Call) Event() (any, *task.Result) {
	if c.Direct {
		return c.input, nil
	}
	switch p := c.input.(type) {
	case nil:
		// An absent or null Payload invokes the function with {}.
		return value.NewObject(0), nil
	case string:
		// A string Payload is the request body: Lambda parses it.
		v, err := value.ParseString(p)
		if err != nil {
			return nil, &task.Result{Error: "Lambda.InvalidRequestContentException", Cause: fmt.Sprintf(
				"Could not parse request body into json: Could not parse payload into json: %v (Service: AWSLambda; Status Code: 400; Error Code: InvalidRequestContentException; Request ID: %s; Proxy: null)",
				err, uuid.New())}
		}
		return v, nil
	}
	return c.input, nil
}

func (c Call) executedVersion() string {
	if c.Qualifier != "" && strings.Trim(c.Qualifier, "0123456789") == "" {
		return c.Qualifier
	}
	return "$LATEST"
}

// NotFound is Lambda's answer for a function that does not exist.
func NotFound(c Call) task.Result {
	name := c.Function
	arn := name
	if ref, ok := ParseRef(name); ok {
		q := ref.Qualifier
		if q == "" {
			q = "$LATEST"
		}
		arn = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s:%s", c.region, c.account, ref.Name, q)
	}
	return task.Result{Error: "Lambda.ResourceNotFoundException", Cause: fmt.Sprintf(
		"Function not found: %s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: %s; Proxy: null)",
		arn, uuid.New())}
}

// httpDate is the HTTP Date header layout.
const httpDate = "Mon, 02 Jan 2006 15:04:05 GMT"

// InvokeResponse wraps a function's result as the lambda:invoke
// integration returns it, in AWS's member order. Content-Length is the
// length of the body as Lambda's Python runtime writes it.
func InvokeResponse(payload any, c Call) *value.Object {
	now := time.Now().UTC()
	reqID := uuid.New()
	version := c.executedVersion()
	length := strconv.Itoa(len(pythonDumps(nil, payload)))
	date := now.Format(httpDate)
	trace := traceID(now)
	var logResult string
	if c.logTail {
		logResult = base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(
			"START RequestId: %s Version: %s\nEND RequestId: %s\nREPORT RequestId: %s\tDuration: 1.52 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\tMax Memory Used: 31 MB\t\n",
			reqID, version, reqID, reqID)))
	}

	headers := [][2]string{
		{"X-Amz-Executed-Version", version},
		{"x-amzn-Remapped-Content-Length", "0"},
		{"Connection", "keep-alive"},
		{"x-amzn-RequestId", reqID},
		{"Content-Length", length},
		{"Date", date},
		{"X-Amzn-Trace-Id", trace},
		{"Content-Type", "application/json"},
	}
	if c.logTail {
		headers = append([][2]string{{"X-Amz-Log-Result", logResult}}, headers...)
	}
	all := value.NewObject(len(headers))
	for _, h := range headers {
		all.Set(h[0], []any{h[1]})
	}
	sorted := append([][2]string(nil), headers...)
	sort.Slice(sorted, func(i, j int) bool { return strings.ToLower(sorted[i][0]) < strings.ToLower(sorted[j][0]) })
	hdr := value.NewObject(len(sorted))
	for _, h := range sorted {
		hdr.Set(h[0], h[1])
	}
	meta := value.NewObject(3)
	meta.Set("AllHttpHeaders", all)
	meta.Set("HttpHeaders", hdr)
	meta.Set("HttpStatusCode", value.Int(200))

	out := value.NewObject(6)
	out.Set("ExecutedVersion", version)
	if c.logTail {
		out.Set("LogResult", logResult)
	}
	out.Set("Payload", payload)
	out.Set("SdkHttpMetadata", meta)
	out.Set("SdkResponseMetadata", value.ObjectOf("RequestId", reqID))
	out.Set("StatusCode", value.Int(200))
	return out
}

// traceID returns an X-Ray trace header value.
func traceID(now time.Time) string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", now.Unix(), hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}

// PythonCause re-encodes a JSON object text the way Lambda's Python runtime
// writes it (json.dumps: ", " and ": " separators, non-ASCII escaped);
// other text is returned unchanged.
func PythonCause(s string) string {
	v, err := value.ParseString(s)
	if err != nil {
		return s
	}
	if _, ok := v.(*value.Object); !ok {
		return s
	}
	return string(pythonDumps(nil, v))
}

// pythonDumps appends v as Python's json.dumps writes it by default.
func pythonDumps(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return pythonString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = pythonDumps(b, e)
		}
		return append(b, ']')
	case *value.Object:
		b = append(b, '{')
		for i := 0; i < x.Len(); i++ {
			k, e := x.At(i)
			if i > 0 {
				b = append(b, ", "...)
			}
			b = pythonString(b, k)
			b = append(b, ": "...)
			b = pythonDumps(b, e)
		}
		return append(b, '}')
	}
	return value.Append(b, v)
}

// pythonString appends s as a JSON string with everything outside
// printable ASCII escaped (ensure_ascii).
func pythonString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	u4 := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\b':
			b = append(b, `\b`...)
		case r == '\f':
			b = append(b, `\f`...)
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r > 0xffff:
			r -= 0x10000
			b = u4(b, 0xd800+(r>>10))
			b = u4(b, 0xdc00+(r&0x3ff))
		case r == utf8.RuneError:
			b = u4(b, 0xfffd)
		default:
			b = u4(b, r)
		}
	}
	return append(b, '"')
}

// ErrorResult recognises a Lambda-style (errorType, errorMessage) or
// ASL-style (Error, Cause) error object in a handler's answer and makes it
// the task failure.
func ErrorResult(data []byte) (task.Result, bool) {
	o, ok := answerObject(data)
	if !ok {
		return task.Result{}, false
	}
	if r, ok := lambdaError(o); ok {
		return r, true
	}
	if e, ok := o.Get("Error"); ok {
		name, _ := e.(string)
		cause, _ := o.Get("Cause")
		cs, isStr := cause.(string)
		if !isStr && cause != nil {
			cs = value.String(cause)
		}
		if name != "" {
			return task.Result{Error: name, Cause: cs}, true
		}
	}
	return task.Result{}, false
}

// ShapedError recognises Lambda's error shape in an answer that did not
// otherwise fail: a JSON object whose errorType is a non-empty string (with
// errorMessage, as Lambda's runtimes report an error). It is how a handler
// marked Lambda-shaped in the registry fails; the ASL-style Error/Cause
// object is not taken, since a result may well carry such members.
func ShapedError(data []byte) (task.Result, bool) {
	o, ok := answerObject(data)
	if !ok {
		return task.Result{}, false
	}
	return lambdaError(o)
}

// answerObject is a handler's answer read as a JSON object, if it is one.
func answerObject(data []byte) (*value.Object, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	v, err := value.Parse(data)
	if err != nil {
		return nil, false
	}
	o, ok := v.(*value.Object)
	return o, ok
}

// lambdaError is the failure a Lambda-shaped error object o stands for:
// its errorType, with the whole object as the cause.
func lambdaError(o *value.Object) (task.Result, bool) {
	if t, ok := o.Get("errorType"); ok {
		if name, _ := t.(string); name != "" {
			return task.Result{Error: name, Cause: value.String(o)}, true
		}
	}
	return task.Result{}, false
}

// FunctionError is the result of a Lambda function error: the payload's
// errorType and errorMessage name the error and cause.
func FunctionError(payload []byte) task.Result {
	if res, ok := ErrorResult(payload); ok {
		return res
	}
	return task.Result{Error: "Lambda.Unknown", Cause: string(payload)}
}

// PayloadResult takes a handler's answer (nothing stands for null) as the
// result; from names the handler in the failure for an answer that is not
// JSON.
func PayloadResult(data []byte, from string) task.Result {
	if len(data) == 0 {
		return task.Result{Output: nil}
	}
	v, err := value.Parse(data)
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s answered with something other than JSON: %v", from, err)}
	}
	return task.Result{Output: v}
}
