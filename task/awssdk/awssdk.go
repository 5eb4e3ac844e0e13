// Package awssdk serves Task states that call AWS services — AWS SDK
// integrations (arn:aws:states:::aws-sdk:<service>:<action>) for every
// service whose API model awsmodel embeds, and the optimized integrations
// of DynamoDB, SQS, SNS and EventBridge — by calling the real service, or
// a local emulator of it, over HTTP. One generic caller, driven by the AWS
// service models, speaks the five AWS protocols (json, rest-json,
// rest-xml, query, ec2) and signs with SigV4; credentials and region come
// from the AWS SDK for Go's usual chain, endpoints from the configuration,
// AWS_ENDPOINT_URL_<SERVICE> and AWS_ENDPOINT_URL.
//
// It must not import the engine beside it, the other backends but
// task/awsmodel, or anything above (service, api, cmd/stepd …); registry
// wires it.
package awssdk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
)

// Config says where calls go. Everything is optional.
//
//	{"Region": "eu-west-1", "Endpoints": {"s3": "http://127.0.0.1:4569", "dynamodb": "http://127.0.0.1:8000"}}
type Config struct {
	// Region is the region of the services; empty means the AWS SDK's
	// (AWS_REGION, the profile's region).
	Region string `json:"Region,omitempty"`
	// Endpoints maps a service, named as a Resource names it (s3,
	// dynamodb, sqs, sns, eventbridge, sfn ...), to the base URL of the
	// service or of an emulator of it. They win over AWS_ENDPOINT_URL_*.
	Endpoints map[string]string `json:"Endpoints,omitempty"`
	// TimeoutSeconds bounds one call (default 60); the state's
	// TimeoutSeconds still applies.
	TimeoutSeconds int `json:"TimeoutSeconds,omitempty"`
	// PollSeconds is how often a .sync integration (ecs:runTask.sync,
	// batch:submitJob.sync ...) asks the service whether its job has
	// ended (default 5).
	PollSeconds float64 `json:"PollSeconds,omitempty"`
}

// Invoker calls AWS services. It is a task.Partial: it serves the AWS SDK
// and optimized integrations it has a model for.
type Invoker struct {
	cfg     Config
	timeout time.Duration
	poll    time.Duration
	client  *http.Client
	signer  *v4.Signer
	aws     func() (aws.Config, error)
}

// New checks the configuration; the AWS configuration (credentials,
// region) is loaded at the first call.
func New(c Config) (*Invoker, error) {
	for svc, e := range c.Endpoints {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("endpoint of %s: want an http or https URL, got %q", svc, e)
		}
	}
	if c.TimeoutSeconds < 0 {
		return nil, errors.New("timeout: TimeoutSeconds must not be negative")
	}
	timeout := 60 * time.Second
	if c.TimeoutSeconds > 0 {
		timeout = time.Duration(c.TimeoutSeconds) * time.Second
	}
	if c.PollSeconds < 0 || c.PollSeconds > 3600 {
		return nil, errors.New("poll: PollSeconds must be between 0 and 3600")
	}
	poll := 5 * time.Second
	if c.PollSeconds > 0 {
		poll = max(time.Duration(c.PollSeconds*float64(time.Second)), time.Millisecond)
	}
	a := &Invoker{cfg: c, timeout: timeout, poll: poll, signer: v4.NewSigner(),
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	a.aws = sync.OnceValues(func() (aws.Config, error) {
		var opts []func(*config.LoadOptions) error
		if c.Region != "" {
			opts = append(opts, config.WithRegion(c.Region))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return config.LoadDefaultConfig(ctx, opts...)
	})
	return a, nil
}

// call is a parsed Resource.
type call struct {
	service   string // as the Resource names it: s3, dynamodb, sfn
	action    string
	optimized bool
	wait      bool // .waitForTaskToken
	sync      bool // .sync: run a job and wait for it to end (jobs)
}

// optimizedActions are the optimized integrations served, by Resource
// service and action.
var optimizedActions = map[string]bool{
	"dynamodb:getItem": true, "dynamodb:putItem": true, "dynamodb:updateItem": true, "dynamodb:deleteItem": true,
	"sqs:sendMessage": true, "sns:publish": true, "events:putEvents": true,
	"ecs:runTask": true, "batch:submitJob": true, "glue:startJobRun": true, "codebuild:startBuild": true,
	"athena:startQueryExecution": true,
}

// parseResource parses a request's Resource, whose integration pattern
// (task.Request.Pattern) is p: the service and action it names, and
// whether it waits for its token or, for a job, for the job's end. It
// refuses what stepd does not call: .sync for an action that runs no job,
// .sync:2, activities.
func parseResource(resource string, p task.Pattern) (call, bool) {
	rest, ok := strings.CutPrefix(resource, "arn:aws:states:::")
	if !ok {
		return call{}, false
	}
	var c call
	if r, ok := strings.CutPrefix(rest, "aws-sdk:"); ok {
		svc, action, ok := strings.Cut(r, ":")
		if !ok || svc == "" || action == "" {
			return call{}, false
		}
		c = call{service: svc, action: action}
	} else {
		svc, action, ok := strings.Cut(rest, ":")
		if !ok {
			return call{}, false
		}
		c = call{service: svc, action: action, optimized: true}
	}
	if suffix := p.Suffix(); suffix != "" {
		if c.action, ok = strings.CutSuffix(c.action, suffix); !ok {
			return call{}, false
		}
	}
	switch p {
	case task.RequestResponse:
	case task.WaitForTaskToken:
		c.wait = true
	case task.Sync:
		if !c.optimized || jobs[c.service+":"+c.action] == nil {
			return call{}, false
		}
		c.sync = true
	default:
		return call{}, false
	}
	if strings.Contains(c.action, ".") || strings.Contains(c.action, ":") {
		return call{}, false // another pattern's suffix
	}
	if c.optimized && !optimizedActions[c.service+":"+c.action] {
		return call{}, false
	}
	return c, true
}

// Serves reports whether the request is an AWS SDK or optimized
// integration with an embedded model.
func (a *Invoker) Serves(req *task.Request) bool {
	c, ok := parseResource(req.Resource, req.Pattern)
	if !ok {
		return false
	}
	_, _, found, err := awsmodel.Operation(c.service, c.action)
	return found && err == nil
}

// Waits reports true (task.Waiting): it calls an AWS service, so the engine
// calls it on a goroutine of its own.
func (a *Invoker) Waits(*task.Request) bool { return true }

// Invoke calls the service.
func (a *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	c, ok := parseResource(req.Resource, req.Pattern)
	if !ok {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the resource %s of state %q is not an AWS SDK or optimized integration stepd calls", req.Resource, req.StateName)}
	}
	api, op, found, err := awsmodel.Operation(c.service, c.action)
	if err != nil {
		return task.Result{Error: "States.Runtime", Cause: err.Error()}
	}
	if !found {
		what := "service"
		if api != nil {
			what = "action"
		}
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the resource %s of state %q names an unknown %s", req.Resource, req.StateName, what)}
	}
	if job := jobs[c.service+":"+c.action]; job != nil && c.optimized {
		return a.runJob(ctx, req, c, job)
	}
	params := req.Input
	if c.optimized {
		if params, err = optimizedParams(c, params); err != nil {
			return task.Result{Error: "States.Runtime", Cause: err.Error()}
		}
	}
	out, resp, res := a.call(ctx, c, api, op, params, req.RawBody)
	if resp == nil || res.Failed() {
		return res
	}
	if c.optimized {
		return optimizedResult(c, out, resp)
	}
	return task.Result{Output: out}
}

// call makes one call of the operation with params: its output and answer,
// or the failure (the answer is nil when none came). A raw body, when not
// nil, is the request's body as it is (task.Request.RawBody).
func (a *Invoker) call(ctx context.Context, c call, api *awsmodel.API, op *awsmodel.Op, params any, raw []byte) (any, *response, task.Result) {
	hreq, err := buildRequest(api, op, params)
	if err != nil {
		return nil, nil, task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("%s:%s: %v", c.service, c.action, err)}
	}
	if raw != nil {
		hreq.body = raw
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	resp, res := a.send(ctx, c, api, hreq)
	if resp == nil {
		return nil, nil, res
	}
	if resp.status >= 300 {
		return nil, resp, apiError(api, resp, c)
	}
	out, err := parseOutput(api, op, resp)
	if err != nil {
		return nil, resp, task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s: %v", c.service, c.action, err)}
	}
	return out, resp, task.Result{}
}

// send addresses, signs and sends the request; it returns nil and the
// failure when no answer came.
func (a *Invoker) send(ctx context.Context, c call, api *awsmodel.API, r *request) (*response, task.Result) {
	fail := func(format string, args ...any) (*response, task.Result) {
		return nil, task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s: ", c.service, c.action) + fmt.Sprintf(format, args...)}
	}
	cfg, err := a.aws()
	if err != nil {
		return fail("loading the AWS configuration: %v", err)
	}
	region := cfg.Region
	if api.GlobalRegion != "" {
		region = api.GlobalRegion
	}
	if region == "" {
		return fail("no region: set AWS_REGION, a profile's region, or Region in the registry's Aws section")
	}
	if cfg.Credentials == nil {
		return fail("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or sign in with aws sso login")
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	creds, err := cfg.Credentials.Retrieve(cctx)
	cancel()
	if err != nil {
		return fail("no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or sign in with aws sso login): %v", err)
	}
	base, custom := a.endpoint(ctx, c.service, api, cfg)
	if base == "" {
		base = "https://" + api.EndpointPrefix + "." + region + ".amazonaws.com"
		if api.GlobalRegion != "" {
			base = "https://" + api.EndpointPrefix + ".amazonaws.com"
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		return fail("endpoint %q: %v", base, err)
	}
	path := r.path
	if r.hostPrefix != "" && !custom {
		u.Host = r.hostPrefix + u.Host // an emulator's host is left as configured
	}
	if r.bucket != "" && !custom && virtualHostable(r.bucket) {
		// AWS's own S3 endpoint: virtual-hosted addressing. Behind a
		// custom endpoint (an emulator) the bucket stays in the path.
		u.Host = r.bucket + "." + u.Host
		path = strings.TrimPrefix(path, "/"+escapePath(r.bucket))
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
	}
	u.RawPath = strings.TrimSuffix(u.EscapedPath(), "/") + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = strings.ReplaceAll(r.query.Encode(), "+", "%20")
	var body io.Reader
	if r.body != nil {
		body = strings.NewReader(string(r.body))
	}
	hreq, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return fail("%v", err)
	}
	for k, vs := range r.header {
		hreq.Header[k] = vs
	}
	sum := sha256.Sum256(r.body)
	hash := hex.EncodeToString(sum[:])
	signing := api.SigningName
	if signing == "" {
		signing = api.EndpointPrefix
	}
	if signing == "s3" {
		hreq.Header.Set("X-Amz-Content-Sha256", hash)
	}
	if err := a.signer.SignHTTP(ctx, creds, hreq, hash, signing, region, time.Now()); err != nil {
		return fail("signing the request: %v", err)
	}
	hresp, err := a.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fail("no answer from %s within %s", u.Host, a.timeout)
		}
		if v1, ok := v1Names[c.service]; ok && c.optimized {
			return nil, clientError(v1.prefix, u.Host, err)
		}
		return fail("Unable to execute HTTP request: %v", err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, 64<<20))
	if err != nil {
		return fail("reading the answer: %v", err)
	}
	return &response{status: hresp.StatusCode, header: hresp.Header, body: data}, task.Result{}
}

// endpoint is the base URL configured for a service and whether it is a
// custom one: the registry's Endpoints, then as the AWS SDKs read them,
// AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the shared configuration's
// services section and the profile's endpoint_url, unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (or the profile's
// ignore_configured_endpoint_urls) is true.
func (a *Invoker) endpoint(ctx context.Context, service string, api *awsmodel.API, cfg aws.Config) (string, bool) {
	for _, name := range []string{service, api.EndpointPrefix, strings.ToLower(strings.ReplaceAll(api.ServiceID, " ", ""))} {
		if e, ok := a.cfg.Endpoints[name]; ok {
			return e, true
		}
	}
	var env *config.EnvConfig
	var shared *config.SharedConfig
	for _, src := range cfg.ConfigSources {
		switch c := src.(type) {
		case config.EnvConfig:
			env = &c
		case config.SharedConfig:
			shared = &c
		}
	}
	if env != nil {
		if ignore, found, _ := env.GetIgnoreConfiguredEndpoints(ctx); found && ignore {
			return "", false
		}
	}
	if shared != nil && (env == nil || env.IgnoreConfiguredEndpoints == nil) {
		if ignore, found, _ := shared.GetIgnoreConfiguredEndpoints(ctx); found && ignore {
			return "", false
		}
	}
	if env != nil {
		if e, found, _ := env.GetServiceBaseEndpoint(ctx, api.ServiceID); found {
			return e, true
		}
		if env.BaseEndpoint != "" {
			return env.BaseEndpoint, true
		}
	}
	if shared != nil {
		if e, found, _ := shared.GetServiceBaseEndpoint(ctx, api.ServiceID); found {
			return e, true
		}
		if shared.BaseEndpoint != "" {
			return shared.BaseEndpoint, true
		}
	}
	return "", false
}

// virtualHostable reports whether a bucket name can be a host name label.
func virtualHostable(bucket string) bool {
	if len(bucket) < 3 || len(bucket) > 63 || strings.Contains(bucket, ".") {
		return false
	}
	for _, c := range bucket {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
