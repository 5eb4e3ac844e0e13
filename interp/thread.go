package interp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/jsonpath"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// thread runs one sequence of states: the whole machine, one Parallel
// branch or one Map iteration.
type thread struct {
	x      *Execution
	m      *machine
	parent *container
	index  int
	gen    int  // bumped whenever the thread leaves a state; stale ops are ignored
	dead   bool // cancelled or finished
	silent bool // events are not recorded (Distributed Map child executions)

	cur  *state   // the state the thread is in
	run  stateRun // the current state's run
	last int64    // previous event id for the next event of this thread

	vars *scope
	item *mapItem // for Map iterations: $$.Map.Item
}

// stateRun is what one run of a state needs, from its Entered event until
// the thread leaves the state (its retries included). begin resets it.
type stateRun struct {
	input       any // the raw input of the state
	enteredID   int64
	enteredPrev int64 // the previousEventId of the Entered event
	enteredAt   time.Time

	retries    []int // per retrier
	retryCount int

	effInput any        // a Wait state's effective input (after InputPath)
	task     *taskRun   // a Task state's invocation
	ctr      *container // a running Parallel or Map state
	// failEvent is written when a failed Parallel/Map state is not retried.
	failEvent string
	// assigned is recorded on the StateExited event.
	assigned *value.Object
}

// taskRun is a Task state's invocation in flight.
type taskRun struct {
	taskOp, timeoutOp, heartbeatOp *op
	delayed                        task.Result
	lambda                         bool // LambdaFunction* events instead of Task*
	resource                       resourceInfo
	token                          string // for callbacks and activities
	activity                       bool   // the task is an activity
	heartbeatSecs                  int64
}

type mapItem struct {
	index int
	value any
}

// scope holds workflow variables. Inner scopes (Parallel branches, Map
// iterations) read their parent's variables.
type scope struct {
	vars   map[string]any
	parent *scope
}

func (s *scope) lookup(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(name string, v any) {
	if s.vars == nil {
		s.vars = map[string]any{}
	}
	s.vars[name] = v
}

// token returns the task token of the Task state the thread is in, if any.
func (th *thread) token() string {
	if th.run.task == nil {
		return ""
	}
	return th.run.task.token
}

// tail returns the thread whose chain execution-level events continue.
func (th *thread) tail() *thread { return th }

func (th *thread) begin(st *state, input any) {
	th.gen++
	th.cur = st
	th.run = stateRun{input: input}
	d := value.NewObject(3)
	d.Set("input", value.String(input))
	d.Set("inputDetails", truncatedFalse())
	d.Set("name", st.Name)
	th.inspect("input", input)
	e := th.x.emit(th, st.Type+"StateEntered", "stateEnteredEventDetails", d)
	th.run.enteredID = e.ID
	th.run.enteredPrev = e.PreviousEventID
	th.run.enteredAt = th.x.now
	th.runState()
}

// env returns the evaluation environment over v for the current state.
func (th *thread) env(input any) *env {
	return &env{input: input, context: th.contextObject(), vars: th.vars, rand: th.x.rand}
}

// contextObject builds $$ for the current state.
func (th *thread) contextObject() any {
	x := th.x
	if x.ctxExecution == nil {
		e := value.NewObject(6)
		e.Set("Id", x.info.ExecutionArn)
		e.Set("Input", x.input)
		e.Set("StartTime", formatTime(x.info.StartTime))
		e.Set("Name", x.info.Name)
		e.Set("RoleArn", x.info.RoleArn)
		if x.test == nil { // TestState's context has no RedriveCount
			e.Set("RedriveCount", value.Int(0))
		}
		x.ctxExecution = e
	}
	c := value.NewObject(5)
	c.Set("Execution", x.ctxExecution)
	c.Set("StateMachine", value.ObjectOf("Id", x.info.StateMachineArn, "Name", x.info.StateMachineName))
	st := value.NewObject(3)
	if th.cur != nil {
		st.Set("Name", th.cur.Name)
		st.Set("EnteredTime", formatTime(th.run.enteredAt))
		if th.cur.Type == "Task" || th.cur.Type == "Parallel" || th.cur.Type == "Map" {
			st.Set("RetryCount", value.Int(int64(th.run.retryCount)))
		}
	}
	c.Set("State", st)
	token := th.token()
	if token != "" {
		c.Set("Task", value.ObjectOf("Token", token))
	}
	if th.item != nil {
		c.Set("Map", value.ObjectOf("Item", value.ObjectOf("Index", value.Int(int64(th.item.index)), "Value", th.item.value)))
	}
	if t := x.test; t != nil && t.Context != nil {
		// TestState's context stands for the whole Context object (an
		// empty one leaves $$ empty); only a task token is kept.
		given := t.Context.Clone()
		if token != "" && !given.Has("Task") {
			given.Set("Task", value.ObjectOf("Token", token))
		}
		return given
	}
	return c
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// exit leaves the current state with output and moves on.
func (th *thread) exit(output any, next *state) {
	st := th.cur
	text := value.String(output)
	if len(text) > maxPayload {
		th.run.assigned = nil
		th.fail(&Failure{Error: ErrDataLimitExceeded, Cause: fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", st.Name)})
		return
	}
	d := value.NewObject(5)
	if a := th.run.assigned; a != nil {
		for k, v := range a.All {
			th.setVar(k, v)
		}
		d.Set("assignedVariables", assignedDetails(a))
		d.Set("assignedVariablesDetails", truncatedFalse())
		th.run.assigned = nil
	}
	d.Set("name", st.Name)
	d.Set("output", text)
	d.Set("outputDetails", truncatedFalse())
	th.x.emit(th, st.Type+"StateExited", "stateExitedEventDetails", d)
	th.moveOn(output, next)
}

// moveOn continues with the next state, or finishes the thread when next is
// nil. The continuation is queued rather than called, so long runs of
// synchronous states do not deepen the stack.
func (th *thread) moveOn(output any, next *state) {
	if t := th.x.test; t != nil && th == th.x.root {
		t.stop(th.x, output, next)
		return
	}
	th.gen++
	th.x.runq = append(th.x.runq, pending{th: th, st: next, input: output})
}

func (th *thread) finish(output any) {
	th.dead = true
	if th.parent == nil {
		th.x.succeed(th, output)
		return
	}
	th.parent.childSucceeded(th, output)
}

// run executes the current state until it finishes or blocks.
func (th *thread) runState() {
	st := th.cur
	if st.jsonata {
		th.runJSONata()
		return
	}
	switch st.Type {
	case "Pass":
		th.runPass()
	case "Succeed":
		th.runSucceed()
	case "Fail":
		th.runFail()
	case "Choice":
		th.runChoice()
	case "Wait":
		th.runWait()
	case "Task":
		th.runTask()
	case "Parallel":
		th.runParallel()
	case "Map":
		th.runMap()
	default:
		th.propagate(&Failure{Error: ErrRuntime, Cause: fmt.Sprintf("unsupported state type %q", st.Type)})
	}
}

// applyInputPath applies InputPath to the raw state input.
func (th *thread) applyInputPath(input any) (any, *Failure) {
	st := th.cur
	if st.inputNull {
		return value.NewObject(0), nil
	}
	if st.inputPath == nil {
		return input, nil
	}
	v, err := st.inputPath.get(th.env(input))
	if err != nil {
		return nil, th.pathFailure(err)
	}
	return v, nil
}

func (th *thread) applyOutputPath(v any) (any, *Failure) {
	st := th.cur
	if st.outputNull {
		return value.NewObject(0), nil
	}
	if st.outputPath == nil {
		return v, nil
	}
	out, err := st.outputPath.get(th.env(v))
	if err != nil {
		return nil, th.pathFailure(err)
	}
	return out, nil
}

// applyResultPath combines the raw state input and the result.
func (th *thread) applyResultPath(input, result any) (any, *Failure) {
	st := th.cur
	if st.resultNull {
		return input, nil
	}
	if st.resultPath == nil {
		return result, nil
	}
	out, err := st.resultPath.Set(input, result)
	if err != nil {
		return nil, &Failure{Error: ErrResultPathMatchFailure, Cause: resultPathCause(st.ResultPath.Path, input, err)}
	}
	return out, nil
}

func resultPathCause(path string, input any, err error) string {
	return fmt.Sprintf("Unable to apply ReferencePath %s to input %s", path, value.String(input))
}

func (th *thread) pathFailure(err error) *Failure {
	var ue *undefinedVariable
	if errors.As(err, &ue) {
		return runtimeFailure(th.cur.Name, th.run.enteredID, "%s", err.Error())
	}
	return runtimeFailure(th.cur.Name, th.run.enteredID, "%s", err.Error())
}

// evalPayload evaluates a payload template and maps its errors to ASL
// failures.
func (th *thread) evalPayload(p *payload, input any) (any, *Failure) {
	v, err := p.eval(th.env(input))
	if err == nil {
		return v, nil
	}
	var pe *payloadError
	if errors.As(err, &pe) {
		if pe.name == ErrIntrinsicFailure {
			return nil, &Failure{Error: ErrIntrinsicFailure, Cause: statePrefix(th.cur.Name, th.run.enteredID) + intrinsicCause(pe.err)}
		}
		var ue *undefinedVariable
		if errors.As(pe.err, &ue) {
			return nil, runtimeFailure(th.cur.Name, th.run.enteredID, "%s", ue.Error())
		}
		return nil, runtimeFailure(th.cur.Name, th.run.enteredID,
			"The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
			pe.expr, pe.field, value.String(input))
	}
	return nil, runtimeFailure(th.cur.Name, th.run.enteredID, "%s", err.Error())
}

func intrinsicCause(err error) string {
	type causer interface{ CauseText() string }
	var c causer
	if errors.As(err, &c) {
		return c.CauseText()
	}
	return err.Error()
}

// assign evaluates a JSONPath-mode Assign block against the state's input
// and result and stores the variables.
func (th *thread) assign(p *payload, input, result any) *Failure {
	if p == nil {
		return nil
	}
	e := th.env(input)
	_ = result
	v, err := p.eval(e)
	if err != nil {
		return th.payloadFailure(err, input)
	}
	o, _ := v.(*value.Object)
	th.addAssigned(o)
	return nil
}

// addAssigned records variables to assign when the state exits: AWS
// evaluates every field of a state with the variables as they were when it
// was entered.
func (th *thread) addAssigned(o *value.Object) {
	if o == nil {
		return
	}
	if th.run.assigned == nil {
		th.run.assigned = o
		return
	}
	m := th.run.assigned.Clone()
	for k, v := range o.All {
		m.Set(k, v)
	}
	th.run.assigned = m
}

func (th *thread) payloadFailure(err error, input any) *Failure {
	var pe *payloadError
	if errors.As(err, &pe) && pe.name == ErrIntrinsicFailure {
		return &Failure{Error: ErrIntrinsicFailure, Cause: statePrefix(th.cur.Name, th.run.enteredID) + intrinsicCause(pe.err)}
	}
	if errors.As(err, &pe) {
		return runtimeFailure(th.cur.Name, th.run.enteredID,
			"The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
			pe.expr, pe.field, value.String(input))
	}
	return runtimeFailure(th.cur.Name, th.run.enteredID, "%s", err.Error())
}

func (th *thread) setVar(name string, v any) {
	if th.vars == nil || (th.parent != nil && th.vars == th.parent.owner.vars) {
		th.vars = &scope{parent: th.vars}
	}
	th.vars.set(name, v)
}

// --- Pass, Succeed, Fail, Choice, Wait ---

func (th *thread) runPass() {
	st := th.cur
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	// AWS's inspection data for a Pass state: with Result, the result;
	// otherwise the input and parameters stages.
	if st.Result.Set {
		// A Pass state's Result takes precedence over Parameters.
		th.inspect("result", st.result)
		th.complete(st.result)
		return
	}
	th.inspect("afterInputPath", in)
	result := in
	if st.parameters != nil {
		if result, f = th.evalPayload(st.parameters, in); f != nil {
			th.fail(f)
			return
		}
	}
	th.inspect("afterParameters", result)
	th.complete(result)
}

// complete finishes a state that produced result: Assign, ResultPath,
// OutputPath, then exit.
func (th *thread) complete(result any) {
	st := th.cur
	if f := th.assign(st.assign, result, result); f != nil {
		th.fail(f)
		return
	}
	th.inspect("afterResultSelector", result)
	out, f := th.applyResultPath(th.run.input, result)
	if f != nil {
		th.fail(f)
		return
	}
	th.inspect("afterResultPath", out)
	if out, f = th.applyOutputPath(out); f != nil {
		th.fail(f)
		return
	}
	th.exit(out, st.next)
}

func (th *thread) runSucceed() {
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	th.inspect("afterInputPath", in)
	out, f := th.applyOutputPath(in)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, nil)
}

func (th *thread) runFail() {
	st := th.cur
	th.inspect("afterInputPath", th.run.input)
	f := &Failure{}
	if s, ok := st.Error.Value.(string); ok {
		f.Error = s
	}
	if s, ok := st.Cause.Value.(string); ok {
		f.Cause = s
	}
	e := th.env(th.run.input)
	if st.errorPath != nil {
		v, err := th.evalRefOrCall(st.errorPath, "ErrorPath", e)
		if err != nil {
			th.propagate(err)
			return
		}
		s, ok := v.(string)
		if !ok {
			th.propagate(runtimeFailure(st.Name, th.run.enteredID, "The ErrorPath '%s' must point to a string, got %s", st.ErrorPath, value.String(v)))
			return
		}
		f.Error = s
	}
	if st.causePath != nil {
		v, err := th.evalRefOrCall(st.causePath, "CausePath", e)
		if err != nil {
			th.propagate(err)
			return
		}
		s, ok := v.(string)
		if !ok {
			th.propagate(runtimeFailure(st.Name, th.run.enteredID, "The CausePath '%s' must point to a string, got %s", st.CausePath, value.String(v)))
			return
		}
		f.Cause = s
	}
	th.propagate(f)
}

func (th *thread) evalRefOrCall(r *ref, field string, e *env) (any, *Failure) {
	v, err := r.get(e)
	if err != nil {
		if r.call != nil {
			return nil, &Failure{Error: ErrIntrinsicFailure, Cause: statePrefix(th.cur.Name, th.run.enteredID) + intrinsicCause(err)}
		}
		return nil, runtimeFailure(th.cur.Name, th.run.enteredID, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", r.text, field, value.String(e.input))
	}
	return v, nil
}

func (th *thread) runChoice() {
	st := th.cur
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	th.inspect("afterInputPath", in)
	e := th.env(in)
	var next *state
	var matched *choice
	for _, c := range st.choices {
		ok, err := c.eval(e)
		if err != nil {
			th.fail(th.pathFailure(err))
			return
		}
		if ok {
			next, matched = c.next, c
			break
		}
	}
	if next == nil {
		next = st.deflt
	}
	if next == nil {
		th.fail(&Failure{Error: ErrNoChoiceMatched, Cause: fmt.Sprintf("No Matches! %s", "")})
		return
	}
	if matched != nil && matched.assign != nil {
		if f := th.assign(matched.assign, in, nil); f != nil {
			th.fail(f)
			return
		}
	}
	if f := th.assign(st.assign, in, nil); f != nil {
		th.fail(f)
		return
	}
	out, f := th.applyOutputPath(in)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, next)
}

func (th *thread) runWait() {
	st := th.cur
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	var due time.Time
	switch {
	case st.Seconds.Set:
		n, _ := st.Seconds.Value.(value.Number)
		due = th.x.now.Add(time.Duration(n.Float64() * float64(time.Second)))
	case st.Timestamp.Set:
		s, _ := st.Timestamp.Value.(string)
		t, ok := parseTimestamp(s)
		if !ok {
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "Invalid timestamp %s", s))
			return
		}
		due = t
	case st.secondsPath != nil:
		v, err := st.secondsPath.get(th.env(in))
		if err != nil {
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "The SecondsPath parameter does not reference an input value: %s", st.SecondsPath))
			return
		}
		n, ok := v.(value.Number)
		secs, isInt := n.Int64()
		switch {
		case !ok || !isInt:
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "The SecondsPath parameter cannot be parsed as a long value: %s == %s", st.SecondsPath, value.String(v)))
			return
		case secs < 0:
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "The SecondsPath parameter references a negative value: %s == %s", st.SecondsPath, value.String(v)))
			return
		}
		due = th.x.now.Add(time.Duration(secs) * time.Second)
	case st.timestampPath != nil:
		v, err := st.timestampPath.get(th.env(in))
		if err != nil {
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "The TimestampPath parameter does not reference an input value: %s", st.TimestampPath))
			return
		}
		s, isStr := v.(string)
		if !isStr {
			s = value.String(v)
		}
		t, ok := parseTimestamp(s)
		if !ok {
			th.fail(runtimeFailure(st.Name, th.run.enteredID, "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", st.TimestampPath, s))
			return
		}
		due = t
	}
	th.run.effInput = in
	th.x.timer(th, opWait, due)
}

func (th *thread) waitDone() {
	st := th.cur
	if st.jsonata {
		th.waitDoneJSONata()
		return
	}
	if f := th.assign(st.assign, th.run.effInput, nil); f != nil {
		th.fail(f)
		return
	}
	out, f := th.applyOutputPath(th.run.effInput)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, st.next)
}

// --- errors: Retry, Catch, propagation ---

// fail handles a failure of the current state: retry, catch, or propagate.
func (th *thread) fail(f *Failure) {
	st := th.cur
	if f.evaluation {
		th.evaluationFailed(f)
	}
	if th.run.retries == nil && len(st.retry) > 0 {
		th.run.retries = make([]int, len(st.retry))
		if t := th.x.test; t != nil && th == th.x.root {
			for i := range th.run.retries {
				th.run.retries[i] = t.RetryCount
			}
		}
	}
	for i, r := range st.retry {
		if !matches(r.ErrorEquals, f.Error) {
			continue
		}
		if th.run.retries[i] >= r.MaxAttempts {
			if t := th.x.test; t != nil && th == th.x.root && t.inspection != nil {
				// TestState names the retrier that is used up.
				t.inspection.Set("errorDetails", value.ObjectOf("retryIndex", value.Int(int64(i))))
			}
			break
		}
		th.run.failEvent = ""
		delay := retryDelay(r, th.run.retries[i], th.x.rand)
		if t := th.x.test; t != nil && th == th.x.root {
			t.retriable(th.x, f, i, delay)
			return
		}
		th.run.retries[i]++
		th.run.retryCount++
		th.gen++
		th.x.timer(th, opRetry, th.x.now.Add(delay))
		return
	}
	if th.run.failEvent != "" {
		th.x.emit(th, th.run.failEvent, "", nil)
		th.run.failEvent = ""
	}
	for i, c := range st.catch {
		if !matches(c.ErrorEquals, f.Error) {
			continue
		}
		if t := th.x.test; t != nil && th == th.x.root {
			t.caught, t.catchIndex = f, i
		}
		th.caught(c, f)
		return
	}
	th.propagate(f)
}

func retryDelay(r *asl.Retrier, attempt int, rnd Rand) time.Duration {
	secs := float64(r.IntervalSeconds) * math.Pow(r.BackoffRate, float64(attempt))
	if r.HasMaxDelay && secs > float64(r.MaxDelaySeconds) {
		secs = float64(r.MaxDelaySeconds)
	}
	if r.JitterStrategy == "FULL" {
		secs = float64Of(rnd) * secs
	}
	return time.Duration(secs * float64(time.Second))
}

func (th *thread) caught(c *catcher, f *Failure) {
	st := th.cur
	errOut := value.NewObject(2)
	errOut.Set("Error", f.Error)
	errOut.Set("Cause", f.Cause)
	if st.jsonata {
		th.caughtJSONata(c, f, errOut)
		return
	}
	if c.assign != nil {
		if af := th.assign(c.assign, errOut, nil); af != nil {
			th.propagate(af)
			return
		}
	}
	out := any(errOut)
	if c.resultNull {
		out = th.run.input
	} else if c.resultPath != nil {
		v, err := c.resultPath.Set(th.run.input, errOut)
		if err != nil {
			th.propagate(&Failure{Error: ErrResultPathMatchFailure, Cause: resultPathCause(c.ResultPath.Path, th.run.input, err)})
			return
		}
		out = v
	}
	th.exit(out, c.next)
}

// evaluationFailed writes the EvaluationFailed event of a JSONata
// evaluation error.
func (th *thread) evaluationFailed(f *Failure) {
	f.evaluation = false
	d := value.NewObject(4)
	d.Set("cause", f.Cause)
	d.Set("error", f.Error)
	if f.location != "" {
		d.Set("location", f.location)
	}
	d.Set("state", th.cur.Name)
	// AWS chains it to the event before the state was entered, except in
	// Wait states.
	if th.cur.Type != "Wait" {
		th.last = th.run.enteredPrev
	}
	th.x.emit(th, "EvaluationFailed", "evaluationFailedEventDetails", d)
}

// propagate ends the thread with a failure.
func (th *thread) propagate(f *Failure) {
	if f.evaluation {
		th.evaluationFailed(f)
	}
	th.gen++
	th.dead = true
	if th.run.ctr != nil {
		th.run.ctr.cancelAll()
	}
	if th.parent == nil {
		th.x.fail(th, f)
		return
	}
	th.parent.childFailed(th, f)
}

// retryNow re-runs the current state after a retry interval.
func (th *thread) retryNow() { th.runState() }

// --- Task ---

type resourceInfo struct {
	resource     string // for events: "invoke", or the full ARN for Lambda functions
	resourceType string // "lambda", "dynamodb", ...
	pattern      string // "", "sync", "sync:2", "waitForTaskToken"
}

// isActivity reports whether a Resource is an activity ARN.
func isActivity(res string) bool {
	parts := strings.SplitN(res, ":", 7)
	return len(parts) == 7 && parts[2] == "states" && parts[5] == "activity"
}

// needsToken reports whether a Task waits for its task token to come back:
// activities and the .waitForTaskToken integration pattern.
func needsToken(res string) bool {
	return isActivity(res) || strings.HasSuffix(res, ".waitForTaskToken")
}

// newToken returns the next task token of the execution. Tokens are
// derived from the execution ARN and a counter, so that replaying an
// execution's inputs after a restart yields the same tokens.
func (x *Execution) newToken() string {
	x.tokens++
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%s#%d", x.info.ExecutionArn, x.tokens)))
}

// Issued reports whether token is one of the task tokens this execution has
// issued so far (whether or not its task is still open).
func (x *Execution) Issued(token string) bool {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return false
	}
	arn, counter, ok := strings.Cut(string(b), "#")
	if !ok || arn != x.info.ExecutionArn {
		return false
	}
	n, err := strconv.Atoi(counter)
	return err == nil && n >= 1 && n <= x.tokens && strconv.Itoa(n) == counter
}

// TokenExecution returns the execution ARN a task token belongs to.
func TokenExecution(token string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", false
	}
	arn, _, ok := strings.Cut(string(b), "#")
	return arn, ok && strings.HasPrefix(arn, "arn:")
}

func parseResource(res string) (ri resourceInfo, lambdaFn bool) {
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
		pattern := ""
		if i := strings.Index(action, ".sync"); i >= 0 {
			pattern = strings.TrimPrefix(action[i+1:], "")
			action = action[:i]
		} else if i := strings.Index(action, ".waitForTaskToken"); i >= 0 {
			pattern = "waitForTaskToken"
			action = action[:i]
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

func (th *thread) runTask() {
	st := th.cur
	th.gen++
	th.prepareToken()
	in, f := th.applyInputPath(th.run.input)
	if f != nil {
		th.fail(f)
		return
	}
	th.run.effInput = in
	th.inspect("afterInputPath", in)
	params := in
	if st.parameters != nil {
		if params, f = th.evalPayload(st.parameters, in); f != nil {
			th.fail(f)
			return
		}
	}
	th.inspect("afterParameters", params)
	timeout, heartbeat, f := th.taskTimeouts(in)
	if f != nil {
		th.fail(f)
		return
	}
	th.schedule(params, timeout, heartbeat)
}

// prepareToken issues the task token of a callback or activity task
// before its parameters are evaluated ($$.Task.Token).
func (th *thread) prepareToken() {
	th.run.task = &taskRun{}
	if res := th.cur.Resource; needsToken(res) {
		th.run.task.token = th.x.newToken()
		th.run.task.activity = isActivity(res)
	}
}

// taskTimeouts returns the task's timeout and heartbeat in seconds (0 = none).
func (th *thread) taskTimeouts(in any) (int64, int64, *Failure) {
	st := th.cur
	var timeout, heartbeat int64
	if n, ok := st.TimeoutSeconds.Value.(value.Number); ok {
		timeout, _ = n.Int64()
	}
	if n, ok := st.HeartbeatSeconds.Value.(value.Number); ok {
		heartbeat, _ = n.Int64()
	}
	if st.timeoutPath != nil {
		v, err := st.timeoutPath.get(th.env(in))
		if err != nil {
			return 0, 0, th.pathFailure(err)
		}
		n, ok := v.(value.Number)
		if i, isInt := n.Int64(); ok && isInt && i > 0 {
			timeout = i
		} else {
			return 0, 0, runtimeFailure(st.Name, th.run.enteredID, "The TimeoutSecondsPath parameter does not reference a valid integer value: %s", value.String(v))
		}
	}
	if st.heartbeatPath != nil {
		v, err := st.heartbeatPath.get(th.env(in))
		if err != nil {
			return 0, 0, th.pathFailure(err)
		}
		n, ok := v.(value.Number)
		if i, isInt := n.Int64(); ok && isInt && i > 0 {
			heartbeat = i
		} else {
			return 0, 0, runtimeFailure(st.Name, th.run.enteredID, "The HeartbeatSecondsPath parameter does not reference a valid integer value: %s", value.String(v))
		}
	}
	if timeout == 0 && !th.x.prog.Def.HasTimeout {
		// AWS's default task timeout is the execution's; nothing to do.
	}
	return timeout, heartbeat, nil
}

// schedule emits the scheduling events and asks the engine to invoke.
func (th *thread) schedule(params any, timeout, heartbeat int64) {
	st := th.cur
	x := th.x
	ri, lambdaFn := parseResource(st.Resource)
	th.run.task.lambda = lambdaFn
	th.run.task.resource = ri
	th.run.task.heartbeatSecs = heartbeat
	if th.run.task.activity {
		d := value.NewObject(5)
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		d.Set("input", value.String(params))
		d.Set("inputDetails", truncatedFalse())
		d.Set("resource", st.Resource)
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		x.emit(th, "ActivityScheduled", "activityScheduledEventDetails", d)
	} else if lambdaFn {
		d := value.NewObject(5)
		d.Set("input", value.String(params))
		d.Set("inputDetails", truncatedFalse())
		d.Set("resource", st.Resource)
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		x.emit(th, "LambdaFunctionScheduled", "lambdaFunctionScheduledEventDetails", d)
		x.emit(th, "LambdaFunctionStarted", "", nil)
	} else {
		d := value.NewObject(6)
		if heartbeat > 0 {
			d.Set("heartbeatInSeconds", value.Int(heartbeat))
		}
		d.Set("parameters", value.String(params))
		d.Set("region", x.region())
		d.Set("resource", ri.resource)
		d.Set("resourceType", ri.resourceType)
		if timeout > 0 {
			d.Set("timeoutInSeconds", value.Int(timeout))
		}
		x.emit(th, "TaskScheduled", "taskScheduledEventDetails", d)
		x.emit(th, "TaskStarted", "taskStartedEventDetails", value.ObjectOf("resource", ri.resource, "resourceType", ri.resourceType))
	}
	req := &task.Request{
		Resource:         st.Resource,
		StateName:        st.Name,
		StateMachineName: x.info.StateMachineName,
		TestCase:         x.info.TestCase,
		Input:            params,
		Attempt:          x.attempts[st],
		Context:          th.contextObject(),
		TaskToken:        th.run.task.token,
	}
	x.attempts[st]++
	th.run.task.taskOp = x.newOp(th, opTask)
	th.run.task.taskOp.req = req
	x.cmds = append(x.cmds, Command{Kind: Invoke, ID: th.run.task.taskOp.id, Request: req})
	th.run.task.timeoutOp, th.run.task.heartbeatOp = nil, nil
	if timeout > 0 {
		th.run.task.timeoutOp = x.timer(th, opTaskTimeout, x.now.Add(time.Duration(timeout)*time.Second))
	}
	if heartbeat > 0 {
		th.run.task.heartbeatOp = x.timer(th, opHeartbeat, x.now.Add(time.Duration(heartbeat)*time.Second))
	}
}

func (x *Execution) account() string {
	if x.info.Account != "" {
		return x.info.Account
	}
	return "123456789012"
}

func (x *Execution) region() string {
	if x.info.Region != "" {
		return x.info.Region
	}
	return "us-east-1"
}

// maxPayload is AWS's limit on a state's input or output.
const maxPayload = 256 * 1024

func (th *thread) taskDone(r task.Result) {
	x := th.x
	if r.Delay > 0 {
		// Simulated run time: deliver later on the engine's clock.
		th.run.task.delayed = r
		th.run.task.delayed.Delay = 0
		x.timer(th, opDelayedResult, x.now.Add(r.Delay))
		return
	}
	x.cancel(th.run.task.timeoutOp)
	x.cancel(th.run.task.heartbeatOp)
	th.run.task.taskOp = nil
	if r.Failed() {
		d := errorDetails(&Failure{Error: r.Error, Cause: r.Cause})
		d2 := value.NewObject(4)
		for k, v := range d.All {
			d2.Set(k, v)
		}
		switch {
		case th.run.task.activity:
			x.emit(th, "ActivityFailed", "activityFailedEventDetails", d2)
		case th.run.task.lambda:
			x.emit(th, "LambdaFunctionFailed", "lambdaFunctionFailedEventDetails", d2)
		default:
			d2.Set("resource", th.run.task.resource.resource)
			d2.Set("resourceType", th.run.task.resource.resourceType)
			x.emit(th, "TaskFailed", "taskFailedEventDetails", d2)
		}
		th.fail(&Failure{Error: r.Error, Cause: r.Cause})
		return
	}
	out := value.String(r.Output)
	if len(out) > maxPayload {
		name := th.run.task.resource.resourceType
		if th.run.task.lambda {
			name = th.cur.Resource
		}
		th.taskDone(task.Result{Error: ErrDataLimitExceeded, Cause: fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", name)})
		return
	}
	if th.run.task.lambda || th.run.task.activity {
		d := value.NewObject(2)
		d.Set("output", out)
		d.Set("outputDetails", truncatedFalse())
		if th.run.task.activity {
			x.emit(th, "ActivitySucceeded", "activitySucceededEventDetails", d)
		} else {
			x.emit(th, "LambdaFunctionSucceeded", "lambdaFunctionSucceededEventDetails", d)
		}
	} else {
		d := value.NewObject(4)
		d.Set("output", out)
		d.Set("outputDetails", truncatedFalse())
		d.Set("resource", th.run.task.resource.resource)
		d.Set("resourceType", th.run.task.resource.resourceType)
		x.emit(th, "TaskSucceeded", "taskSucceededEventDetails", d)
	}
	th.taskResult(r.Output)
}

// taskResult processes a task's result: ResultSelector, then the common
// completion.
func (th *thread) taskResult(result any) {
	st := th.cur
	th.inspect("result", result)
	if st.jsonata {
		th.completeJSONata(result)
		return
	}
	if st.resultSelector != nil {
		var f *Failure
		if result, f = th.evalPayload(st.resultSelector, result); f != nil {
			th.fail(f)
			return
		}
	}
	th.complete(result)
}

func (th *thread) taskTimedOut(name string) {
	x := th.x
	x.cancel(th.run.task.taskOp)
	x.cancel(th.run.task.timeoutOp)
	x.cancel(th.run.task.heartbeatOp)
	th.run.task.taskOp = nil
	f := &Failure{Error: name}
	switch {
	case th.run.task.activity:
		x.emit(th, "ActivityTimedOut", "activityTimedOutEventDetails", errorDetails(f))
	case th.run.task.lambda:
		x.emit(th, "LambdaFunctionTimedOut", "lambdaFunctionTimedOutEventDetails", errorDetails(f))
	default:
		d := errorDetails(f)
		d.Set("resource", th.run.task.resource.resource)
		d.Set("resourceType", th.run.task.resource.resourceType)
		x.emit(th, "TaskTimedOut", "taskTimedOutEventDetails", d)
	}
	th.fail(f)
}

// taskSubmitted records that a callback integration was called; the task
// goes on waiting for its token.
func (th *thread) taskSubmitted(r task.Result) {
	if r.Failed() {
		th.x.cancel(th.run.task.taskOp)
		th.taskDone(r)
		return
	}
	d := value.NewObject(4)
	d.Set("output", value.String(r.Output))
	d.Set("outputDetails", truncatedFalse())
	d.Set("resource", th.run.task.resource.resource)
	d.Set("resourceType", th.run.task.resource.resourceType)
	th.x.emit(th, "TaskSubmitted", "taskSubmittedEventDetails", d)
}

// activityStarted records that a worker took the activity task.
func (th *thread) activityStarted(worker string) {
	d := value.NewObject(1)
	if worker != "" {
		d.Set("workerName", worker)
	}
	th.x.emit(th, "ActivityStarted", "activityStartedEventDetails", d)
}

// heartbeat restarts the heartbeat timer.
func (th *thread) heartbeat() {
	if th.run.task == nil || th.run.task.heartbeatOp == nil || th.run.task.heartbeatSecs <= 0 {
		return
	}
	th.x.cancel(th.run.task.heartbeatOp)
	th.run.task.heartbeatOp = th.x.timer(th, opHeartbeat, th.x.now.Add(time.Duration(th.run.task.heartbeatSecs)*time.Second))
}

// cancelWork withdraws whatever the thread is waiting for.
func (th *thread) cancelWork() {
	if th.cur != nil && !th.dead {
		// A state still in progress is aborted.
		th.x.emit(th, th.cur.Type+"StateAborted", "", nil)
	}
	th.gen++
	th.dead = true
	x := th.x
	if t := th.run.task; t != nil {
		x.cancel(t.taskOp)
		x.cancel(t.timeoutOp)
		x.cancel(t.heartbeatOp)
	}
	if th.run.ctr != nil {
		th.run.ctr.cancelAll()
	}
}

var _ = jsonpath.Compile
