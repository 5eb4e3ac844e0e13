package task

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
	"github.com/stepd/stepd/value"
)

// The Lambda integrations, as mocks see them:
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

// funcRef is a Lambda function reference as the Lambda API accepts it: a
// name, a partial ARN (account:function:name) or an ARN, each optionally
// qualified by a version or alias.
type funcRef struct {
	region, account, name, qualifier string
}

func parseFuncRef(s string) (funcRef, bool) {
	var r funcRef
	parts := strings.Split(s, ":")
	switch {
	case parts[0] == "arn" && (len(parts) == 7 || len(parts) == 8) && parts[2] == "lambda" && parts[5] == "function":
		r.region, r.account, r.name = parts[3], parts[4], parts[6]
		if len(parts) == 8 {
			r.qualifier = parts[7]
		}
	case (len(parts) == 3 || len(parts) == 4) && parts[1] == "function":
		r.account, r.name = parts[0], parts[2]
		if len(parts) == 4 {
			r.qualifier = parts[3]
		}
	case len(parts) == 1 || len(parts) == 2:
		r.name = parts[0]
		if len(parts) == 2 {
			r.qualifier = parts[1]
		}
	default:
		return r, false
	}
	if !funcNameRE.MatchString(r.name) || (r.qualifier != "" && !qualifierRE.MatchString(r.qualifier)) {
		return r, false
	}
	return r, true
}

// matches reports whether a mocked function m serves the reference r: same
// name, and the same region, account and qualifier where both give one. An
// unqualified mock serves every version and alias.
func (m funcRef) matches(r funcRef) bool {
	same := func(a, b string) bool { return a == "" || b == "" || a == b }
	q := r.qualifier
	if q == "" {
		q = "$LATEST"
	}
	return m.name == r.name && same(m.region, r.region) && same(m.account, r.account) &&
		(m.qualifier == "" || m.qualifier == q)
}

// lambdaCall is a Lambda task's request.
type lambdaCall struct {
	function  string // as named by the task
	direct    bool   // Resource is the function ARN
	input     any    // direct: the event; lambda:invoke: the Payload parameter
	hasInput  bool
	logTail   bool
	qualifier string
	region    string
	account   string
	err       *Result // the request is invalid
}

// lambdaCallOf recognises a Lambda task.
func lambdaCallOf(req *Request) (lambdaCall, bool) {
	c := lambdaCall{region: "us-east-1", account: "111111111111"}
	if ref, ok := accountOf(req.Context); ok {
		c.region, c.account = ref.region, ref.account
	}
	switch {
	case directLambdaRE.MatchString(req.Resource):
		c.function, c.direct, c.input, c.hasInput = req.Resource, true, req.Input, true
	case invokeLambdaRE.MatchString(req.Resource):
		in, _ := req.Input.(*value.Object)
		fn, _ := in.Get("FunctionName")
		c.function, _ = fn.(string)
		if c.function == "" {
			c.err = &Result{Error: "States.Runtime", Cause: fmt.Sprintf("the state %q calls %s without a FunctionName string parameter", req.StateName, req.Resource)}
			return c, true
		}
		c.input, c.hasInput = in.Get("Payload")
		if lt, _ := in.Get("LogType"); lt == "Tail" {
			c.logTail = true
		}
		if q, ok := in.Get("Qualifier"); ok {
			c.qualifier, _ = q.(string)
		}
	default:
		return c, false
	}
	if ref, ok := parseFuncRef(c.function); ok {
		if ref.qualifier != "" {
			c.qualifier = ref.qualifier
		}
		if ref.region != "" {
			c.region = ref.region
		}
		if ref.account != "" {
			c.account = ref.account
		}
	}
	return c, true
}

// accountOf finds the region and account of the execution in the Context
// object ($$.Execution.Id).
func accountOf(ctx any) (funcRef, bool) {
	o, _ := ctx.(*value.Object)
	ex, _ := o.Get("Execution")
	eo, _ := ex.(*value.Object)
	id, _ := eo.Get("Id")
	s, _ := id.(string)
	parts := strings.Split(s, ":")
	if len(parts) < 5 || parts[0] != "arn" || parts[3] == "" || parts[4] == "" {
		return funcRef{}, false
	}
	return funcRef{region: parts[3], account: parts[4]}, true
}

// event is the event the function receives.
func (c lambdaCall) event() (any, *Result) {
	if c.direct {
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
			return nil, &Result{Error: "Lambda.InvalidRequestContentException", Cause: fmt.Sprintf(
				"Could not parse request body into json: Could not parse payload into json: %v (Service: AWSLambda; Status Code: 400; Error Code: InvalidRequestContentException; Request ID: %s; Proxy: null)",
				err, uuid.New())}
		}
		return v, nil
	}
	return c.input, nil
}

func (c lambdaCall) executedVersion() string {
	if c.qualifier != "" && strings.Trim(c.qualifier, "0123456789") == "" {
		return c.qualifier
	}
	return "$LATEST"
}

// functionNotFound is Lambda's answer for a function that does not exist.
func functionNotFound(c lambdaCall) Result {
	name := c.function
	arn := name
	if ref, ok := parseFuncRef(name); ok {
		q := ref.qualifier
		if q == "" {
			q = "$LATEST"
		}
		arn = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s:%s", c.region, c.account, ref.name, q)
	}
	return Result{Error: "Lambda.ResourceNotFoundException", Cause: fmt.Sprintf(
		"Function not found: %s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: %s; Proxy: null)",
		arn, uuid.New())}
}

// httpDate is the HTTP Date header layout.
const httpDate = "Mon, 02 Jan 2006 15:04:05 GMT"

// invokeResponse wraps a function's result as the lambda:invoke
// integration returns it, in AWS's member order. Content-Length is the
// length of the body as Lambda's Python runtime writes it.
func invokeResponse(payload any, c lambdaCall) *value.Object {
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

// pythonCause re-encodes a JSON object text the way Lambda's Python runtime
// writes it (json.dumps: ", " and ": " separators, non-ASCII escaped);
// other text is returned unchanged.
func pythonCause(s string) string {
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
