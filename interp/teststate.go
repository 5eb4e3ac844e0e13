package interp

import (
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// mocked reports whether the thread runs the tested container state with a
// mock, and answers it: the mock's output becomes the state's result.
func (th *thread) mocked(c *container) bool {
	t := th.x.test
	if t == nil || t.Mock == nil || th != th.x.root || t.done {
		return false
	}
	th.run.ctr = nil
	if t.Mock.Failed() {
		th.fail(&Failure{Error: t.Mock.Error, Cause: t.Mock.Cause})
		return true
	}
	// AWS counts mapIterationFailureCount only against a declared
	// tolerance: a Map without ToleratedFailure* ignores it.
	if c.isMap && t.MapFailures > 0 && c.hasTol {
		c.failed = t.MapFailures
		if !c.tolerates() {
			c.over = true
			th.fail(&Failure{Error: ErrExceedToleratedFailures, Cause: "The specified tolerated failure threshold was exceeded"})
			return true
		}
	}
	c.over = true
	th.stateResult(t.Mock.Output)
	return true
}

// Test asks an execution to run one state only, as the TestState API does.
type Test struct {
	State     string        // the state to run (in the top-level machine)
	Inspect   bool          // record inspection data (DEBUG and TRACE levels)
	Variables *value.Object // workflow variables in scope, if any
	// Mock answers a tested Parallel or Map state as a whole (Task states
	// get their mock through the invoker).
	Mock *task.Result
	// Context replaces members of the Context object ($$ /
	// $states.context).
	Context *value.Object
	// RetryCount is how many retries each retrier is taken to have made
	// already (stateConfiguration.retrierRetryCount).
	RetryCount int
	// MapFailures is how many iterations of a mocked Map are taken to have
	// failed (stateConfiguration.mapIterationFailureCount).
	MapFailures int
	// ItemReaderData stands for what the tested Map's ItemReader reads.
	ItemReaderData any
}

// TestOutcome is what a tested state did.
type TestOutcome struct {
	Status       string // SUCCEEDED, FAILED, RETRIABLE or CAUGHT_ERROR
	Output       any
	HasOutput    bool
	Error, Cause string
	NextState    string
	Inspection   *value.Object // nil unless Test.Inspect
}

type testRun struct {
	Test
	inspection *value.Object
	outcome    TestOutcome
	done       bool
	caught     *Failure
	catchIndex int
}

// inspect records a stage of the tested state's data processing.
func (th *thread) inspect(key string, v any) {
	if t := th.x.test; t != nil && t.inspection != nil && th == th.x.root && !t.done {
		t.inspection.Set(key, v)
	}
}

// stop ends the test when the state leaves towards next.
func (t *testRun) stop(x *Execution, output any, next *state) {
	t.done = true
	t.outcome.Output, t.outcome.HasOutput = output, true
	if next != nil {
		t.outcome.NextState = next.Name
	}
	t.outcome.Status = "SUCCEEDED"
	if t.caught != nil {
		t.outcome.Status = "CAUGHT_ERROR"
		t.outcome.Error, t.outcome.Cause = t.caught.Error, t.caught.Cause
		if t.inspection != nil {
			t.inspection.Set("errorDetails", value.ObjectOf("catchIndex", value.Int(int64(t.catchIndex))))
		}
	}
	x.status = Succeeded
	x.output = output
}

// retriable ends the test when a retrier would run the state again.
func (t *testRun) retriable(x *Execution, f *Failure, index int, delay time.Duration) {
	t.done = true
	t.outcome.Status = "RETRIABLE"
	t.outcome.Error, t.outcome.Cause = f.Error, f.Cause
	if t.inspection != nil {
		t.inspection.Set("errorDetails", value.ObjectOf("retryBackoffIntervalSeconds", value.Int(int64(delay/time.Second)), "retryIndex", value.Int(int64(index))))
	}
	x.status = Failed
	x.err = f
}

// TestOutcome returns the outcome of a test run (Info.Test), once the
// execution has ended.
func (x *Execution) TestOutcome() TestOutcome {
	t := x.test
	if t == nil {
		return TestOutcome{}
	}
	o := t.outcome
	if !t.done {
		switch x.status {
		case Succeeded:
			o.Status, o.Output, o.HasOutput = "SUCCEEDED", x.output, true
		default:
			o.Status = "FAILED"
			if x.err != nil {
				o.Error, o.Cause = x.err.Error, x.err.Cause
			}
		}
	}
	o.Inspection = t.inspection
	return o
}

// readerItems returns the items TestState's mapItemReaderData gives the
// tested Map state when it has an ItemReader.
func (th *thread) readerItems() (any, bool) {
	if r := th.run.read; r != nil && r.done {
		return r.items, true
	}
	t := th.x.test
	if t == nil || th != th.x.root || t.done || t.ItemReaderData == nil || !th.cur.ItemReader.Set {
		return nil, false
	}
	return t.ItemReaderData, true
}
