// Package registry serves Task states with the local handlers a
// configuration file (stepd's --config) names for Lambda functions and other
// resources: a command, a URL, a Lambda Invoke API endpoint or the real AWS
// Lambda function, each its own backend package; HTTP Tasks with the
// connections it gives; and, for AWS SDK and optimized integrations no
// handler serves, the AWS service itself (or the emulator its Aws section
// names) through task/awssdk. Invoker routes each request to its handler.
//
// It imports the task backends it wires, and must not import the engine
// beside it or anything above (service, api, cmd/stepd …).
package registry

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stepd/stepd/internal/strictjson"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/task/command"
	"github.com/stepd/stepd/task/endpoint"
	"github.com/stepd/stepd/task/httptask"
	"github.com/stepd/stepd/task/lambdasdk"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/task/s3folder"
)

// Config is the resource registry's configuration file: which local
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
//	  "Connections": {"arn:aws:events:...:connection/api/id": {"ApiKeyName": "x-api-key", "ApiKeyValue": "..."}},
//	  "Aws": {"Region": "us-east-1", "Endpoints": {"s3": "http://127.0.0.1:4569", "dynamodb": "http://127.0.0.1:8000"}},
//	  "Buckets": {"my-input-bucket": "./data"}
//	}
//
// A function is named as the Lambda API accepts it (name, partial ARN or
// ARN, optionally qualified) and serves both the bare function ARN as a
// Resource (the result is the function's return value) and
// arn:aws:states:::lambda:invoke (the result is the Invoke response with
// Payload). A resource key is an exact Resource or a prefix ending in "*".
// Aws says where AWS SDK and optimized integrations that no handler
// serves are sent (awssdk.Config); without it they go to AWS with the
// AWS SDK's credentials, region and AWS_ENDPOINT_URL* settings.
type Config struct {
	Functions   map[string]Handler             `json:"Functions,omitempty"`
	Resources   map[string]Handler             `json:"Resources,omitempty"`
	Connections map[string]httptask.Connection `json:"Connections,omitempty"`
	Aws         *awssdk.Config                 `json:"Aws,omitempty"`
	// Log receives what Command handlers write to standard error (nil:
	// slog.Default()); it is not part of the file.
	Log *slog.Logger `json:"-"`
	// Buckets maps an Amazon S3 bucket name to a local folder that stands
	// in for it (task/s3folder): getObject, putObject and listObjectsV2
	// on that bucket, by a Task or a Distributed Map's ItemReader, read
	// and write its files. A relative folder is taken relative to the
	// configuration file.
	Buckets map[string]string `json:"Buckets,omitempty"`
	// Events are where stepd serve delivers the status changes of Standard
	// executions as EventBridge events (package notify).
	Events []EventTarget `json:"Events,omitempty"`
}

// EventTarget is one target of Config.Events: exactly one of Url (each
// event POSTed as JSON) and Command (the program and its arguments, each
// event on its standard input, with Env added to its environment).
type EventTarget struct {
	Url     string            `json:"Url,omitempty"`
	Command []string          `json:"Command,omitempty"`
	Env     map[string]string `json:"Env,omitempty"`
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
	AwsLambda      *lambdasdk.Config `json:"AwsLambda,omitempty"`
	// TimeoutSeconds bounds one call to Url, LambdaEndpoint or AwsLambda (default 900,
	// Lambda's limit); the state's TimeoutSeconds still applies.
	TimeoutSeconds int `json:"TimeoutSeconds,omitempty"`
	// LambdaShaped marks a Command, Url or LambdaEndpoint handler whose
	// answers follow Lambda's error shape: an answer that is a JSON object
	// with an errorType fails the task as that error, even from a program
	// that exits 0 or an endpoint that answers 200 without
	// X-Amz-Function-Error.
	LambdaShaped bool `json:"LambdaShaped,omitempty"`
}

// Invoker serves Task states from a Config. It is a task.Partial: it
// serves the registered functions and resources and HTTP Tasks.
type Invoker struct {
	functions []registered
	resources task.Router
	http      *httptask.Invoker
	aws       *awssdk.Invoker
	buckets   *s3folder.Invoker
}

type registered struct {
	name string
	ref  lambdashape.Ref
	inv  task.Invoker
}

// Parse reads a registry configuration, rejecting unknown fields
// and handlers that are not exactly one of Command, Url, LambdaEndpoint or
// AwsLambda.
func Parse(data []byte) (*Invoker, error) {
	var cfg Config
	if err := strictjson.Decode(data, &cfg); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	return New(cfg)
}

// ReadConfig reads a registry configuration file, rejecting unknown
// fields, naming the bad member by its path and place
// (registry.json:3:7: Functions.greet.Comand: unknown member (did you
// mean Command?)). A handler's relative Dir is taken relative to the file's folder,
// so that a registry kept next to its handlers works from any working
// directory.
func ReadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var cfg Config
	if err := strictjson.DecodeFile(path, data, &cfg); err != nil {
		return Config{}, err
	}
	base := filepath.Dir(path)
	for b, dir := range cfg.Buckets {
		if dir != "" && !filepath.IsAbs(dir) {
			cfg.Buckets[b] = filepath.Join(base, dir)
		}
	}
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

// New builds a registry from its configuration.
func New(cfg Config) (*Invoker, error) {
	r := &Invoker{http: &httptask.Invoker{Connections: cfg.Connections}}
	var awsCfg awssdk.Config
	if cfg.Aws != nil {
		awsCfg = *cfg.Aws
	}
	aws, err := awssdk.New(awsCfg)
	if err != nil {
		return nil, fmt.Errorf("registry: Aws: %w", err)
	}
	r.aws = aws
	for b, dir := range cfg.Buckets {
		if b == "" || dir == "" {
			return nil, fmt.Errorf("registry: Buckets: want a bucket name and its folder, got %q: %q", b, dir)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("registry: Buckets.%s: %q is not a folder", b, dir)
		}
	}
	r.buckets = &s3folder.Invoker{Buckets: cfg.Buckets}
	for _, name := range slices.Sorted(maps.Keys(cfg.Functions)) {
		h := cfg.Functions[name]
		ref, ok := lambdashape.ParseRef(name)
		if !ok {
			return nil, fmt.Errorf("registry: Functions.%s: not a Lambda function name, partial ARN or ARN", name)
		}
		inv, err := h.invoker("Functions."+name, ref.Name, cfg.Log)
		if err != nil {
			return nil, err
		}
		r.functions = append(r.functions, registered{name: name, ref: ref, inv: inv})
	}
	for _, pattern := range slices.Sorted(maps.Keys(cfg.Resources)) {
		if pattern == "" {
			return nil, fmt.Errorf("registry: Resources: an empty resource name")
		}
		inv, err := cfg.Resources[pattern].invoker("Resources."+pattern, "", cfg.Log)
		if err != nil {
			return nil, err
		}
		r.resources.Handle(pattern, inv)
	}
	return r, nil
}

func (h Handler) invoker(at, function string, log *slog.Logger) (task.Invoker, error) {
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
	if h.LambdaShaped && h.AwsLambda != nil {
		return nil, fmt.Errorf("registry: %s.LambdaShaped: AwsLambda reports function errors itself; LambdaShaped goes with Command, Url or LambdaEndpoint", at)
	}
	switch {
	case h.AwsLambda != nil:
		if function == "" {
			return nil, fmt.Errorf("registry: %s: AwsLambda serves Functions only", at)
		}
		if e := h.AwsLambda.Endpoint; e != "" && !httpURL(e) {
			return nil, fmt.Errorf("registry: %s.AwsLambda.Endpoint: want an http or https URL, got %q", at, e)
		}
		inv, err := lambdasdk.New(h.AwsLambda, function, timeout)
		if err != nil {
			return nil, fmt.Errorf("registry: %s.AwsLambda: %w", at, err)
		}
		return inv, nil
	case len(h.Command) > 0:
		c := &command.Invoker{Path: h.Command[0], Args: h.Command[1:], Dir: h.Dir, Log: log, LambdaShaped: h.LambdaShaped}
		for _, k := range slices.Sorted(maps.Keys(h.Env)) {
			c.Env = append(c.Env, k+"="+h.Env[k])
		}
		return c, nil
	case h.URL != "":
		if !httpURL(h.URL) {
			return nil, fmt.Errorf("registry: %s.Url: want an http or https URL, got %q", at, h.URL)
		}
		return &endpoint.Invoker{URL: h.URL, Timeout: timeout, LambdaShaped: h.LambdaShaped}, nil
	default:
		if !httpURL(h.LambdaEndpoint) {
			return nil, fmt.Errorf("registry: %s.LambdaEndpoint: want an http or https URL, got %q", at, h.LambdaEndpoint)
		}
		if function == "" {
			return nil, fmt.Errorf("registry: %s: LambdaEndpoint serves Functions only", at)
		}
		return &endpoint.Invoker{URL: strings.TrimSuffix(h.LambdaEndpoint, "/") + "/2015-03-31/functions/" + url.PathEscape(function) + "/invocations",
			Lambda: true, Timeout: timeout, LambdaShaped: h.LambdaShaped}, nil
	}
}

// httpURL reports whether s is an http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Serves reports whether the registry has a handler for req, its own or
// the AWS service's, or answers it as AWS would: a Lambda function it does
// not know is not found (Lambda.ResourceNotFoundException).
func (r *Invoker) Serves(req *task.Request) bool {
	if r.ServesLocally(req) || r.aws.Serves(req) {
		return true
	}
	_, isLambda := lambdashape.CallOf(req)
	return isLambda
}

// ServesLocally reports whether the registry has a handler of its own for
// req (a function, a resource or an HTTP Task), not counting AWS services.
func (r *Invoker) ServesLocally(req *task.Request) bool {
	if call, ok := lambdashape.CallOf(req); ok {
		if _, found := r.function(call.Function); found {
			return true
		}
	}
	if r.http.Serves(req) {
		return true
	}
	return r.resources.Routes(req.Resource) || r.buckets.Serves(req)
}

// Waits reports true (task.Waiting): every handler it serves runs a program
// or calls over HTTP, so the engine calls it on a goroutine of its own.
func (r *Invoker) Waits(*task.Request) bool { return true }

// Invoke serves req with its registered handler.
func (r *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	if call, ok := lambdashape.CallOf(req); ok {
		if fn, found := r.function(call.Function); found {
			return r.invokeFunction(ctx, req, call, fn)
		}
		if call.Err != nil {
			return *call.Err
		}
	}
	if r.http.Serves(req) {
		return r.http.Invoke(ctx, req)
	}
	if r.resources.Routes(req.Resource) {
		return r.resources.Invoke(ctx, req)
	}
	if r.buckets.Serves(req) {
		return r.buckets.Invoke(ctx, req)
	}
	if r.aws.Serves(req) {
		return r.aws.Invoke(ctx, req)
	}
	if call, ok := lambdashape.CallOf(req); ok {
		// A function no handler serves does not exist, as Lambda answers:
		// a task error the state may catch.
		return lambdashape.NotFound(call)
	}
	return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf(
		"no handler for resource %s of state %q: add it to Resources (or the function to Functions) in the registry file, or give a mock test case",
		req.Resource, req.StateName)}
}

func (r *Invoker) function(name string) (registered, bool) {
	for _, f := range r.functions {
		if f.name == name {
			return f, true
		}
	}
	ref, ok := lambdashape.ParseRef(name)
	if !ok {
		return registered{}, false
	}
	for _, f := range r.functions {
		if f.ref.Matches(ref) {
			return f, true
		}
	}
	return registered{}, false
}

func (r *Invoker) invokeFunction(ctx context.Context, req *task.Request, call lambdashape.Call, fn registered) task.Result {
	if call.Err != nil {
		return *call.Err
	}
	event, perr := call.Event()
	if perr != nil {
		return *perr
	}
	sub := *req
	sub.Input = event
	var res task.Result
	if a, ok := fn.inv.(*lambdasdk.Invoker); ok {
		res = a.InvokeFunction(ctx, &sub, call) // the function as the task names it
	} else {
		res = fn.inv.Invoke(ctx, &sub)
	}
	if !res.Failed() && !call.Direct {
		res.Output = lambdashape.InvokeResponse(res.Output, call)
	}
	return res
}
