package awssdk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// job is an optimized integration that starts a job: ECS runTask, Batch
// submitJob, Glue startJobRun, CodeBuild startBuild, Athena
// startQueryExecution. With .sync, Step Functions records the start
// call's answer (TaskSubmitted), then polls the service's describe call
// until the job ends: the state's output is the job as described, a job
// that ended badly fails the state with States.TaskFailed and the job as
// cause, and a state that gives up on the job (timeout, a failed
// sibling, StopExecution) stops it.
type job struct {
	// wait: .waitForTaskToken is allowed.
	wait bool
	// token names the start call's idempotency token parameter, if any:
	// a .sync start sent again after a restart (before TaskSubmitted was
	// committed) then finds the job started the first time.
	token string
	// started adds to the start call's result what Step Functions adds.
	started func(params, out *value.Object) *value.Object
	// describe is the describe call for the started job (from the start
	// call's result and the state's parameters).
	describe func(started, params *value.Object) (action string, in *value.Object, err error)
	// ended reads the describe call's output: whether the job ended,
	// whether it ended well, and the state's output (or the cause).
	ended func(out *value.Object) (done, ok bool, result *value.Object)
	// stop is the call that stops the job.
	stop func(started, params *value.Object) (action string, in *value.Object, err error)
}

// jobs are the job integrations, by Resource service and action.
var jobs = map[string]*job{
	"ecs:runTask": {
		wait:  true,
		token: "ClientToken",
		describe: func(started, _ *value.Object) (string, *value.Object, error) {
			t, err := first(started, "Tasks")
			if err != nil {
				return "", nil, err
			}
			return "describeTasks", value.ObjectOf("Cluster", str(t, "ClusterArn"), "Tasks", []any{str(t, "TaskArn")}), nil
		},
		ended: func(out *value.Object) (bool, bool, *value.Object) {
			t, err := first(out, "Tasks")
			if err != nil {
				return true, false, out // the task is gone: Failures say why
			}
			if str(t, "LastStatus") != "STOPPED" {
				return false, false, nil
			}
			ok := str(t, "StopCode") != "TaskFailedToStart"
			cs, _ := t.Get("Containers")
			list, _ := cs.([]any)
			for _, c := range list {
				if co, isObj := c.(*value.Object); isObj {
					if code, has := co.Get("ExitCode"); has {
						if n, isNum := code.(value.Number); isNum && n.Float64() != 0 {
							ok = false
						}
					}
				}
			}
			return true, ok, t
		},
		stop: func(started, _ *value.Object) (string, *value.Object, error) {
			t, err := first(started, "Tasks")
			if err != nil {
				return "", nil, err
			}
			return "stopTask", value.ObjectOf("Cluster", str(t, "ClusterArn"), "Task", str(t, "TaskArn"),
				"Reason", "Task stopped by AWS Step Functions (stepd): the state no longer waits for it"), nil
		},
	},
	"batch:submitJob": {
		wait: true,
		describe: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "JobId")
			return "describeJobs", value.ObjectOf("Jobs", []any{id}), err
		},
		ended: func(out *value.Object) (bool, bool, *value.Object) {
			j, err := first(out, "Jobs")
			if err != nil {
				return true, false, out
			}
			switch str(j, "Status") {
			case "SUCCEEDED":
				return true, true, j
			case "FAILED":
				return true, false, j
			}
			return false, false, nil
		},
		stop: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "JobId")
			return "terminateJob", value.ObjectOf("JobId", id, "Reason", "Terminated by AWS Step Functions (stepd): the state no longer waits for the job"), err
		},
	},
	"glue:startJobRun": {
		started: func(params, out *value.Object) *value.Object {
			// Step Functions adds the job's name to StartJobRun's answer.
			return out.With("JobName", str(params, "JobName"))
		},
		describe: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "JobRunId")
			return "getJobRun", value.ObjectOf("JobName", str(started, "JobName"), "RunId", id), err
		},
		ended: func(out *value.Object) (bool, bool, *value.Object) {
			v, _ := out.Get("JobRun")
			r, _ := v.(*value.Object)
			if r == nil {
				return true, false, out
			}
			switch str(r, "JobRunState") {
			case "SUCCEEDED":
				return true, true, r
			case "FAILED", "TIMEOUT", "ERROR", "STOPPED", "EXPIRED":
				return true, false, r
			}
			return false, false, nil
		},
		stop: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "JobRunId")
			return "batchStopJobRun", value.ObjectOf("JobName", str(started, "JobName"), "JobRunIds", []any{id}), err
		},
	},
	"codebuild:startBuild": {
		token: "IdempotencyToken",
		describe: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := buildID(started)
			return "batchGetBuilds", value.ObjectOf("Ids", []any{id}), err
		},
		ended: func(out *value.Object) (bool, bool, *value.Object) {
			b, err := first(out, "Builds")
			if err != nil {
				return true, false, out
			}
			result := value.ObjectOf("Build", b)
			switch str(b, "BuildStatus") {
			case "SUCCEEDED":
				return true, true, result
			case "FAILED", "FAULT", "TIMED_OUT", "STOPPED":
				return true, false, result
			}
			return false, false, nil
		},
		stop: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := buildID(started)
			return "stopBuild", value.ObjectOf("Id", id), err
		},
	},
	"athena:startQueryExecution": {
		token: "ClientRequestToken",
		describe: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "QueryExecutionId")
			return "getQueryExecution", value.ObjectOf("QueryExecutionId", id), err
		},
		ended: func(out *value.Object) (bool, bool, *value.Object) {
			v, _ := out.Get("QueryExecution")
			q, _ := v.(*value.Object)
			if q == nil {
				return true, false, out
			}
			st, _ := q.Get("Status")
			so, _ := st.(*value.Object)
			result := value.ObjectOf("QueryExecution", q)
			switch str(so, "State") {
			case "SUCCEEDED":
				return true, true, result
			case "FAILED", "CANCELLED":
				return true, false, result
			}
			return false, false, nil
		},
		stop: func(started, _ *value.Object) (string, *value.Object, error) {
			id, err := need(started, "QueryExecutionId")
			return "stopQueryExecution", value.ObjectOf("QueryExecutionId", id), err
		},
	},
}

// runJob serves a job integration: the start call (request-response and
// .waitForTaskToken answer with it), and with .sync the wait for the job.
func (a *Invoker) runJob(ctx context.Context, req *task.Request, c call, j *job) task.Result {
	if c.wait && !j.wait {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the resource %s of state %q: %s:%s does not support .waitForTaskToken", req.Resource, req.StateName, c.service, c.action)}
	}
	params, _ := req.Input.(*value.Object)
	if params == nil {
		params = value.NewObject(0)
	}
	started, _ := req.Submitted.(*value.Object)
	if !c.sync || started == nil {
		if c.sync && j.token != "" && !params.Has(j.token) {
			params = params.With(j.token, idempotencyToken(req))
		}
		out, resp, res := a.invokeAction(ctx, c, c.action, params)
		if res.Failed() {
			return res
		}
		res = optimizedResult(c, out, resp)
		started, _ = res.Output.(*value.Object)
		if j.started != nil {
			started = j.started(params, started)
			res.Output = started
		}
		if c.service == "ecs" && (c.sync || c.wait) {
			if f, _ := started.Get("Failures"); len(asList(f)) > 0 {
				return task.Result{Error: "AmazonECS.Unknown", Cause: value.String(started)}
			}
		}
		if !c.sync {
			return res
		}
		if req.Submit != nil {
			req.Submit(started)
		}
	}
	return a.waitJob(ctx, c, j, started, params)
}

// Consecutive failures of the describe call that are forgiven (a throttled
// or unavailable service, no answer) before the state fails with the last.
const pollFailures = 5

// waitJob polls the started job until it ends, or stops it when ctx ends
// because the state gave up on it (task.ErrCancelled).
func (a *Invoker) waitJob(ctx context.Context, c call, j *job, started, params *value.Object) task.Result {
	action, in, err := j.describe(started, params)
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s.sync: the start call's result %s: %v", c.service, c.action, value.String(started), err)}
	}
	failures := 0
	for {
		out, resp, res := a.invokeAction(ctx, c, action, in)
		if ctx.Err() != nil {
			return a.stopJob(ctx, c, j, started, params)
		}
		if res.Failed() {
			if transient(resp) && failures < pollFailures {
				failures++
			} else {
				return res
			}
		} else {
			failures = 0
			obj, _ := out.(*value.Object)
			if obj == nil {
				obj = value.NewObject(0)
			}
			if done, ok, result := j.ended(obj); done {
				if result != nil && c.service == "glue" && !result.Has("JobName") {
					result = result.With("JobName", str(started, "JobName"))
				}
				if !ok {
					return task.Result{Error: "States.TaskFailed", Cause: value.String(result)}
				}
				return task.Result{Output: result}
			}
		}
		t := time.NewTimer(a.poll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return a.stopJob(ctx, c, j, started, params)
		}
	}
}

// stopJob stops the job when the state gave up on it; when ctx ended for
// another reason (the server shuts down) the job is left to run, and is
// waited for again when the execution resumes.
func (a *Invoker) stopJob(ctx context.Context, c call, j *job, started, params *value.Object) task.Result {
	cause := context.Cause(ctx)
	if !errors.Is(cause, task.ErrCancelled) {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s.sync: %v", c.service, c.action, cause)}
	}
	action, in, err := j.stop(started, params)
	if err == nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
		_, _, res := a.invokeAction(sctx, c, action, in)
		cancel()
		if res.Failed() {
			err = errors.New(res.Error + ": " + res.Cause)
		}
	}
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s.sync: cancelled; stopping the job failed: %v", c.service, c.action, err)}
	}
	return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("%s:%s.sync: cancelled; the job was stopped", c.service, c.action)}
}

// invokeAction calls an action of the job's service with params, its
// timestamps in the output as epoch milliseconds (as the AWS SDK for Java
// 1.x that the optimized integrations answer with writes them).
func (a *Invoker) invokeAction(ctx context.Context, c call, action string, params *value.Object) (any, *response, task.Result) {
	api, op, found, err := awsmodel.Operation(c.service, action)
	if err != nil || !found {
		return nil, nil, task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("%s:%s: no model of the operation (%v)", c.service, action, err)}
	}
	cc := c
	cc.action = action
	out, resp, res := a.call(ctx, cc, api, op, params, nil)
	if res.Failed() {
		return nil, resp, res
	}
	if op.Output >= 0 {
		out = epochMillis(api, op.Output, out)
	}
	return out, resp, res
}

// transient reports whether a failed call may succeed if tried again: no
// answer, a server error or throttling.
func transient(resp *response) bool {
	return resp == nil || resp.status >= 500 || resp.status == 429 || resp.status == 400 && len(resp.body) > 0 &&
		(containsFold(resp.body, "Throttl") || containsFold(resp.body, "TooManyRequests"))
}

func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		match := true
		for k := 0; k < len(s); k++ {
			x, y := b[i+k], s[k]
			if x|0x20 != y|0x20 {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// idempotencyToken is the same for every dispatch of one attempt of a
// state in an execution.
func idempotencyToken(req *task.Request) string {
	exec := ""
	if ctx, ok := req.ContextObject().(*value.Object); ok {
		if e, ok := ctx.Get("Execution"); ok {
			if eo, ok := e.(*value.Object); ok {
				exec = str(eo, "Id")
			}
		}
	}
	sum := sha256.Sum256([]byte(exec + "|" + req.StateName + "|" + strconv.Itoa(req.Attempt)))
	return hex.EncodeToString(sum[:16])
}

// epochMillis turns the shape's timestamps in v (as parseOutput wrote
// them) into epoch milliseconds.
func epochMillis(api *awsmodel.API, si int, v any) any {
	sh := &api.Shapes[si]
	switch sh.Type {
	case awsmodel.TStructure:
		obj, ok := v.(*value.Object)
		if !ok {
			return v
		}
		shapes := make(map[string]int, len(sh.Members))
		for i := range sh.Members {
			shapes[stepName(sh.Members[i].Name)] = sh.Members[i].Shape
		}
		out := value.NewObject(obj.Len())
		for k, e := range obj.All {
			if si, ok := shapes[k]; ok {
				e = epochMillis(api, si, e)
			}
			out.Set(k, e)
		}
		return out
	case awsmodel.TList:
		arr, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			out[i] = epochMillis(api, sh.Elem, e)
		}
		return out
	case awsmodel.TMap:
		obj, ok := v.(*value.Object)
		if !ok {
			return v
		}
		out := value.NewObject(obj.Len())
		for k, e := range obj.All {
			out.Set(k, epochMillis(api, sh.Elem, e))
		}
		return out
	case awsmodel.TTimestamp:
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return value.Int(t.UnixMilli())
			}
		}
	}
	return v
}

func str(o *value.Object, k string) string {
	if o == nil {
		return ""
	}
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

func need(o *value.Object, k string) (string, error) {
	if s := str(o, k); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("no %s", k)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// first is the first object of the list o[k].
func first(o *value.Object, k string) (*value.Object, error) {
	v, _ := o.Get(k)
	l := asList(v)
	if len(l) == 0 {
		return nil, fmt.Errorf("no %s", k)
	}
	f, ok := l[0].(*value.Object)
	if !ok {
		return nil, fmt.Errorf("%s[0] is not an object", k)
	}
	return f, nil
}

func buildID(started *value.Object) (string, error) {
	v, _ := started.Get("Build")
	b, _ := v.(*value.Object)
	return need(b, "Id")
}
