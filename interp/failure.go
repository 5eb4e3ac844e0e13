package interp

import (
	"fmt"
	"math"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// Failure is an ASL error value: an error name such as "States.Timeout" or
// a task's own error type, and a cause text.
type Failure struct {
	Error string
	Cause string
	// evaluation marks a JSONata evaluation failure, which AWS records with
	// an EvaluationFailed event naming the field (location).
	evaluation bool
	location   string
	// abort marks a stop request that interrupted an evaluation: the
	// execution ends ABORTED with Error and Cause.
	abort bool
	// unnamed marks a failure that names no error (a SendTaskFailure
	// without one, task.NoError): Error is empty, and a catcher sees
	// "Error": null (and "Cause": null without a cause), as AWS records.
	unnamed bool
	// heartbeat marks a heartbeat that lapsed on a service integration:
	// AWS records it as States.Timeout, and States.HeartbeatTimeout
	// matches it too.
	heartbeat bool
}

// taskFailure is the failure of a task's result r.
func taskFailure(r task.Result) *Failure {
	if r.Error == task.NoError {
		return &Failure{Cause: r.Cause, unnamed: true}
	}
	return &Failure{Error: r.Error, Cause: r.Cause}
}

func (f *Failure) String() string {
	if f.Cause == "" {
		return f.Error
	}
	return f.Error + ": " + f.Cause
}

// The predefined ASL error names.
const (
	ErrALL                     = "States.ALL"
	ErrRuntime                 = "States.Runtime"
	ErrTimeout                 = "States.Timeout"
	ErrHeartbeatTimeout        = "States.HeartbeatTimeout"
	ErrTaskFailed              = "States.TaskFailed"
	ErrDataLimitExceeded       = "States.DataLimitExceeded"
	ErrNoChoiceMatched         = "States.NoChoiceMatched"
	ErrIntrinsicFailure        = "States.IntrinsicFailure"
	ErrParameterPathFailure    = "States.ParameterPathFailure"
	ErrResultPathMatchFailure  = "States.ResultPathMatchFailure"
	ErrQueryEvaluationError    = "States.QueryEvaluationError"
	ErrExceedToleratedFailures = "States.ExceedToleratedFailureThreshold"
	ErrBranchFailed            = "States.BranchFailed"
	ErrItemReaderFailed        = "States.ItemReaderFailed"
	ErrResultWriterFailed      = "States.ResultWriterFailed"
)

// runtimeFailure builds a States.Runtime failure with AWS's cause prefix
// naming the state and the event id at which it was entered.
func runtimeFailure(state string, entered int64, format string, args ...any) *Failure {
	return &Failure{Error: ErrRuntime, Cause: statePrefix(state, entered) + fmt.Sprintf(format, args...)}
}

func statePrefix(state string, entered int64) string {
	return fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). ", state, entered)
}

// matches reports whether an ErrorEquals list matches the failure f.
// States.Runtime is terminal: nothing matches it, not even an explicit
// States.Runtime entry. States.Timeout also matches a lapsed heartbeat (the
// ASL specification: a Task "failed to send a heartbeat for a period
// longer than the HeartbeatSeconds value"), and States.HeartbeatTimeout a
// heartbeat that AWS records as States.Timeout.
func matches(list []string, f *Failure) bool {
	name := f.Error
	if name == ErrRuntime {
		return false // never retried or caught, even when listed
	}
	for _, e := range list {
		if e == name {
			return true
		}
		if e == ErrTimeout && name == ErrHeartbeatTimeout || e == ErrHeartbeatTimeout && f.heartbeat {
			return true
		}
		if e == ErrALL && name != ErrRuntime {
			return true
		}
		if e == ErrTaskFailed && isTaskError(name) {
			return true
		}
	}
	return false
}

// isTaskError reports whether name is an error raised by a task itself
// (anything not predefined, or States.TaskFailed), which States.TaskFailed
// matches.
func isTaskError(name string) bool {
	switch name {
	case ErrRuntime, ErrTimeout, ErrHeartbeatTimeout, ErrDataLimitExceeded, ErrNoChoiceMatched,
		ErrIntrinsicFailure, ErrParameterPathFailure, ErrResultPathMatchFailure,
		ErrQueryEvaluationError, ErrExceedToleratedFailures, ErrBranchFailed, ErrItemReaderFailed, ErrResultWriterFailed:
		return false
	}
	return true
}

// fail handles a failure of the current state: retry, catch, or propagate.
func (th *thread) fail(f *Failure) {
	if f.abort {
		if th.x.status == Running {
			th.x.abort(f.Error, f.Cause)
		}
		return
	}
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
		if !matches(r.ErrorEquals, f) {
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
		th.x.branch(st.Name, BranchRetry, i)
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
		if !matches(c.ErrorEquals, f) {
			continue
		}
		if t := th.x.test; t != nil && th == th.x.root {
			t.caught, t.catchIndex = f, i
		}
		th.x.branch(st.Name, BranchCatch, i)
		th.caught(i, f)
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

// caught leaves the state through the catcher at index i, which handles f.
func (th *thread) caught(i int, f *Failure) {
	errOut := value.NewObject(2)
	if f.unnamed {
		errOut.Set("Error", nil)
		if f.Cause == "" {
			errOut.Set("Cause", nil)
		} else {
			errOut.Set("Cause", f.Cause)
		}
	} else {
		errOut.Set("Error", f.Error)
		errOut.Set("Cause", f.Cause)
	}
	out, cf := th.cur.ev.caught(th, i, errOut)
	if cf != nil {
		th.propagate(cf) // a catcher's own failure is not caught again
		return
	}
	th.exit(out, th.cur.catch[i].next)
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
	if f.abort {
		if th.x.status == Running {
			th.x.abort(f.Error, f.Cause)
		}
		return
	}
	if f.evaluation {
		th.evaluationFailed(f)
	}
	th.gen++
	th.dead = true
	th.dropForms()
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

// site is where a failure arose: the state and the id of its Entered
// event, which the cause of every States.Runtime, intrinsic and evaluation
// failure names.
type site struct {
	state   string
	entered int64
}

// site is where the thread is: its current state's run.
func (th *thread) site() site { return site{state: th.cur.Name, entered: th.run.enteredID} }
