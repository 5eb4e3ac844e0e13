package histcase

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

// family is the kind of events a task's invocation records.
type family uint8

const (
	famTask     family = iota + 1 // Task* (optimized integrations, aws-sdk, HTTP, callbacks, .sync)
	famLambda                     // LambdaFunction* (a Lambda function ARN as the Resource)
	famActivity                   // Activity*
)

// outcome is how a recorded invocation ended.
type outcome uint8

const (
	pending  outcome = iota // no answer before the history ends
	returned                // succeeded with output
	thrown                  // failed with error and cause
	timedOut                // timed out (TaskTimedOut, ActivityTimedOut, LambdaFunctionTimedOut)
)

// invocation is one invocation of a Task state found in a history.
type invocation struct {
	state     string // the Task state's name, "" when the history does not tell
	fam       family
	resource  string // the Resource the state names, rebuilt from the event
	params    any    // the parameters (Task) or input (Lambda, activity)
	hasParam  bool
	timeout   int64 // timeoutInSeconds, heartbeatInSeconds as scheduled
	beat      int64
	scheduled *Event
	end       *Event // the event that ended it, nil while pending
	how       outcome
	output    any
	err       string
	cause     string
	child     string // the history it came from: "" for the execution's own, else a child execution's
	used      bool
}

// what describes the invocation for notes: "Task state Charge (event 12)".
func (iv *invocation) what() string {
	s := "a Task state"
	if iv.state != "" {
		s = "Task state " + iv.state
	}
	s += " (" + iv.scheduled.String()
	if iv.child != "" {
		s += " of " + iv.child
	}
	return s + ")"
}

// familyOf tells the family of a Task*, LambdaFunction* or Activity*
// event and the step it records (Scheduled, Succeeded ...); 0 for others.
func familyOf(typ string) (family, string) {
	for _, p := range []struct {
		prefix string
		fam    family
	}{{"LambdaFunction", famLambda}, {"Activity", famActivity}, {"Task", famTask}} {
		if rest, ok := strings.CutPrefix(typ, p.prefix); ok {
			if p.fam == famTask && strings.HasPrefix(rest, "State") {
				return 0, "" // TaskStateEntered, TaskStateExited, TaskStateAborted
			}
			return p.fam, rest
		}
	}
	return 0, ""
}

// detailsWanted are the types of events whose data a case needs, with the
// member that holds it.
var detailsWanted = map[string]string{
	"ExecutionStarted":        "input",
	"ExecutionSucceeded":      "output",
	"TaskSucceeded":           "output",
	"LambdaFunctionSucceeded": "output",
	"ActivitySucceeded":       "output",
}

// invocations finds every invocation of a Task state in h, in history
// order. It refuses a history recorded without its data
// (includeExecutionData false): the inputs and outputs are what a case
// replays.
func invocations(h *History, child string) ([]*invocation, error) {
	byID := make(map[int64]*Event, len(h.Events))
	for _, e := range h.Events {
		if e.HasID {
			byID[e.ID] = e
		}
	}
	var out []*invocation
	open := map[int64]*invocation{} // the id of each event of an invocation → it
	lastEntered := ""
	type orphan struct {
		e    *Event
		fam  family
		step string
	}
	var orphans []orphan
	for _, e := range h.Events {
		if member, ok := detailsWanted[e.Type]; ok {
			if _, has, err := h.Data(e, member); err != nil {
				return nil, err
			} else if !has {
				return nil, noData(h, e, member)
			}
		}
		if e.Type == "TaskStateEntered" {
			lastEntered = e.Str("name")
		}
		fam, step := familyOf(e.Type)
		if fam == 0 {
			continue
		}
		var iv *invocation
		switch step {
		case "Scheduled", "ScheduleFailed":
			iv = &invocation{fam: fam, scheduled: e, child: child}
			iv.state = stateOf(e, byID)
			if iv.state == "" && !e.HasID {
				iv.state = lastEntered
			}
			iv.resource = resourceOf(e, fam)
			member := "parameters"
			if fam != famTask {
				member = "input"
			}
			v, has, err := h.Data(e, member)
			if err != nil {
				return nil, err
			}
			if !has && step == "Scheduled" {
				return nil, noData(h, e, member)
			}
			iv.params, iv.hasParam = v, has
			iv.timeout, iv.beat = e.Int("timeoutInSeconds"), e.Int("heartbeatInSeconds")
			out = append(out, iv)
		default:
			if e.HasID {
				iv = openBefore(e, open, byID)
			}
			if iv == nil && !e.HasID {
				// No chain to follow (a recording that lost the ids
				// of a segment, and sorted its events): paired with
				// the open invocations of its family once all are
				// known.
				orphans = append(orphans, orphan{e, fam, step})
				continue
			}
			if iv == nil {
				continue
			}
		}
		if err := iv.apply(h, e, step); err != nil {
			return nil, err
		}
		if e.HasID {
			open[e.ID] = iv
		}
	}
	for _, o := range orphans {
		if o.step == "Started" || o.step == "Submitted" {
			continue
		}
		for _, iv := range out {
			if iv.fam == o.fam && iv.end == nil && !iv.scheduled.HasID {
				if err := iv.apply(h, o.e, o.step); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return out, nil
}

// openBefore finds the invocation an event continues: the one of the
// event its previousEventId names, or, should that be an event of no
// invocation, of the nearest one before it on the chain; nil when that
// invocation has ended.
func openBefore(e *Event, open map[int64]*invocation, byID map[int64]*Event) *invocation {
	prev := e.Prev
	for steps := 0; steps < 1000; steps++ {
		if iv, ok := open[prev]; ok {
			if iv.end != nil {
				return nil
			}
			return iv
		}
		p := byID[prev]
		if p == nil || p.Prev >= p.ID {
			return nil
		}
		prev = p.Prev
	}
	return nil
}

// apply records what the event e (step: Succeeded, Failed ...) says of
// the invocation.
func (iv *invocation) apply(h *History, e *Event, step string) error {
	switch step {
	case "Succeeded":
		v, _, err := h.Data(e, "output")
		if err != nil {
			return err
		}
		iv.how, iv.output, iv.end = returned, v, e
	case "Failed", "StartFailed", "SubmitFailed", "ScheduleFailed":
		iv.how, iv.end = thrown, e
		iv.err, iv.cause = e.Str("error"), iv.causeOf(e)
	case "TimedOut":
		iv.how, iv.end = timedOut, e
		iv.err, iv.cause = e.Str("error"), iv.causeOf(e)
	}
	return nil
}

// causeOf is the cause of a failure event as text. A case file stores a
// cause that was JSON parsed: its text is written again as AWS wrote it,
// compact, except a Lambda function's error under a function ARN as the
// Resource, which AWS passes on as the Lambda runtime wrote it (Python's
// json.dumps separators).
func (iv *invocation) causeOf(e *Event) string {
	text, parsed := e.Text("cause")
	if parsed && iv.fam == famLambda {
		return lambdashape.PythonCause(text)
	}
	return text
}

// stateOf follows e's previousEventId chain back to the TaskStateEntered
// event of its state.
func stateOf(e *Event, byID map[int64]*Event) string {
	seen := 0
	for cur := e; cur != nil && cur.HasID && seen < 100000; seen++ {
		if cur.Type == "TaskStateEntered" {
			return cur.Str("name")
		}
		if cur.Prev >= cur.ID {
			return ""
		}
		cur = byID[cur.Prev]
	}
	return ""
}

// resourceOf rebuilds the Resource a Task state names from a scheduling
// event: TaskScheduled gives resourceType and resource ("lambda",
// "invoke.waitForTaskToken"), the others the function's or activity's ARN.
func resourceOf(e *Event, fam family) string {
	if fam != famTask {
		return e.Str("resource")
	}
	t, r := e.Str("resourceType"), e.Str("resource")
	if t == "" {
		return r
	}
	return "arn:aws:states:::" + t + ":" + r
}

func noData(h *History, e *Event, member string) error {
	return fmt.Errorf("%s: %s has no %s: the history was fetched without its data (includeExecutionData false, or the console's history without data); fetch it with its data (aws stepfunctions get-execution-history --include-execution-data, or GetExecutionHistory with includeExecutionData true)", h.Form, e, member)
}

// terminal is how the recorded execution ended.
type terminal struct {
	status string
	output any
	hasOut bool
	err    any
	cause  any
	event  *Event
}

var terminalStatus = map[string]string{
	"ExecutionSucceeded": "SUCCEEDED",
	"ExecutionFailed":    "FAILED",
	"ExecutionTimedOut":  "TIMED_OUT",
	"ExecutionAborted":   "ABORTED",
}

// ending returns the last terminal event of h, or an error when the
// execution had not ended when the history was read.
func ending(h *History) (*terminal, error) {
	for i := len(h.Events) - 1; i >= 0; i-- {
		e := h.Events[i]
		st, ok := terminalStatus[e.Type]
		if !ok {
			continue
		}
		t := &terminal{status: st, event: e}
		if st == "SUCCEEDED" {
			v, _, err := h.Data(e, "output")
			if err != nil {
				return nil, err
			}
			t.output, t.hasOut = v, true
			return t, nil
		}
		if e.Details != nil {
			if v, ok := e.Details.Get("error"); ok {
				t.err = v
			}
			if v, ok := e.Details.Get("cause"); ok {
				t.cause = v
			}
		}
		return t, nil
	}
	return nil, fmt.Errorf("%s has no ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut or ExecutionAborted event: the execution had not ended when the history was read (or its last page is missing)", h.Form)
}

// startInput returns the execution's input and role from ExecutionStarted.
func startInput(h *History) (input any, role string, err error) {
	for _, e := range h.Events {
		if e.Type != "ExecutionStarted" {
			continue
		}
		v, ok, err := h.Data(e, "input")
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", noData(h, e, "input")
		}
		return v, e.Str("roleArn"), nil
	}
	return nil, "", fmt.Errorf("%s has no ExecutionStarted event: its first page is missing", h.Form)
}

// keyOf is the canonical text of a task's parameters, to match a request
// to a recorded invocation.
func keyOf(v any) string { return value.String(v) }
