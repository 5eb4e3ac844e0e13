// Package httptask serves the HTTP Task, arn:aws:states:::http:invoke
// (Invoker): it sends the HTTP request the task's parameters describe, with
// local stand-ins for EventBridge connections (Connection).
//
// It must not import the engine beside it, the other backends, or
// anything above (service, api, cmd/stepd …); registry wires it.
package httptask

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// The HTTP Task, "arn:aws:states:::http:invoke", as AWS Step Functions runs
// it (Call HTTPS APIs in Step Functions workflows):
//
//   - Parameters: ApiEndpoint (required, an http or https URL; AWS accepts
//     only https, stepd also plain http for local servers), Method (required:
//     GET, POST, PUT, DELETE, PATCH, OPTIONS or HEAD), Headers (an object;
//     an array value sends the header once per item), QueryParameters (an
//     object, an array value repeating the key, or a query string),
//     RequestBody (any JSON value; a string is sent as it is), Transform
//     (RequestBodyEncoding NONE or URL_ENCODED, RequestEncodingOptions
//     .ArrayFormat INDICES (default), REPEAT, COMMAS or BRACKETS), and the
//     EventBridge connection as Authentication.ConnectionArn or
//     InvocationConfig.ConnectionArn.
//   - Step Functions sets User-Agent "Amazon|StepFunctions|HttpInvoke|<region>"
//     and Range "bytes=0-262144"; the headers AWS forbids in a definition
//     (Authorization, Host, x-amz-*, ...) fail the task with States.Runtime.
//   - Connection headers, query parameters and body parameters are merged
//     over the task's, the connection winning on equal keys; body parameters
//     cannot be merged into a string RequestBody (States.Runtime).
//   - The result is {"Headers": {name: [values]}, "ResponseBody": <JSON when
//     the response is JSON, else text>, "StatusCode": <int>, "StatusText":
//     <reason phrase>}. A status outside 2xx fails the task with
//     States.Http.StatusCode.<code> and that result, as JSON text, as the
//     cause. A response of type application/octet-stream, image/*, video/*
//     or audio/*, or one that is not valid text, fails with States.Runtime.
//   - A request that takes longer than the timeout (60 seconds, as on AWS)
//     fails with States.Http.Socket; other transport failures with
//     States.TaskFailed. An unknown connection fails with
//     Events.ConnectionResource.ResourceNotFound.
//
// EventBridge connections are replaced by local configuration (Connections),
// which supplies the API key header, basic credentials or bearer token the
// connection would, and its invocation parameters. Unlike AWS, a task
// without a ConnectionArn is sent without authorization.

// Resource is the Resource of the HTTP Task.
const Resource = "arn:aws:states:::http:invoke"

var httpInvokeRE = regexp.MustCompile(`^arn:[a-z0-9-]+:states:::http:invoke$`)

// DefaultTimeout is how long AWS lets an HTTP Task request take.
const DefaultTimeout = 60 * time.Second

// httpRangeEnd is the last byte Step Functions asks for (Range header), and
// so the most response body it reads.
const httpRangeEnd = 262144

// Invoker serves HTTP Tasks by sending the request they describe.
//
// Configure it before use; Invoke is then safe for concurrent use.
type Invoker struct {
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Connections maps an EventBridge connection ARN to the credentials and
	// parameters it stands for.
	Connections map[string]Connection
	// Timeout bounds each request; zero means DefaultTimeout.
	Timeout time.Duration
	// Region is put in the User-Agent header; empty means the region of the
	// execution (from the Context object), else us-east-1.
	Region string
}

// Connection is the local stand-in for an EventBridge connection. Set at
// most one of the authorization forms: APIKeyName/APIKeyValue (API_KEY:
// the key is sent as a header), Username/Password (BASIC), BearerToken (for
// OAUTH_CLIENT_CREDENTIALS: the access token the connection would have
// obtained, sent as "Authorization: Bearer <token>").
type Connection struct {
	APIKeyName  string `json:"ApiKeyName,omitempty"`
	APIKeyValue string `json:"ApiKeyValue,omitempty"`
	Username    string `json:"Username,omitempty"`
	Password    string `json:"Password,omitempty"`
	BearerToken string `json:"BearerToken,omitempty"`
	// Invocation parameters (InvocationHttpParameters), merged over the
	// task's own with the connection's values winning.
	Headers         map[string]string `json:"Headers,omitempty"`
	QueryParameters map[string]string `json:"QueryParameters,omitempty"`
	BodyParameters  map[string]string `json:"BodyParameters,omitempty"`
}

// httpFailure is a task failure found while preparing or sending a request.
type httpFailure struct {
	name  string
	cause string
	err   error
}

func (f *httpFailure) Error() string { return f.name + ": " + f.cause }
func (f *httpFailure) Unwrap() error { return f.err }

func runtimeFailure(format string, args ...any) *httpFailure {
	err := fmt.Errorf(format, args...)
	return &httpFailure{name: "States.Runtime", cause: err.Error(), err: errors.Unwrap(err)}
}

// forbiddenHeaders are the headers an HTTP Task definition may not set.
var forbiddenHeaders = []string{
	"a-im", "accept-charset", "accept-datetime", "accept-encoding", "authorization",
	"cache-control", "connection", "content-encoding", "content-md5", "date", "expect",
	"forwarded", "from", "host", "http2-settings", "if-match", "if-modified-since",
	"if-none-match", "if-range", "if-unmodified-since", "max-forwards", "origin", "pragma",
	"proxy-authorization", "referer", "server", "te", "trailer", "transfer-encoding",
	"upgrade", "via", "warning",
}

func forbiddenHeader(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "x-forwarded-") || strings.HasPrefix(n, "x-amz-") ||
		strings.HasPrefix(n, "x-amzn-") || slices.Contains(forbiddenHeaders, n)
}

var httpMethods = []string{
	http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete,
	http.MethodPatch, http.MethodOptions, http.MethodHead,
}

// Serves reports whether req is an HTTP Task.
func (h *Invoker) Serves(req *task.Request) bool { return httpInvokeRE.MatchString(req.Resource) }

// Waits reports true (task.Waiting): it calls an HTTP endpoint, so the
// engine calls it on a goroutine of its own.
func (h *Invoker) Waits(*task.Request) bool { return true }

// Invoke sends the request the task's parameters describe.
func (h *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	if !h.Serves(req) {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the HTTP Task invoker cannot serve resource %s of state %q", req.Resource, req.StateName)}
	}
	hreq, err := h.build(ctx, req)
	if err != nil {
		return failureResult(err)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := h.send(hreq.WithContext(rctx), timeout)
	if ctx.Err() != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the HTTP Task %s %s was stopped: %v", hreq.Method, hreq.URL.Redacted(), ctx.Err())}
	}
	if err != nil {
		return failureResult(err)
	}
	return out
}

func failureResult(err error) task.Result {
	var f *httpFailure
	if errors.As(err, &f) {
		return task.Result{Error: f.name, Cause: f.cause}
	}
	return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
}

// build makes the HTTP request from the task's parameters.
func (h *Invoker) build(ctx context.Context, req *task.Request) (*http.Request, error) {
	params, ok := req.Input.(*value.Object)
	if !ok {
		return nil, runtimeFailure("the parameters of the HTTP Task %q must be an object, not %s", req.StateName, value.KindOf(req.Input))
	}
	get := func(k string) any { v, _ := params.Get(k); return v }

	endpoint, ok := get("ApiEndpoint").(string)
	if !ok || endpoint == "" {
		if params.Has("ApiEndpoint") {
			return nil, runtimeFailure("the HTTP Task %q parameter ApiEndpoint must be a URL string, not %s", req.StateName, value.KindOf(get("ApiEndpoint")))
		}
		return nil, runtimeFailure("the HTTP Task %q is missing the required parameter ApiEndpoint", req.StateName)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, runtimeFailure("the HTTP Task %q parameter ApiEndpoint is not a valid URL: %w", req.StateName, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, runtimeFailure("the HTTP Task %q parameter ApiEndpoint %q is not an https URL", req.StateName, endpoint)
	}

	method, ok := get("Method").(string)
	if !ok || method == "" {
		return nil, runtimeFailure("the HTTP Task %q is missing the required parameter Method", req.StateName)
	}
	if !slices.Contains(httpMethods, method) {
		return nil, runtimeFailure("the HTTP Task %q parameter Method %q is not one of %s", req.StateName, method, strings.Join(httpMethods, ", "))
	}

	conn, err := h.connection(params)
	if err != nil {
		return nil, err
	}

	header := http.Header{}
	if err := taskHeaders(get("Headers"), header); err != nil {
		return nil, err
	}
	for k, v := range conn.Headers {
		header.Set(k, v)
	}

	query, err := taskQuery(get("QueryParameters"))
	if err != nil {
		return nil, err
	}
	for _, k := range connKeys(conn.QueryParameters) {
		query = slices.DeleteFunc(query, func(p [2]string) bool { return p[0] == k })
		query = append(query, [2]string{k, conn.QueryParameters[k]})
	}
	if len(query) > 0 {
		var b strings.Builder
		b.WriteString(u.RawQuery)
		for _, p := range query {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(formEscape(p[0]) + "=" + formEscape(p[1]))
		}
		u.RawQuery = b.String()
	}

	body, contentType, err := requestBody(params, conn.BodyParameters)
	if err != nil {
		return nil, err
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, runtimeFailure("the HTTP Task %q request could not be made: %w", req.StateName, err)
	}
	hreq.Header = header
	if body != nil && header.Get("Content-Type") == "" {
		header.Set("Content-Type", contentType)
	}
	header.Set("User-Agent", "Amazon|StepFunctions|HttpInvoke|"+h.region(req))
	header.Set("Range", "bytes=0-"+strconv.Itoa(httpRangeEnd))
	switch {
	case conn.APIKeyName != "":
		header.Set(conn.APIKeyName, conn.APIKeyValue)
	case conn.Username != "" || conn.Password != "":
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(conn.Username+":"+conn.Password)))
	case conn.BearerToken != "":
		header.Set("Authorization", "Bearer "+conn.BearerToken)
	}
	return hreq, nil
}

// connection looks up the task's EventBridge connection; none gives the
// zero Connection.
func (h *Invoker) connection(params *value.Object) (Connection, error) {
	var arn string
	for _, field := range []string{"InvocationConfig", "Authentication"} {
		v, ok := params.Get(field)
		if !ok {
			continue
		}
		o, ok := v.(*value.Object)
		if !ok {
			return Connection{}, runtimeFailure("the HTTP Task parameter %s must be an object, not %s", field, value.KindOf(v))
		}
		a, _ := o.Get("ConnectionArn")
		s, ok := a.(string)
		if !ok || s == "" {
			return Connection{}, runtimeFailure("the HTTP Task parameter %s.ConnectionArn must be a connection ARN string", field)
		}
		arn = s
		break
	}
	if arn == "" {
		return Connection{}, nil
	}
	c, ok := h.Connections[arn]
	if !ok {
		return Connection{}, &httpFailure{name: "Events.ConnectionResource.ResourceNotFound", cause: fmt.Sprintf("the connection %s is not configured: add it to the HTTP Task connections", arn)}
	}
	return c, nil
}

func (h *Invoker) region(req *task.Request) string {
	if h.Region != "" {
		return h.Region
	}
	// $$.StateMachine.Id or $$.Execution.Id: arn:<partition>:states:<region>:...
	if ctx, ok := req.ContextObject().(*value.Object); ok {
		for _, k := range []string{"StateMachine", "Execution"} {
			o, _ := ctx.Get(k)
			if o, ok := o.(*value.Object); ok {
				id, _ := o.Get("Id")
				if s, ok := id.(string); ok {
					if parts := strings.Split(s, ":"); len(parts) > 3 && parts[3] != "" {
						return parts[3]
					}
				}
			}
		}
	}
	return "us-east-1"
}

// taskHeaders adds the Headers parameter to header.
func taskHeaders(v any, header http.Header) error {
	if v == nil {
		return nil
	}
	o, ok := v.(*value.Object)
	if !ok {
		return runtimeFailure("the HTTP Task parameter Headers must be an object, not %s", value.KindOf(v))
	}
	for k, x := range o.All {
		if forbiddenHeader(k) {
			return runtimeFailure("the HTTP Task cannot set the header %s", k)
		}
		if items, ok := x.([]any); ok {
			for _, it := range items {
				header.Add(k, scalarText(it))
			}
			continue
		}
		header.Add(k, scalarText(x))
	}
	return nil
}

// taskQuery reads the QueryParameters parameter as ordered pairs.
func taskQuery(v any) ([][2]string, error) {
	var out [][2]string
	switch q := v.(type) {
	case nil:
	case string:
		for part := range strings.SplitSeq(strings.TrimPrefix(q, "?"), "&") {
			if part == "" {
				continue
			}
			k, val, _ := strings.Cut(part, "=")
			uk, err := url.QueryUnescape(k)
			if err != nil {
				return nil, runtimeFailure("the HTTP Task parameter QueryParameters is not a valid query string: %w", err)
			}
			uv, err := url.QueryUnescape(val)
			if err != nil {
				return nil, runtimeFailure("the HTTP Task parameter QueryParameters is not a valid query string: %w", err)
			}
			out = append(out, [2]string{uk, uv})
		}
	case *value.Object:
		for k, x := range q.All {
			if items, ok := x.([]any); ok {
				for _, it := range items {
					out = append(out, [2]string{k, scalarText(it)})
				}
				continue
			}
			out = append(out, [2]string{k, scalarText(x)})
		}
	default:
		return nil, runtimeFailure("the HTTP Task parameter QueryParameters must be an object or a string, not %s", value.KindOf(v))
	}
	return out, nil
}

// requestBody serializes RequestBody after merging the connection's body
// parameters, and gives the default content type.
func requestBody(params *value.Object, connBody map[string]string) ([]byte, string, error) {
	body, hasBody := params.Get("RequestBody")
	encoding, format := "NONE", "INDICES"
	if t, ok := params.Get("Transform"); ok && t != nil {
		to, ok := t.(*value.Object)
		if !ok {
			return nil, "", runtimeFailure("the HTTP Task parameter Transform must be an object, not %s", value.KindOf(t))
		}
		if e, ok := to.Get("RequestBodyEncoding"); ok {
			s, _ := e.(string)
			if s != "NONE" && s != "URL_ENCODED" {
				return nil, "", runtimeFailure("the HTTP Task Transform.RequestBodyEncoding %s is not NONE or URL_ENCODED", value.String(e))
			}
			encoding = s
		}
		if o, ok := to.Get("RequestEncodingOptions"); ok {
			oo, _ := o.(*value.Object)
			var f any
			if oo != nil {
				f, _ = oo.Get("ArrayFormat")
			}
			s, _ := f.(string)
			switch s {
			case "INDICES", "REPEAT", "COMMAS", "BRACKETS":
				format = s
			default:
				return nil, "", runtimeFailure("the HTTP Task Transform.RequestEncodingOptions.ArrayFormat %s is not INDICES, REPEAT, COMMAS or BRACKETS", value.String(f))
			}
		}
	}

	if len(connBody) > 0 {
		var merged *value.Object
		switch b := body.(type) {
		case nil:
			merged = value.NewObject(len(connBody))
		case *value.Object:
			merged = b.Clone()
		default:
			return nil, "", runtimeFailure("the HTTP Task RequestBody (%s) cannot be merged with the body parameters of its connection", value.KindOf(body))
		}
		for _, k := range connKeys(connBody) {
			merged.Set(k, connBody[k])
		}
		body, hasBody = merged, true
	}
	if !hasBody {
		return nil, "", nil
	}

	if s, ok := body.(string); ok {
		ct := "application/json; charset=UTF-8"
		if encoding == "URL_ENCODED" {
			ct = "application/x-www-form-urlencoded"
		}
		return []byte(s), ct, nil
	}
	if encoding == "URL_ENCODED" {
		o, ok := body.(*value.Object)
		if !ok {
			return nil, "", runtimeFailure("the HTTP Task RequestBody must be an object or a string to be URL_ENCODED, not %s", value.KindOf(body))
		}
		return []byte(encodeForm(o, format)), "application/x-www-form-urlencoded", nil
	}
	return []byte(value.String(body)), "application/json; charset=UTF-8", nil
}

// encodeForm URL-encodes an object as a form: nested objects as key[member],
// arrays as format says (INDICES key[0], REPEAT key, COMMAS key=a,b,
// BRACKETS key[]).
func encodeForm(o *value.Object, format string) string {
	var parts []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case *value.Object:
			for k, x := range t.All {
				walk(key+"["+k+"]", x)
			}
		case []any:
			if format == "COMMAS" && allScalars(t) {
				if len(t) > 0 {
					texts := make([]string, len(t))
					for i, x := range t {
						texts[i] = scalarText(x)
					}
					parts = append(parts, formEscape(key)+"="+formEscape(strings.Join(texts, ",")))
				}
				return
			}
			for i, x := range t {
				switch format {
				case "REPEAT":
					walk(key, x)
				case "BRACKETS":
					walk(key+"[]", x)
				default:
					walk(key+"["+strconv.Itoa(i)+"]", x)
				}
			}
		default:
			parts = append(parts, formEscape(key)+"="+formEscape(scalarText(v)))
		}
	}
	for k, v := range o.All {
		walk(k, v)
	}
	return strings.Join(parts, "&")
}

func allScalars(items []any) bool {
	for _, x := range items {
		switch x.(type) {
		case *value.Object, []any:
			return false
		}
	}
	return true
}

// formEscape percent-encodes all but the RFC 3986 unreserved characters
// (a space is %20).
func formEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// scalarText is the text of a value in a header, query or form: strings as
// they are, null as nothing, other values as JSON.
func scalarText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		return value.String(v)
	}
}

// connKeys returns the keys of m in order.
func connKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// send performs the request and turns the response into the task result.
func (h *Invoker) send(req *http.Request, timeout time.Duration) (task.Result, error) {
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return task.Result{}, transportFailure(req, err, timeout)
	}
	defer func() { _ = resp.Body.Close() }()

	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	media = strings.ToLower(media)
	if media == "application/octet-stream" || strings.HasPrefix(media, "image/") ||
		strings.HasPrefix(media, "video/") || strings.HasPrefix(media, "audio/") {
		return task.Result{}, runtimeFailure("the HTTP Task response from %s %s has the unsupported content type %s", req.Method, req.URL.Redacted(), media)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, httpRangeEnd+2))
	if err != nil {
		return task.Result{}, transportFailure(req, err, timeout)
	}
	if len(data) > httpRangeEnd+1 {
		return task.Result{}, &httpFailure{name: "States.DataLimitExceeded", cause: fmt.Sprintf("the HTTP Task response from %s %s is larger than %d bytes", req.Method, req.URL.Redacted(), httpRangeEnd+1)}
	}
	if !utf8.Valid(data) {
		return task.Result{}, runtimeFailure("the HTTP Task response from %s %s cannot be read as text", req.Method, req.URL.Redacted())
	}

	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	headers := value.NewObject(len(names))
	for _, k := range names {
		vals := make([]any, len(resp.Header[k]))
		for i, v := range resp.Header[k] {
			vals[i] = v
		}
		headers.Set(strings.ToLower(k), vals)
	}

	var body any = string(data)
	if media == "application/json" || strings.HasSuffix(media, "+json") {
		if v, err := value.Parse(data); err == nil {
			body = v
		}
	}
	statusText := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	if statusText == "" {
		statusText = http.StatusText(resp.StatusCode)
	}
	out := value.ObjectOf(
		"Headers", headers,
		"ResponseBody", body,
		"StatusCode", value.Int(int64(resp.StatusCode)),
		"StatusText", statusText,
	)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return task.Result{Error: "States.Http.StatusCode." + strconv.Itoa(resp.StatusCode), Cause: value.String(out)}, nil
	}
	return task.Result{Output: out}, nil
}

func transportFailure(req *http.Request, err error, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &httpFailure{name: "States.Http.Socket", cause: fmt.Sprintf("the HTTP Task request %s %s timed out after %v", req.Method, req.URL.Redacted(), timeout), err: err}
	}
	return &httpFailure{name: "States.TaskFailed", cause: fmt.Sprintf("the HTTP Task request %s %s failed: %v", req.Method, req.URL.Redacted(), err), err: err}
}
