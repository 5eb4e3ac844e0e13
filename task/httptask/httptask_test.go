package httptask

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// httpSeen is one request as the test server received it.
type httpSeen struct {
	method string
	path   string
	query  string
	header http.Header
	body   string
}

// httpRecorder is a test server on 127.0.0.1 that records requests and answers
// them with handler.
type httpRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []httpSeen
}

func newHTTPRecorder(t *testing.T, handler http.HandlerFunc) *httpRecorder {
	t.Helper()
	r := &httpRecorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, httpSeen{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Clone(), string(b)})
		r.mu.Unlock()
		handler(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *httpRecorder) only(t *testing.T) httpSeen {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(r.reqs))
	}
	return r.reqs[0]
}

func (r *httpRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func httpJSONHandler(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Trace", "t-1")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func httpReq(t *testing.T, params string) *task.Request {
	t.Helper()
	v, err := value.ParseString(params)
	if err != nil {
		t.Fatalf("bad test parameters %s: %v", params, err)
	}
	return &task.Request{Resource: Resource, StateName: "Call", Input: v}
}

func httpMember(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, k := range path {
		o, ok := v.(*value.Object)
		if !ok {
			t.Fatalf("%s: not an object in %s", k, value.String(v))
		}
		v, ok = o.Get(k)
		if !ok {
			t.Fatalf("no member %s in %s", k, value.String(o))
		}
	}
	return v
}

func TestHTTPGetWithQueryParameters(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{"items":[1,2],"next":null}`))
	h := &Invoker{}
	res := h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "GET",
		"QueryParameters": {"currency": "usd", "tag": ["a b", "c&d"], "limit": 10, "flag": true}
	}`, srv.srv.URL+"/v1/customers?fixed=1")))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.method != "GET" || got.path != "/v1/customers" {
		t.Errorf("request %s %s", got.method, got.path)
	}
	if want := "fixed=1&currency=usd&tag=a%20b&tag=c%26d&limit=10&flag=true"; got.query != want {
		t.Errorf("query %q, want %q", got.query, want)
	}
	if got.body != "" || got.header.Get("Content-Type") != "" {
		t.Errorf("GET sent body %q, Content-Type %q", got.body, got.header.Get("Content-Type"))
	}
	if ua := got.header.Get("User-Agent"); ua != "Amazon|StepFunctions|HttpInvoke|us-east-1" {
		t.Errorf("User-Agent %q", ua)
	}
	if rg := got.header.Get("Range"); rg != "bytes=0-262144" {
		t.Errorf("Range %q", rg)
	}

	if code := httpMember(t, res.Output, "StatusCode"); code != value.Int(200) {
		t.Errorf("StatusCode %v", code)
	}
	if text := httpMember(t, res.Output, "StatusText"); text != "OK" {
		t.Errorf("StatusText %v", text)
	}
	if body := value.String(httpMember(t, res.Output, "ResponseBody")); body != `{"items":[1,2],"next":null}` {
		t.Errorf("ResponseBody %s", body)
	}
	if ct := value.String(httpMember(t, res.Output, "Headers", "content-type")); ct != `["application/json"]` {
		t.Errorf("Headers.content-type %s", ct)
	}
	if tr := value.String(httpMember(t, res.Output, "Headers", "x-trace")); tr != `["t-1"]` {
		t.Errorf("Headers.x-trace %s", tr)
	}
	keys := value.AsObject(res.Output).Keys()
	if strings.Join(keys, ",") != "Headers,ResponseBody,StatusCode,StatusText" {
		t.Errorf("result members %v", keys)
	}
}

func TestHTTPQueryParametersString(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "GET", "QueryParameters": "a=1&b=x%%20y"}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	if q := srv.only(t).query; q != "a=1&b=x%20y" {
		t.Errorf("query %q", q)
	}
}

func TestHTTPPostJSON(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(201, `{"id":"c_1"}`))
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "POST",
		"RequestBody": {"Card": {"Number": "1234", "Tags": [true, null, 1.50]}}
	}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.method != "POST" || got.body != `{"Card":{"Number":"1234","Tags":[true,null,1.50]}}` {
		t.Errorf("request %s %s", got.method, got.body)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if code := httpMember(t, res.Output, "StatusCode"); code != value.Int(201) {
		t.Errorf("StatusCode %v", code)
	}
	if text := httpMember(t, res.Output, "StatusText"); text != "Created" {
		t.Errorf("StatusText %v", text)
	}
	if id := httpMember(t, res.Output, "ResponseBody", "id"); id != "c_1" {
		t.Errorf("ResponseBody.id %v", id)
	}
}

func TestHTTPStringBodyAndTextResponse(t *testing.T) {
	srv := newHTTPRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, `{"not":"parsed"}`)
	})
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "PUT", "Headers": {"Content-Type": "text/plain"}, "RequestBody": "raw text"}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.body != "raw text" || got.header.Get("Content-Type") != "text/plain" {
		t.Errorf("request body %q, Content-Type %q", got.body, got.header.Get("Content-Type"))
	}
	if body := httpMember(t, res.Output, "ResponseBody"); body != `{"not":"parsed"}` {
		t.Errorf("ResponseBody %#v, want the text", body)
	}
}

func TestHTTPURLEncodedBody(t *testing.T) {
	body := `{"array": ["a", "b,c"], "name": "x y", "meta": {"k": "v", "n": [1, 2]}, "none": null}`
	cases := []struct {
		format string // "" leaves RequestEncodingOptions out
		want   string
	}{
		{"", "array%5B0%5D=a&array%5B1%5D=b%2Cc&name=x%20y&meta%5Bk%5D=v&meta%5Bn%5D%5B0%5D=1&meta%5Bn%5D%5B1%5D=2&none="},
		{"INDICES", "array%5B0%5D=a&array%5B1%5D=b%2Cc&name=x%20y&meta%5Bk%5D=v&meta%5Bn%5D%5B0%5D=1&meta%5Bn%5D%5B1%5D=2&none="},
		{"REPEAT", "array=a&array=b%2Cc&name=x%20y&meta%5Bk%5D=v&meta%5Bn%5D=1&meta%5Bn%5D=2&none="},
		{"COMMAS", "array=a%2Cb%2Cc&name=x%20y&meta%5Bk%5D=v&meta%5Bn%5D=1%2C2&none="},
		{"BRACKETS", "array%5B%5D=a&array%5B%5D=b%2Cc&name=x%20y&meta%5Bk%5D=v&meta%5Bn%5D%5B%5D=1&meta%5Bn%5D%5B%5D=2&none="},
	}
	for _, c := range cases {
		t.Run("format="+c.format, func(t *testing.T) {
			srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
			transform := `{"RequestBodyEncoding": "URL_ENCODED"}`
			if c.format != "" {
				transform = fmt.Sprintf(`{"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": %q}}`, c.format)
			}
			res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
				"ApiEndpoint": %q, "Method": "POST",
				"Headers": {"Content-Type": "application/x-www-form-urlencoded"},
				"RequestBody": %s, "Transform": %s}`, srv.srv.URL, body, transform)))
			if res.Failed() {
				t.Fatalf("failed: %s: %s", res.Error, res.Cause)
			}
			got := srv.only(t)
			if got.body != c.want {
				t.Errorf("body\n got %s\nwant %s", got.body, c.want)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestHTTPURLEncodedDefaultContentType(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "POST", "RequestBody": {"a": "1"},
		"Transform": {"RequestBodyEncoding": "URL_ENCODED"}}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.body != "a=1" || got.header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("body %q, Content-Type %q", got.body, got.header.Get("Content-Type"))
	}
}

func TestHTTPHeaders(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "DELETE",
		"Headers": {"Request-Id": "r-1", "X-Multi": ["one", "two"], "X-Num": 7}}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.method != "DELETE" {
		t.Errorf("method %s", got.method)
	}
	if v := got.header.Get("Request-Id"); v != "r-1" {
		t.Errorf("Request-Id %q", v)
	}
	if v := got.header.Values("X-Multi"); strings.Join(v, "|") != "one|two" {
		t.Errorf("X-Multi %q", v)
	}
	if v := got.header.Get("X-Num"); v != "7" {
		t.Errorf("X-Num %q", v)
	}
}

func TestHTTPForbiddenHeaders(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	for _, name := range []string{"Authorization", "host", "X-Amz-Date", "x-amzn-trace-id", "X-Forwarded-For", "Transfer-Encoding"} {
		res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
			"ApiEndpoint": %q, "Method": "GET", "Headers": {%q: "x"}}`, srv.srv.URL, name)))
		if res.Error != "States.Runtime" || !strings.Contains(res.Cause, name) {
			t.Errorf("header %s: got %s: %s, want States.Runtime naming it", name, res.Error, res.Cause)
		}
	}
	if n := srv.count(); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestHTTPErrorStatus(t *testing.T) {
	for _, c := range []struct {
		status     int
		text, body string
		wantBody   string
	}{
		{404, "Not Found", `{"message":"no such customer"}`, `{"message":"no such customer"}`},
		{500, "Internal Server Error", `oops`, `"oops"`},
	} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			srv := newHTTPRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
				if strings.HasPrefix(c.body, "{") {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			})
			res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "GET"}`, srv.srv.URL)))
			if want := fmt.Sprintf("States.Http.StatusCode.%d", c.status); res.Error != want {
				t.Fatalf("error %q, want %q (cause %s)", res.Error, want, res.Cause)
			}
			if res.Output != nil {
				t.Errorf("failed task has output %s", value.String(res.Output))
			}
			cause, err := value.ParseString(res.Cause)
			if err != nil {
				t.Fatalf("cause is not JSON: %v: %s", err, res.Cause)
			}
			if code := httpMember(t, cause, "StatusCode"); code != value.Int(int64(c.status)) {
				t.Errorf("cause StatusCode %v", code)
			}
			if text := httpMember(t, cause, "StatusText"); text != c.text {
				t.Errorf("cause StatusText %v", text)
			}
			if body := value.String(httpMember(t, cause, "ResponseBody")); body != c.wantBody {
				t.Errorf("cause ResponseBody %s, want %s", body, c.wantBody)
			}
			httpMember(t, cause, "Headers", "content-length")
		})
	}
}

func TestHTTPConnections(t *testing.T) {
	const arn = "arn:aws:events:us-east-1:123456789012:connection/Stripe/81210c42"
	cases := []struct {
		name       string
		conn       Connection
		authHeader string
		want       string
	}{
		{"api key", Connection{APIKeyName: "x-api-key", APIKeyValue: "secret-1"}, "X-Api-Key", "secret-1"},
		{"basic", Connection{Username: "user", Password: "pa:ss"}, "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pa:ss"))},
		{"bearer", Connection{BearerToken: "tok-9"}, "Authorization", "Bearer tok-9"},
	}
	for _, c := range cases {
		for _, field := range []string{"Authentication", "InvocationConfig"} {
			t.Run(c.name+"/"+field, func(t *testing.T) {
				srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
				h := &Invoker{Connections: map[string]Connection{arn: c.conn}}
				res := h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
					"ApiEndpoint": %q, "Method": "GET", %q: {"ConnectionArn": %q}}`, srv.srv.URL, field, arn)))
				if res.Failed() {
					t.Fatalf("failed: %s: %s", res.Error, res.Cause)
				}
				if got := srv.only(t).header.Get(c.authHeader); got != c.want {
					t.Errorf("%s %q, want %q", c.authHeader, got, c.want)
				}
			})
		}
	}
}

func TestHTTPConnectionMerge(t *testing.T) {
	const arn = "arn:aws:events:us-east-1:123456789012:connection/Example/1"
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	h := &Invoker{Connections: map[string]Connection{arn: {
		APIKeyName: "ApiKey", APIKeyValue: "key_value",
		Headers:         map[string]string{"Header-Param": "connection_header_param"},
		QueryParameters: map[string]string{"QueryParam": "connection_query_param"},
		BodyParameters:  map[string]string{"BodyParam": "connection_body_param"},
	}}}
	res := h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"Authentication": {"ConnectionArn": %q}, "ApiEndpoint": %q, "Method": "POST",
		"Headers": {"Request-Id": "my_request_id", "Header-Param": "state_machine_header_param"},
		"RequestBody": {"Job": "Software Engineer", "BodyParam": "state_machine_body_param", "Company": "AnyCompany"},
		"QueryParameters": {"QueryParam": "state_machine_query_param", "Other": "o"}}`, arn, srv.srv.URL+"/path")))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	got := srv.only(t)
	if got.query != "Other=o&QueryParam=connection_query_param" {
		t.Errorf("query %q", got.query)
	}
	if got.header.Get("Apikey") != "key_value" || got.header.Get("Header-Param") != "connection_header_param" || got.header.Get("Request-Id") != "my_request_id" {
		t.Errorf("headers %v", got.header)
	}
	if want := `{"Job":"Software Engineer","BodyParam":"connection_body_param","Company":"AnyCompany"}`; got.body != want {
		t.Errorf("body %s, want %s", got.body, want)
	}

	// A string body cannot take the connection's body parameters.
	res = h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"Authentication": {"ConnectionArn": %q}, "ApiEndpoint": %q, "Method": "POST", "RequestBody": "text"}`, arn, srv.srv.URL)))
	if res.Error != "States.Runtime" {
		t.Errorf("string body with connection body parameters: %s: %s", res.Error, res.Cause)
	}
}

func TestHTTPUnknownConnection(t *testing.T) {
	const arn = "arn:aws:events:us-east-1:123456789012:connection/Missing/2"
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	h := &Invoker{Connections: map[string]Connection{"arn:other": {}}}
	res := h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{
		"ApiEndpoint": %q, "Method": "GET", "Authentication": {"ConnectionArn": %q}}`, srv.srv.URL, arn)))
	if res.Error != "Events.ConnectionResource.ResourceNotFound" || !strings.Contains(res.Cause, arn) {
		t.Errorf("got %s: %s, want ResourceNotFound naming %s", res.Error, res.Cause, arn)
	}
	if n := srv.count(); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestHTTPInvalidParameters(t *testing.T) {
	cases := []struct {
		name, params, mention string
	}{
		{"missing ApiEndpoint", `{"Method": "GET"}`, "missing the required parameter ApiEndpoint"},
		{"ApiEndpoint not a string", `{"ApiEndpoint": 3, "Method": "GET"}`, "ApiEndpoint must be a URL string"},
		{"ApiEndpoint not a URL", `{"ApiEndpoint": "ftp://example.com/x", "Method": "GET"}`, "not an https URL"},
		{"missing Method", `{"ApiEndpoint": "https://example.com"}`, "missing the required parameter Method"},
		{"bad Method", `{"ApiEndpoint": "https://example.com", "Method": "TRACE"}`, `Method "TRACE"`},
		{"parameters not an object", `["x"]`, "must be an object"},
		{"bad encoding", `{"ApiEndpoint": "https://example.com", "Method": "POST", "Transform": {"RequestBodyEncoding": "GZIP"}}`, "RequestBodyEncoding"},
		{"bad array format", `{"ApiEndpoint": "https://example.com", "Method": "POST", "Transform": {"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "JSON"}}}`, "ArrayFormat"},
		{"bad query", `{"ApiEndpoint": "https://example.com", "Method": "GET", "QueryParameters": 5}`, "QueryParameters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := (&Invoker{}).Invoke(context.Background(), httpReq(t, c.params))
			if res.Error != "States.Runtime" || !strings.Contains(res.Cause, c.mention) {
				t.Errorf("got %s: %s, want States.Runtime mentioning %q", res.Error, res.Cause, c.mention)
			}
		})
	}
}

func TestHTTPOtherResource(t *testing.T) {
	req := httpReq(t, `{"ApiEndpoint": "https://example.com", "Method": "GET"}`)
	req.Resource = "arn:aws:states:::lambda:invoke"
	h := &Invoker{}
	if h.Serves(req) {
		t.Error("serves lambda:invoke")
	}
	if res := h.Invoke(context.Background(), req); res.Error != "States.Runtime" {
		t.Errorf("got %s: %s", res.Error, res.Cause)
	}
	req.Resource = "arn:aws-cn:states:::http:invoke"
	if !h.Serves(req) {
		t.Error("does not serve the aws-cn partition")
	}
}

func TestHTTPRegionFromContext(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{}`))
	req := httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "GET"}`, srv.srv.URL))
	req.Context, _ = value.ParseString(`{"StateMachine": {"Id": "arn:aws:states:eu-west-3:123456789012:stateMachine:m"}}`)
	if res := (&Invoker{}).Invoke(context.Background(), req); res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	if ua := srv.only(t).header.Get("User-Agent"); ua != "Amazon|StepFunctions|HttpInvoke|eu-west-3" {
		t.Errorf("User-Agent %q", ua)
	}
}

func TestHTTPUnsupportedResponse(t *testing.T) {
	for _, c := range []struct {
		name, ct, body string
	}{
		{"image", "image/png", "\x89PNG"},
		{"octet-stream", "application/octet-stream", "bytes"},
		{"not text", "text/plain", "\xff\xfe\xfd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newHTTPRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", c.ct)
				_, _ = io.WriteString(w, c.body)
			})
			res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "GET"}`, srv.srv.URL)))
			if res.Error != "States.Runtime" {
				t.Errorf("got %s: %s, want States.Runtime", res.Error, res.Cause)
			}
		})
	}
}

func TestHTTPHead(t *testing.T) {
	srv := newHTTPRecorder(t, httpJSONHandler(200, `{"ignored":true}`))
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "HEAD"}`, srv.srv.URL)))
	if res.Failed() {
		t.Fatalf("failed: %s: %s", res.Error, res.Cause)
	}
	if got := srv.only(t); got.method != "HEAD" {
		t.Errorf("method %s", got.method)
	}
	if body := httpMember(t, res.Output, "ResponseBody"); body != "" {
		t.Errorf("ResponseBody %#v", body)
	}
}

// httpBlockingServer answers only when the request is abandoned or the test
// ends. arrived is closed when the first request has arrived, abandoned
// when its client has given it up (its context ended before the test did).
func httpBlockingServer(t *testing.T) (srv *httpRecorder, arrived, abandoned chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	arrived, abandoned = make(chan struct{}), make(chan struct{})
	var first sync.Once
	srv = newHTTPRecorder(t, func(w http.ResponseWriter, req *http.Request) {
		first.Do(func() {
			close(arrived)
			select {
			case <-req.Context().Done():
				close(abandoned)
			case <-release:
			}
		})
	})
	t.Cleanup(func() { close(release) })
	return srv, arrived, abandoned
}

// Invoke returns once its context is cancelled, with the stop as the
// task's failure, and gives the request up. (The server would hold the
// request until the test ends: the deadlines only bound a failure.)
func TestHTTPCancel(t *testing.T) {
	srv, arrived, abandoned := httpBlockingServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan task.Result, 1)
	go func() {
		// No timeout of its own ends the request meanwhile.
		done <- (&Invoker{Timeout: time.Hour}).Invoke(ctx, httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "GET"}`, srv.srv.URL)))
	}()
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("the request never reached the server")
	}
	cancel()
	select {
	case res := <-done:
		if res.Error != "States.TaskFailed" || !strings.Contains(res.Cause, "stopped") {
			t.Errorf("got %s: %s", res.Error, res.Cause)
		}
	case <-time.After(time.Minute):
		t.Fatal("Invoke did not return after cancellation")
	}
	select {
	case <-abandoned:
	case <-time.After(time.Minute):
		t.Fatal("the cancelled request was not given up")
	}
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// A request is sent with Invoker.Timeout as its deadline; one that outlasts
// it is given up and fails the task with States.Http.Socket, naming the
// timeout. (The server would hold it until the test ends: the deadline of
// the wait only bounds a failure.)
func TestHTTPTimeout(t *testing.T) {
	srv, _, abandoned := httpBlockingServer(t)
	const timeout = 100 * time.Millisecond
	deadlines := make(chan error, 1)
	h := &Invoker{Timeout: timeout, Client: &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// The deadline was set before now, Timeout ahead: it cannot lie
		// further than Timeout from now.
		switch dl, ok := req.Context().Deadline(); {
		case !ok:
			deadlines <- errors.New("the request has no deadline")
		case dl.After(time.Now().Add(timeout)):
			deadlines <- fmt.Errorf("the request's deadline is %v away, more than the timeout", time.Until(dl))
		default:
			deadlines <- nil
		}
		return http.DefaultTransport.RoundTrip(req)
	})}}
	done := make(chan task.Result, 1)
	go func() {
		done <- h.Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{"ApiEndpoint": %q, "Method": "GET"}`, srv.srv.URL)))
	}()
	if err := <-deadlines; err != nil {
		t.Error(err)
	}
	select {
	case res := <-done:
		if res.Error != "States.Http.Socket" || !strings.Contains(res.Cause, "timed out after 100ms") {
			t.Errorf("got %s: %s", res.Error, res.Cause)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Invoke did not give up the request")
	}
	select {
	case <-abandoned:
	case <-time.After(time.Minute):
		t.Fatal("the timed-out request was not given up")
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	res := (&Invoker{}).Invoke(context.Background(), httpReq(t, fmt.Sprintf(`{"ApiEndpoint": "http://%s/x", "Method": "GET"}`, addr)))
	if res.Error != "States.TaskFailed" || !strings.Contains(res.Cause, addr) {
		t.Errorf("got %s: %s", res.Error, res.Cause)
	}
}
