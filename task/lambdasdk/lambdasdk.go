// Package lambdasdk serves Lambda tasks with the real AWS Lambda function
// (Invoker), through the AWS SDK for Go and Lambda's Invoke API: the one
// Lambda backend that calls AWS. The shapes it shares with the other Lambda
// backends are task/lambdashape's.
//
// It must not import the engine beside it, the other backends but
// task/lambdashape, or anything above (service, api, cmd/stepd …); registry
// wires it.
package lambdasdk

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	sdklambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/stepd/stepd/internal/sdkhttp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

// Config configures a handler that invokes the real AWS Lambda function
// through the AWS SDK for Go, with the credentials the SDK finds (the
// environment, the shared configuration and credentials files, SSO, ...).
type Config struct {
	// Region is the function's region; empty means the SDK's (AWS_REGION,
	// the profile's region). One of them must be set.
	Region string `json:"Region,omitempty"`
	// Endpoint replaces the region's Lambda endpoint, e.g. for a
	// Lambda-compatible service.
	Endpoint string `json:"Endpoint,omitempty"`
}

// Invoker invokes a function with Lambda's Invoke API.
type Invoker struct {
	client   *sdklambda.Client
	function string // the registry's name, for Invoke
	timeout  time.Duration
}

// New makes the invoker of the named function (as its Invoke method calls
// it), each call bounded by timeout. It loads the AWS configuration now.
func New(c *Config, function string, timeout time.Duration) (*Invoker, error) {
	if function == "" {
		return nil, errors.New("no function")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("want an http or https Endpoint URL, got %q", c.Endpoint)
		}
	}
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no region: set Region, or AWS_REGION")
	}
	client := sdklambda.NewFromConfig(cfg, func(o *sdklambda.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		// The state's Retry decides what to try again, as on AWS.
		o.RetryMaxAttempts = 1
		// A function that ran must not be reported failed (sdkhttp).
		o.HTTPClient = sdkhttp.Wrap(o.HTTPClient)
	})
	return &Invoker{client: client, function: function, timeout: timeout}, nil
}

// Waits reports true (task.Waiting): it calls AWS Lambda, so the engine
// calls it on a goroutine of its own.
func (a *Invoker) Waits(*task.Request) bool { return true }

// Invoke invokes the function New was given with the request's input as its
// event.
func (a *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	return a.invoke(ctx, req.Input, a.function, "")
}

// InvokeFunction invokes the function as the Lambda task names it (name,
// partial ARN or ARN, and qualifier), with req.Input as the event.
func (a *Invoker) InvokeFunction(ctx context.Context, req *task.Request, call lambdashape.Call) task.Result {
	qualifier := call.Qualifier
	if ref, ok := lambdashape.ParseRef(call.Function); ok && ref.Qualifier != "" {
		qualifier = "" // already in the name
	}
	return a.invoke(ctx, req.Input, call.Function, qualifier)
}

func (a *Invoker) invoke(ctx context.Context, event any, function, qualifier string) task.Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	in := &sdklambda.InvokeInput{FunctionName: aws.String(function), Payload: value.Append(nil, event)}
	if qualifier != "" {
		in.Qualifier = aws.String(qualifier)
	}
	out, err := a.client.Invoke(ctx, in)
	if err != nil {
		return lambdaAPIError(ctx, err, function, a.timeout)
	}
	if out.FunctionError != nil {
		return lambdashape.FunctionError(out.Payload)
	}
	return lambdashape.PayloadResult(out.Payload, "the Lambda function "+function)
}

// lambdaAPIError names a failed Invoke call as Step Functions does:
// Lambda.<error code> with the cause AWS's Java SDK writes, and
// Lambda.SdkClientException when no answer came.
func lambdaAPIError(ctx context.Context, err error, function string, timeout time.Duration) task.Result {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		status, reqID := 0, ""
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			status, reqID = re.HTTPStatusCode(), re.ServiceRequestID()
		}
		return task.Result{Error: "Lambda." + ae.ErrorCode(), Cause: fmt.Sprintf(
			"%s (Service: AWSLambda; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)", ae.ErrorMessage(), status, ae.ErrorCode(), reqID)}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return task.Result{Error: "States.Timeout", Cause: fmt.Sprintf("the Lambda function %s did not answer within %s", function, timeout)}
	}
	return task.Result{Error: "Lambda.SdkClientException", Cause: fmt.Sprintf("Unable to execute HTTP request: %v", err)}
}
