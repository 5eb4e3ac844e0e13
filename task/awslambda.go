package task

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go"

	"github.com/stepd/stepd/value"
)

// AwsLambda configures a handler that invokes the real AWS Lambda function
// through the AWS SDK for Go, with the credentials the SDK finds (the
// environment, the shared configuration and credentials files, SSO, ...).
type AwsLambda struct {
	// Region is the function's region; empty means the SDK's (AWS_REGION,
	// the profile's region). One of them must be set.
	Region string `json:"Region,omitempty"`
	// Endpoint replaces the region's Lambda endpoint, e.g. for a
	// Lambda-compatible service.
	Endpoint string `json:"Endpoint,omitempty"`
}

// awsLambda invokes a function with Lambda's Invoke API.
type awsLambda struct {
	client   *lambda.Client
	function string // the registry's name, for Invoke
	timeout  time.Duration
}

func newAwsLambda(at string, c *AwsLambda, function string, timeout time.Duration) (*awsLambda, error) {
	if function == "" {
		return nil, fmt.Errorf("registry: %s: AwsLambda serves Functions only", at)
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("registry: %s.AwsLambda.Endpoint: want an http or https URL, got %q", at, c.Endpoint)
		}
	}
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("registry: %s.AwsLambda: loading the AWS configuration: %w", at, err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("registry: %s.AwsLambda: no region: set Region, or AWS_REGION", at)
	}
	client := lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		// The state's Retry decides what to try again, as on AWS.
		o.RetryMaxAttempts = 1
	})
	return &awsLambda{client: client, function: function, timeout: timeout}, nil
}

// Invoke invokes the registered function with the request's input as its
// event.
func (a *awsLambda) Invoke(ctx context.Context, req *Request) Result {
	return a.invoke(ctx, req.Input, a.function, "")
}

// invokeFunction invokes the function as the task names it (name, partial
// ARN or ARN, and qualifier).
func (a *awsLambda) invokeFunction(ctx context.Context, req *Request, call lambdaCall) Result {
	qualifier := call.qualifier
	if ref, ok := parseFuncRef(call.function); ok && ref.qualifier != "" {
		qualifier = "" // already in the name
	}
	return a.invoke(ctx, req.Input, call.function, qualifier)
}

func (a *awsLambda) invoke(ctx context.Context, event any, function, qualifier string) Result {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	in := &lambda.InvokeInput{FunctionName: aws.String(function), Payload: value.Append(nil, event)}
	if qualifier != "" {
		in.Qualifier = aws.String(qualifier)
	}
	out, err := a.client.Invoke(ctx, in)
	if err != nil {
		return lambdaAPIError(ctx, err, function, a.timeout)
	}
	if out.FunctionError != nil {
		return functionError(out.Payload)
	}
	return jsonResult(out.Payload, "the Lambda function "+function)
}

// lambdaAPIError names a failed Invoke call as Step Functions does:
// Lambda.<error code> with the cause AWS's Java SDK writes, and
// Lambda.SdkClientException when no answer came.
func lambdaAPIError(ctx context.Context, err error, function string, timeout time.Duration) Result {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		status, reqID := 0, ""
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			status, reqID = re.HTTPStatusCode(), re.ServiceRequestID()
		}
		return Result{Error: "Lambda." + ae.ErrorCode(), Cause: fmt.Sprintf(
			"%s (Service: AWSLambda; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)", ae.ErrorMessage(), status, ae.ErrorCode(), reqID)}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Result{Error: "States.Timeout", Cause: fmt.Sprintf("the Lambda function %s did not answer within %s", function, timeout)}
	}
	return Result{Error: "Lambda.SdkClientException", Cause: fmt.Sprintf("Unable to execute HTTP request: %v", err)}
}
