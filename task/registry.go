package task

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stepd/stepd/value"
)

// RegistryConfig is the resource registry's configuration file: which local
// handler serves which Lambda function and which other resource, and the
// connections of HTTP Tasks.
//
//	{
//	  "Functions": {
//	    "greet": {"Command": ["python3", "greet.py"]},
//	    "arn:aws:lambda:us-east-1:123456789012:function:price": {"Url": "http://127.0.0.1:9000/price"},
//	    "resize": {"LambdaEndpoint": "http://127.0.0.1:9001"},
//	    "report": {"AwsLambda": {"Region": "eu-west-1"}}
//	  },
//	  "Resources": {
//	    "arn:aws:states:::sqs:sendMessage": {"Command": ["./enqueue.sh"]},
//	    "arn:aws:states:::aws-sdk:s3:*": {"Url": "http://127.0.0.1:9002/s3"}
//	  },
//	  "Connections": {"arn:aws:events:...:connection/api/id": {"ApiKeyName": "x-api-key", "ApiKeyValue": "..."}}
//	}
//
// A function is named as the Lambda API accepts it (name, partial ARN or
// ARN, optionally qualified) and serves both the bare function ARN as a
// Resource (the result is the function's return value) and
// arn:aws:states:::lambda:invoke (the result is the Invoke response with
// Payload). A resource key is an exact Resource or a prefix ending in "*".
type RegistryConfig struct {
	Functions   map[string]Handler    `json:"Functions,omitempty"`
	Resources   map[string]Handler    `json:"Resources,omitempty"`
	Connections map[string]Connection `json:"Connections,omitempty"`
}

// Handler is one handler: exactly one of Command (the program and its
// arguments; the event on standard input, the result on standard output),
// Url (the event POSTed as JSON, the JSON response is the result),
// LambdaEndpoint (the base URL of an endpoint speaking the Lambda Invoke
// API, such as the Lambda runtime interface emulator or SAM local) or
// AwsLambda (the real function, through the AWS SDK for Go).
type Handler struct {
	Command        []string          `json:"Command,omitempty"`
	Env            map[string]string `json:"Env,omitempty"`
	Dir            string            `json:"Dir,omitempty"`
	URL            string            `json:"Url,omitempty"`
	LambdaEndpoint string            `json:"LambdaEndpoint,omitempty"`
	AwsLambda      *AwsLambda        `json:"AwsLambda,omitempty"`
	// TimeoutSeconds bounds one call to Url, LambdaEndpoint or AwsLambda (default 900,
	// Lambda's limit); the state's TimeoutSeconds still applies.
	TimeoutSeconds int `json:"TimeoutSeconds,omitempty"`
}

// Registry serves Task states from a RegistryConfig. It is a Partial: it
// serves the registered functions and resources and HTTP Tasks.
type Registry struct {
	functions []registered
	resources Router
	http      *HTTP
}

type registered struct {
	name string
	ref  funcRef
	inv  Invoker
}

// ParseRegistry reads a registry configuration, rejecting unknown fields
// and handlers that are not exactly one of Command, Url, LambdaEndpoint or
// AwsLambda.
func ParseRegistry(data []byte) (*Registry, error) {
	cfg, err := decodeRegistryConfig(data)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return NewRegistry(cfg)
}

func decodeRegistryConfig(data []byte) (RegistryConfig, error) {
	var cfg RegistryConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&cfg)
	return cfg, err
}

// ReadRegistryConfig reads a registry configuration file, rejecting unknown
// fields. A handler's relative Dir is taken relative to the file's folder,
// so that a registry kept next to its handlers works from any working
// directory.
func ReadRegistryConfig(path string) (RegistryConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return RegistryConfig{}, err
	}
	cfg, err := decodeRegistryConfig(data)
	if err != nil {
		return RegistryConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	base := filepath.Dir(path)
	for _, handlers := range []map[string]Handler{cfg.Functions, cfg.Resources} {
		for name, h := range handlers {
			if h.Dir != "" && !filepath.IsAbs(h.Dir) {
				h.Dir = filepath.Join(base, h.Dir)
				handlers[name] = h
			}
		}
	}
	return cfg, nil
}

// NewRegistry builds a registry from its configuration.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	r := &Registry{http: &HTTP{Connections: cfg.Connections}}
	for _, name := range sortedKeys(cfg.Functions) {
		h := cfg.Functions[name]
		ref, ok := parseFuncRef(name)
		if !ok {
			return nil, fmt.Errorf("registry: Functions.%s: not a Lambda function name, partial ARN or ARN", name)
		}
		inv, err := h.invoker("Functions."+name, ref.name)
		if err != nil {
			return nil, err
		}
		r.functions = append(r.functions, registered{name: name, ref: ref, inv: inv})
	}
	for _, pattern := range sortedKeys(cfg.Resources) {
		if pattern == "" {
			return nil, fmt.Errorf("registry: Resources: an empty resource name")
		}
		inv, err := cfg.Resources[pattern].invoker("Resources."+pattern, "")
		if err != nil {
			return nil, err
		}
		r.resources.Handle(pattern, inv)
	}
	return r, nil
}

func (h Handler) invoker(at, function string) (Invoker, error) {
	n := 0
	for _, set := range []bool{len(h.Command) > 0, h.URL != "", h.LambdaEndpoint != "", h.AwsLambda != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("registry: %s: want exactly one of Command, Url, LambdaEndpoint and AwsLambda", at)
	}
	timeout := 900 * time.Second
	if h.TimeoutSeconds < 0 {
		return nil, fmt.Errorf("registry: %s.TimeoutSeconds: must not be negative", at)
	} else if h.TimeoutSeconds > 0 {
		timeout = time.Duration(h.TimeoutSeconds) * time.Second
	}
	switch {
	case h.AwsLambda != nil:
		return newAwsLambda(at, h.AwsLambda, function, timeout)
	case len(h.Command) > 0:
		c := &Command{Path: h.Command[0], Args: h.Command[1:], Dir: h.Dir}
		for _, k := range sortedKeys(h.Env) {
			c.Env = append(c.Env, k+"="+h.Env[k])
		}
		return c, nil
	case h.URL != "":
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("registry: %s.Url: want an http or https URL, got %q", at, h.URL)
		}
		return &endpoint{url: h.URL, timeout: timeout}, nil
	default:
		u, err := url.Parse(h.LambdaEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("registry: %s.LambdaEndpoint: want an http or https URL, got %q", at, h.LambdaEndpoint)
		}
		if function == "" {
			return nil, fmt.Errorf("registry: %s: LambdaEndpoint serves Functions only", at)
		}
		return &endpoint{url: strings.TrimSuffix(h.LambdaEndpoint, "/") + "/2015-03-31/functions/" + url.PathEscape(function) + "/invocations",
			lambda: true, timeout: timeout}, nil
	}
}

// Serves reports whether the registry has a handler for req.
func (r *Registry) Serves(req *Request) bool {
	if call, ok := lambdaCallOf(req); ok {
		if _, found := r.function(call.function); found {
			return true
		}
	}
	if r.http.Serves(req) {
		return true
	}
	return r.resources.Routes(req.Resource)
}

// Invoke serves req with its registered handler.
func (r *Registry) Invoke(ctx context.Context, req *Request) Result {
	if call, ok := lambdaCallOf(req); ok {
		if fn, found := r.function(call.function); found {
			return r.invokeFunction(ctx, req, call, fn)
		}
		if call.err != nil {
			return *call.err
		}
	}
	if r.http.Serves(req) {
		return r.http.Invoke(ctx, req)
	}
	if r.resources.Routes(req.Resource) {
		return r.resources.Invoke(ctx, req)
	}
	return Result{Error: "States.Runtime", Cause: fmt.Sprintf(
		"no handler for resource %s of state %q: add it to Resources (or the function to Functions) in the registry file, or give a mock test case",
		req.Resource, req.StateName)}
}

func (r *Registry) function(name string) (registered, bool) {
	for _, f := range r.functions {
		if f.name == name {
			return f, true
		}
	}
	ref, ok := parseFuncRef(name)
	if !ok {
		return registered{}, false
	}
	for _, f := range r.functions {
		if f.ref.matches(ref) {
			return f, true
		}
	}
	return registered{}, false
}

func (r *Registry) invokeFunction(ctx context.Context, req *Request, call lambdaCall, fn registered) Result {
	if call.err != nil {
		return *call.err
	}
	event, perr := call.event()
	if perr != nil {
		return *perr
	}
	sub := *req
	sub.Input = event
	var res Result
	if a, ok := fn.inv.(*awsLambda); ok {
		res = a.invokeFunction(ctx, &sub, call) // the function as the task names it
	} else {
		res = fn.inv.Invoke(ctx, &sub)
	}
	if !res.Failed() && !call.direct {
		res.Output = invokeResponse(res.Output, call)
	}
	return res
}

// endpoint POSTs the event as JSON to a URL and takes the JSON response as
// the result. With lambda set it speaks the Lambda Invoke API: a function
// error is reported in the X-Amz-Function-Error header and the body holds
// errorType and errorMessage.
type endpoint struct {
	url     string
	lambda  bool
	timeout time.Duration
}

// maxEndpointResponse is the largest response body read (Lambda's 6 MB
// synchronous payload limit).
const maxEndpointResponse = 6 << 20

func (e *endpoint) Invoke(ctx context.Context, req *Request) Result {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	body := value.Append(nil, req.Input)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("calling %s: %v", e.url, err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("X-Stepd-Resource", req.Resource)
	hreq.Header.Set("X-Stepd-State-Name", req.StateName)
	if req.TaskToken != "" {
		hreq.Header.Set("X-Stepd-Task-Token", req.TaskToken)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return Result{Error: "States.Timeout", Cause: fmt.Sprintf("%s did not answer within %s", e.url, e.timeout)}
		}
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("calling %s: %v", e.url, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEndpointResponse+1))
	if err != nil {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("reading the answer of %s: %v", e.url, err)}
	}
	if len(data) > maxEndpointResponse {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the answer of %s exceeds %d bytes", e.url, maxEndpointResponse)}
	}
	data = bytes.TrimSpace(data)
	if e.lambda && resp.Header.Get("X-Amz-Function-Error") != "" {
		return functionError(data)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if res, ok := errorJSON(data); ok {
			return res
		}
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s answered %s: %s", e.url, resp.Status, tail(string(data)))}
	}
	return jsonResult(data, e.url)
}

// functionError is the result of a Lambda function error: the payload's
// errorType and errorMessage name the error and cause.
func functionError(payload []byte) Result {
	if res, ok := errorJSON(payload); ok {
		return res
	}
	return Result{Error: "Lambda.Unknown", Cause: string(payload)}
}

// jsonResult takes a handler's answer (nothing stands for null) as the
// result.
func jsonResult(data []byte, from string) Result {
	if len(data) == 0 {
		return Result{Output: nil}
	}
	v, err := value.Parse(data)
	if err != nil {
		return Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s answered with something other than JSON: %v", from, err)}
	}
	return Result{Output: v}
}
