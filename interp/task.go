package interp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

type resourceInfo struct {
	resource     string // for events: "invoke", or the full ARN for Lambda functions
	resourceType string // "lambda", "dynamodb", ...
	// pattern is the integration pattern: it goes with every request of
	// the state (task.Request.Pattern), and an activity or a
	// .waitForTaskToken integration waits for a task token.
	pattern task.Pattern
	// resource and resourceType as values for event details, boxed once.
	resourceV, resourceTypeV any
}

// boxed returns ri with its values for event details.
func (ri resourceInfo) boxed() resourceInfo {
	ri.resourceV, ri.resourceTypeV = ri.resource, ri.resourceType
	return ri
}

// isActivity reports whether a Resource is an activity ARN.
func isActivity(res string) bool {
	// arn:partition:states:region:account:activity:name, split at the
	// first six colons without allocating.
	var part [6]string
	for i := range part {
		j := strings.IndexByte(res, ':')
		if j < 0 {
			return false
		}
		part[i], res = res[:j], res[j+1:]
	}
	return part[2] == "states" && part[5] == "activity"
}

// Activities tells whether activities exist (Info.Activities).
type Activities interface {
	// ActivityExists reports whether the activity of the ARN exists. An
	// answer it cannot give (the store is unreachable) is true: the task
	// is then scheduled and its offer fails later if need be.
	ActivityExists(activityARN string) bool
}

// newToken returns the next task token of the execution: the execution
// ARN and a counter, signed with Info.TokenKey. Replaying an execution's
// inputs after a restart yields the same tokens, and no one without the key
// can make one.
func (x *Execution) newToken() string {
	x.tokens++
	return SignToken(x.info.TokenKey, x.info.ExecutionARN, x.tokens)
}

// tokenMAC is the length of a token's signature, in bytes.
const tokenMAC = 16

// SignToken returns the task token number n of the execution arn, signed
// with key: base64url("arn#n") "." base64url(HMAC-SHA256(key, "arn#n")[:16]).
func SignToken(key []byte, arn string, n int) string {
	payload := arn + "#" + strconv.Itoa(n)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(m.Sum(nil)[:tokenMAC])
}

// VerifyToken checks a task token's signature with key and returns the
// execution ARN and counter it names; ok is false for a token that is
// malformed or was not signed with key (forged, or another server's).
func VerifyToken(key []byte, token string) (arn string, n int, ok bool) {
	p, sig, found := strings.Cut(token, ".")
	if !found {
		return "", 0, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return "", 0, false
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || len(mac) != tokenMAC {
		return "", 0, false
	}
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	if !hmac.Equal(mac, m.Sum(nil)[:tokenMAC]) {
		return "", 0, false
	}
	arn, counter, found := strings.Cut(string(payload), "#")
	if !found || !strings.HasPrefix(arn, "arn:") {
		return "", 0, false
	}
	n, err = strconv.Atoi(counter)
	if err != nil || n < 1 || strconv.Itoa(n) != counter {
		return "", 0, false
	}
	return arn, n, true
}

// Issued reports whether token is one of the task tokens this execution has
// issued so far (whether or not its task is still open).
func (x *Execution) Issued(token string) bool {
	arn, n, ok := VerifyToken(x.info.TokenKey, token)
	return ok && arn == x.info.ExecutionARN && n <= x.tokens
}

// parseResource parses a Task's Resource: what its events name, whether
// it is a Lambda function ARN, and its integration pattern.
func parseResource(res string) (ri resourceInfo, lambdaFn bool) {
	ri, lambdaFn = parseService(res)
	switch {
	case isActivity(res):
		ri.pattern = task.Activity
	case strings.HasSuffix(res, ".waitForTaskToken"):
		ri.pattern = task.WaitForTaskToken
	}
	return ri.boxed(), lambdaFn
}

// parseService parses what a Task's events name: the resource and its type,
// with the .sync patterns of a service integration.
func parseService(res string) (ri resourceInfo, lambdaFn bool) {
	if strings.HasPrefix(res, "arn:aws:lambda:") || strings.Contains(res, ":lambda:") && strings.Contains(res, ":function:") {
		return resourceInfo{resource: res, resourceType: "lambda"}, true
	}
	// arn:aws:states:::service:action[.pattern]
	parts := strings.SplitN(res, ":", 7)
	if len(parts) >= 7 && parts[2] == "states" {
		svc, action := "", parts[6]
		if i := strings.IndexByte(parts[6], ':'); i >= 0 && parts[5] == "" {
			svc, action = parts[6][:i], parts[6][i+1:]
		} else {
			svc = parts[5]
		}
		if len(parts) == 7 && parts[5] != "" {
			svc, action = parts[5], parts[6]
		}
		// The events name the action with its integration suffix, as AWS
		// records them: "sendMessage.waitForTaskToken",
		// "startExecution.sync", "startExecution.sync:2".
		pattern := task.RequestResponse
		if i := strings.Index(action, ".sync"); i >= 0 {
			switch action[i:] {
			case ".sync":
				pattern = task.Sync
			case ".sync:2":
				pattern = task.Sync2
			}
		}
		if svc == "aws-sdk" {
			if j := strings.IndexByte(action, ':'); j >= 0 {
				svc, action = "aws-sdk:"+action[:j], action[j+1:]
			}
		}
		return resourceInfo{resource: action, resourceType: svc, pattern: pattern}, false
	}
	return resourceInfo{resource: res, resourceType: ""}, false
}

// runTask runs a Task state: it asks the engine to invoke the resource
// with the state's parameters and waits for the result (or a timeout).
func (th *thread) runTask() {
	ev := th.cur.ev
	th.gen++
	th.prepareToken()
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	ev.inspectInput(th, in)
	params, f := ev.parameters(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	ev.inspectParameters(th, params)
	timeout, heartbeat, f := ev.taskTimeouts(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	role, f := ev.credentials(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	th.run.task.role = role
	th.schedule(params, timeout, heartbeat)
}

// roleArnOf is the RoleArn of a Task's evaluated Credentials; a value that
// is not a string fails the state with States.Runtime.
func roleArnOf(th *thread, creds any) (string, *Failure) {
	o, _ := creds.(*value.Object)
	v, _ := o.Get("RoleArn")
	role, ok := v.(string)
	if !ok || role == "" {
		return "", runtimeFailure(th.cur.Name, th.run.enteredID, "The value of the field 'RoleArn' of 'Credentials' must be a non-empty string, but was: %s", value.String(v))
	}
	return role, nil
}

// taskCredentials is the taskCredentials of a Task's scheduled event: the
// role its Credentials name.
func taskCredentials(role string) *value.Object {
	return value.ObjectOf("roleArn", role)
}

// prepareToken issues the task token of a callback or activity task
// before its parameters are evaluated ($$.Task.Token).
func (th *thread) prepareToken() {
	t := &th.run.task
	if th.run.retryCount > 0 {
		*t = taskRun{} // a new attempt (begin zeroed the first one's)
	}
	if p := th.cur.rinfo.pattern; p == task.WaitForTaskToken || p == task.Activity {
		t.token = th.x.newToken()
		t.activity = p == task.Activity
	}
}

// schedule emits the scheduling events and asks the engine to invoke.
func (th *thread) schedule(params any, timeout, heartbeat int64) {
	t := &th.run.task
	st := th.cur
	x := th.x
	if t.activity && x.info.Activities != nil && !x.info.Activities.ActivityExists(st.Resource) {
		// AWS fails the execution right after TaskStateEntered, before
		// anything is scheduled; no catcher catches States.Runtime.
		th.fail(runtimeFailure(st.Name, th.run.enteredID, "The activity %s does not exist.", st.Resource))
		return
	}
	ri, lambdaFn := &st.rinfo, st.lambdaFn
	t.lambda = lambdaFn
	t.resource = ri
	t.heartbeatSecs = heartbeat
	if t.activity {
		d := value.NewObject(5)
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		d.Set("input", params)
		d.Set("inputDetails", truncatedFalse())
		d.Set("resource", st.resource)
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		x.emitText(th, "ActivityScheduled", "activityScheduledEventDetails", d, "input")
	} else if lambdaFn && timeout <= 0 && heartbeat <= 0 && t.role == "" {
		x.emitForm(th, "LambdaFunctionScheduled", "lambdaFunctionScheduledEventDetails", lambdaScheduledForm, params, st.resource, nil)
		x.emit(th, "LambdaFunctionStarted", "", nil)
	} else if lambdaFn {
		d := value.NewObject(5)
		d.Set("input", params)
		d.Set("inputDetails", truncatedFalse())
		d.Set("resource", st.resource)
		if t.role != "" {
			d.Set("taskCredentials", taskCredentials(t.role))
		}
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		x.emitText(th, "LambdaFunctionScheduled", "lambdaFunctionScheduledEventDetails", d, "input")
		x.emit(th, "LambdaFunctionStarted", "", nil)
	} else {
		d := value.NewObject(6)
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		d.Set("parameters", params)
		d.Set("region", x.scope().Region)
		d.Set("resource", ri.resourceV)
		d.Set("resourceType", ri.resourceTypeV)
		if t.role != "" {
			d.Set("taskCredentials", taskCredentials(t.role))
		}
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		x.emitText(th, "TaskScheduled", "taskScheduledEventDetails", d, "parameters")
		x.emitForm(th, "TaskStarted", "taskStartedEventDetails", taskStartedForm, ri.resourceV, ri.resourceTypeV, nil)
	}
	t.taskOp = x.newOp(th, opTask)
	// The op is zero: its request and context are set field by field, and
	// only where not zero (a struct copied whole goes through bulk write
	// barriers).
	req := &t.taskOp.request
	req.Resource, req.StateName, req.StateMachineName = st.Resource, st.Name, x.info.StateMachineName
	if ri.pattern != task.RequestResponse {
		req.Pattern = ri.pattern
	}
	if x.info.TestCase != "" {
		req.TestCase = x.info.TestCase
	}
	req.Input = params
	if n := x.attempt(st); n != 0 {
		req.Attempt = n
	}
	req.ContextFrom = t.taskOp
	if t.token != "" {
		req.TaskToken = t.token
	}
	c := &t.taskOp.ctx
	c.cur, c.enteredAt = th.cur, th.run.enteredAt
	if th.run.retryCount != 0 {
		c.retry = th.run.retryCount
	}
	if tok := th.token(); tok != "" {
		c.token = tok
	}
	if th.item != nil {
		c.item = th.item
	}
	x.attempts[st.task]++
	t.taskOp.req = req
	x.command(Command{Kind: Invoke, ID: t.taskOp.id, Request: req})
	t.timeoutOp, t.heartbeatOp = nil, nil
	if timeout > 0 {
		t.timeoutOp = x.timer(th, opTaskTimeout, x.now.Add(time.Duration(timeout)*time.Second))
	}
	if heartbeat > 0 {
		t.heartbeatOp = x.timer(th, opHeartbeat, x.now.Add(time.Duration(heartbeat)*time.Second))
	}
}

// attempt returns the number of invocations of the Task state st so far.
func (x *Execution) attempt(st *state) int {
	if x.attempts == nil {
		x.attempts = make([]int, x.prog.tasks)
	}
	return x.attempts[st.task]
}

// scope is the region and account of the execution's ARNs, with AWS's
// defaults where Info leaves them empty.
func (x *Execution) scope() arn.Scope {
	return arn.Scope{Region: x.info.Region, Account: x.info.Account}.Or()
}

// maxPayload is AWS's limit on a state's input or output.
const maxPayload = 256 * 1024

// withinLimit reports whether v's JSON text is within maxPayload. The
// object last found within it is remembered: a state that passes its
// input on (a Choice, a Task without result processing) costs no second
// walk. Values are immutable, so the same object has the same size.
func (x *Execution) withinLimit(v any) bool {
	o, _ := v.(*value.Object)
	if o != nil && o == x.sized {
		return true
	}
	if value.EncodedLen(v, maxPayload) > maxPayload {
		return false
	}
	if o != nil {
		x.sized = o
	}
	return true
}

func (th *thread) taskDone(r task.Result) {
	t := &th.run.task
	x := th.x
	if r.Delay > 0 {
		// Simulated run time: deliver later on the engine's clock.
		d := r
		d.Delay = 0
		t.delayed = &d
		x.timer(th, opDelayedResult, x.now.Add(r.Delay))
		return
	}
	x.cancel(t.timeoutOp)
	x.cancel(t.heartbeatOp)
	t.taskOp = nil
	if r.Failed() && t.activity && !t.started && r.Error == ErrRuntime {
		// The activity does not exist (the runner found none to offer
		// the task to): AWS fails the execution with States.Runtime
		// naming the state, without an ActivityFailed event.
		th.fail(runtimeFailure(th.cur.Name, th.run.enteredID, "%s", r.Cause))
		return
	}
	if r.Failed() {
		f := taskFailure(r)
		d := errorDetails(f)
		d2 := value.NewObject(4)
		for k, v := range d.All {
			d2.Set(k, v)
		}
		switch {
		case t.activity:
			x.emit(th, "ActivityFailed", "activityFailedEventDetails", d2)
		case t.lambda:
			x.emit(th, "LambdaFunctionFailed", "lambdaFunctionFailedEventDetails", d2)
		default:
			d2.Set("resource", t.resource.resourceV)
			d2.Set("resourceType", t.resource.resourceTypeV)
			x.emit(th, "TaskFailed", "taskFailedEventDetails", d2)
		}
		th.fail(f)
		return
	}
	if !x.withinLimit(r.Output) {
		name := t.resource.resourceType
		if t.lambda {
			name = th.cur.Resource
		}
		th.taskDone(task.Result{Error: ErrDataLimitExceeded, Cause: fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", name)})
		return
	}
	switch {
	case t.activity:
		x.emitForm(th, "ActivitySucceeded", "activitySucceededEventDetails", succeededForm, r.Output, nil, nil)
	case t.lambda:
		x.emitForm(th, "LambdaFunctionSucceeded", "lambdaFunctionSucceededEventDetails", succeededForm, r.Output, nil, nil)
	default:
		x.emitForm(th, "TaskSucceeded", "taskSucceededEventDetails", taskSucceededForm, r.Output, t.resource.resourceV, t.resource.resourceTypeV)
	}
	th.taskResult(r.Output)
}

// taskResult finishes a Task state with its result: ResultSelector, then
// the output processing.
func (th *thread) taskResult(result any) {
	th.inspect("result", result)
	th.stateResult(result)
}

// stateResult finishes a Task, Parallel or Map state with its result.
func (th *thread) stateResult(result any) {
	ev := th.cur.ev
	result, f := ev.selectResult(th, result)
	if f != nil {
		th.fail(f)
		return
	}
	out, f := ev.output(th, result, true)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, th.cur.next)
}

func (th *thread) taskTimedOut(name string) {
	t := &th.run.task
	x := th.x
	x.cancel(t.taskOp)
	x.cancel(t.timeoutOp)
	x.cancel(t.heartbeatOp)
	t.taskOp = nil
	f := &Failure{Error: name}
	switch {
	case t.activity:
		x.emit(th, "ActivityTimedOut", "activityTimedOutEventDetails", errorDetails(f))
	case t.lambda:
		x.emit(th, "LambdaFunctionTimedOut", "lambdaFunctionTimedOutEventDetails", errorDetails(f))
	default:
		if name == ErrHeartbeatTimeout {
			// AWS records a service integration's lapsed heartbeat
			// (a .waitForTaskToken callback's) as States.Timeout;
			// States.HeartbeatTimeout still matches it.
			f = &Failure{Error: ErrTimeout, heartbeat: true}
		}
		d := errorDetails(f)
		d.Set("resource", t.resource.resourceV)
		d.Set("resourceType", t.resource.resourceTypeV)
		x.emit(th, "TaskTimedOut", "taskTimedOutEventDetails", d)
	}
	th.fail(f)
}

// taskSubmitted records that a callback integration was called (the task
// goes on waiting for its token), or that a .sync integration started its
// job (the task goes on waiting for the job to end).
func (th *thread) taskSubmitted(r task.Result) {
	t := &th.run.task
	if t.started {
		// Submitted already: the call was made again after a restart
		// (dispatch is at least once); the task goes on waiting for the
		// token the first call handed out, and the history has its one
		// TaskSubmitted.
		return
	}
	if r.Failed() {
		th.x.cancel(t.taskOp)
		th.taskDone(r)
		return
	}
	if t.token == "" && t.taskOp != nil {
		// A .sync integration goes on waiting for the job it started: a
		// dispatch after a restart (Pending) carries what the start call
		// returned, so that it waits for that job instead of starting
		// another. The engine hands invokers a copy of the request, so
		// this write races with none of them.
		t.taskOp.request.Submitted = r.Output
	}
	d := value.NewObject(4)
	d.Set("output", r.Output)
	d.Set("outputDetails", truncatedFalse())
	d.Set("resource", t.resource.resourceV)
	d.Set("resourceType", t.resource.resourceTypeV)
	t.started = true
	th.x.emitText(th, "TaskSubmitted", "taskSubmittedEventDetails", d, "output")
}

// activityStarted records that a worker took the activity task, once per
// attempt: dispatch is at least once, so after a restart the task may be
// handed out again (to the same or another worker), and that second start
// adds nothing to the history.
func (th *thread) activityStarted(worker string) {
	if th.run.task.started {
		return
	}
	th.run.task.started = true
	d := value.NewObject(1)
	if worker != "" {
		d.Set("workerName", worker)
	}
	th.x.emit(th, "ActivityStarted", "activityStartedEventDetails", d)
}

// heartbeat restarts the heartbeat timer.
func (th *thread) heartbeat() {
	t := &th.run.task
	if t.heartbeatOp == nil || t.heartbeatSecs <= 0 {
		return
	}
	th.x.cancel(t.heartbeatOp)
	t.heartbeatOp = th.x.timer(th, opHeartbeat, th.x.now.Add(time.Duration(t.heartbeatSecs)*time.Second))
}

// taskRun is a Task state's invocation in flight.
type taskRun struct {
	taskOp, timeoutOp, heartbeatOp *op
	delayed                        *task.Result  // a result whose Delay has not yet passed
	lambda                         bool          // LambdaFunction* events instead of Task*
	resource                       *resourceInfo // the state's
	token                          string        // for callbacks and activities
	activity                       bool          // the task is an activity
	started                        bool          // ActivityStarted or TaskSubmitted is recorded
	heartbeatSecs                  int64
	role                           string // the role its Credentials name ("": none)
}
