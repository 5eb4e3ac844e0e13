// Package endpoint serves tasks by POSTing their input as JSON to an HTTP
// endpoint (Invoker): any URL that answers with the JSON result, or an
// endpoint speaking the Lambda Invoke API, such as the Lambda runtime
// interface emulator or SAM local.
//
// It must not import the engine beside it, the other backends but
// task/lambdashape, or anything above (service, api, cmd/stepd …); registry
// wires it.
package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

// Invoker POSTs the event (the task's input) as JSON to a URL and takes the
// JSON response as the result. With Lambda set it speaks the Lambda Invoke
// API.
//
// The answer is a failure, as Lambda reports one, when it carries the
// X-Amz-Function-Error header (whatever its status; the body holds
// errorType and errorMessage, or is the cause of a Lambda.Unknown error),
// or, with LambdaShaped set, when its body is a JSON object with an
// errorType; an answer outside 2xx fails too (its Lambda-style or ASL-style
// error object naming the error, States.TaskFailed otherwise).
type Invoker struct {
	URL    string
	Lambda bool
	// LambdaShaped takes an answer in Lambda's error shape
	// ({"errorType": …, "errorMessage": …}) as the function's error even
	// without the header.
	LambdaShaped bool
	// Timeout bounds each call; it must be positive.
	Timeout time.Duration
}

// maxEndpointResponse is the largest response body read (Lambda's 6 MB
// synchronous payload limit).
const maxEndpointResponse = 6 << 20

// Waits reports true (task.Waiting): it calls an HTTP endpoint, so the
// engine calls it on a goroutine of its own.
func (e *Invoker) Waits(*task.Request) bool { return true }

// Invoke POSTs the request's input.
func (e *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	body := value.Append(nil, req.Input)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("calling %s: %v", e.URL, err)}
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
			return task.Result{Error: "States.Timeout", Cause: fmt.Sprintf("%s did not answer within %s", e.URL, e.Timeout)}
		}
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("calling %s: %v", e.URL, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEndpointResponse+1))
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("reading the answer of %s: %v", e.URL, err)}
	}
	if len(data) > maxEndpointResponse {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the answer of %s exceeds %d bytes", e.URL, maxEndpointResponse)}
	}
	data = bytes.TrimSpace(data)
	if resp.Header.Get("X-Amz-Function-Error") != "" {
		return lambdashape.FunctionError(data)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if res, ok := lambdashape.ErrorResult(data); ok {
			return res
		}
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s answered %s: %s", e.URL, resp.Status, tail(string(data)))}
	}
	if e.LambdaShaped {
		if res, ok := lambdashape.ShapedError(data); ok {
			return res
		}
	}
	return lambdashape.PayloadResult(data, e.URL)
}

// maxQuoted is how much of an unexpected answer a failure cause quotes.
const maxQuoted = 2048

// tail is the end of s that a failure cause quotes.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxQuoted {
		s = "..." + s[len(s)-maxQuoted:]
	}
	return s
}
