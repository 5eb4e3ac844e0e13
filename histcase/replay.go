package histcase

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// aYear is longer than any execution runs (AWS's limit is a year): a task
// that had not answered when the recorded execution ended answers after
// it in the case, so the execution ends first, as recorded.
const aYear = 365*24*3600 + 1

// replayer answers a replay's tasks with the recorded invocations: a
// request takes the first unused invocation of its state whose parameters
// are the request's, else the first unused one of its state (the
// parameters differ where the definition draws random values or reads the
// clock, or where the recording hid values). What each state was asked,
// in order, becomes its mocked responses.
type replayer struct {
	mu     sync.Mutex
	byName map[string]*pool
	anon   []*invocation // invocations whose state the history does not name
	// asked lists, per state, the response given at each invocation
	// index (task.Request.Attempt).
	asked map[string][]*answer
	order []string // states in the order first asked
	notes *notes
}

// pool holds a state's recorded invocations: in recorded order, and by
// their parameters' text, so that a request finds its own in constant
// time even in a history of thousands of invocations.
type pool struct {
	all   []*invocation
	next  int                      // all[:next] are used
	byKey map[string][]*invocation // unused ones first
}

// answer is the response a state gave at one invocation index.
type answer struct {
	iv    *invocation // nil when no recorded invocation was left
	entry *value.Object
	res   task.Result
}

func newReplayer(ivs []*invocation, n *notes) *replayer {
	r := &replayer{byName: map[string]*pool{}, asked: map[string][]*answer{}, notes: n}
	for _, iv := range ivs {
		if iv.state == "" {
			r.anon = append(r.anon, iv)
			continue
		}
		p := r.byName[iv.state]
		if p == nil {
			p = &pool{byKey: map[string][]*invocation{}}
			r.byName[iv.state] = p
		}
		p.all = append(p.all, iv)
		if iv.hasParam {
			k := keyOf(iv.params)
			p.byKey[k] = append(p.byKey[k], iv)
		}
	}
	return r
}

// Immediate reports true, as a mock does, so that the replay asks its
// tasks in the order the case's mocks will be asked.
func (r *replayer) Immediate(*task.Request) bool { return true }

func (r *replayer) Invoke(_ context.Context, req *task.Request) task.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	iv := r.pick(req)
	prev := r.asked[req.StateName]
	if _, seen := r.asked[req.StateName]; !seen {
		r.order = append(r.order, req.StateName)
	}
	var a *answer
	switch {
	case iv != nil:
		iv.used = true
		entry, res := r.entryOf(iv)
		a = &answer{iv: iv, entry: entry, res: res}
	case len(prev) > 0 && prev[len(prev)-1] != nil:
		// A mock reuses its last entry past the end.
		last := prev[len(prev)-1]
		a = &answer{entry: last.entry, res: last.res}
		r.notes.add("%s was asked more often than the history recorded (invocation %d): the case answers it with its last recorded response, as a mock does", stateDesc(req), req.Attempt+1)
	default:
		r.notes.add("%s: the history records no invocation of it, so the case has no mock for it (a mock answers it with States.Runtime)", stateDesc(req))
		for len(r.asked[req.StateName]) <= req.Attempt {
			r.asked[req.StateName] = append(r.asked[req.StateName], nil)
		}
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no mock for state %q (resource %s): the history records no invocation of it", req.StateName, req.Resource)}
	}
	for len(r.asked[req.StateName]) <= req.Attempt {
		r.asked[req.StateName] = append(r.asked[req.StateName], nil)
	}
	r.asked[req.StateName][req.Attempt] = a
	return a.res
}

func stateDesc(req *task.Request) string {
	return fmt.Sprintf("Task state %s (%s)", req.StateName, req.Resource)
}

// pick chooses the recorded invocation that answers req.
func (r *replayer) pick(req *task.Request) *invocation {
	if p := r.byName[req.StateName]; p != nil {
		key := keyOf(req.Input)
		q := p.byKey[key]
		for len(q) > 0 && q[0].used {
			q = q[1:]
		}
		p.byKey[key] = q
		if len(q) > 0 {
			return q[0]
		}
		for p.next < len(p.all) && p.all[p.next].used {
			p.next++
		}
		if p.next < len(p.all) {
			return p.all[p.next]
		}
		return nil
	}
	var first *invocation
	key := keyOf(req.Input)
	for _, iv := range r.anon {
		if iv.used || !sameResource(iv.resource, req.Resource) {
			continue
		}
		if iv.hasParam && keyOf(iv.params) == key {
			return iv
		}
		if first == nil {
			first = iv
		}
	}
	return first
}

// sameResource compares a resource rebuilt from an event with the one the
// state names, ignoring the partition and the pattern's suffix (a
// TaskScheduled event keeps it; the ARN of a Lambda function may be
// given with a version or alias).
func sameResource(recorded, named string) bool {
	return recorded == "" || recorded == named || trimARN(recorded) == trimARN(named)
}

func trimARN(s string) string {
	for _, p := range []string{"arn:aws:", "arn:aws-us-gov:", "arn:aws-cn:"} {
		if len(s) > len(p) && s[:len(p)] == p {
			return s[len(p):]
		}
	}
	return s
}

// entryOf is the mocked response of a recorded invocation, and the result
// it stands for.
func (r *replayer) entryOf(iv *invocation) (*value.Object, task.Result) {
	switch iv.how {
	case returned:
		return value.ObjectOf("Return", iv.output), task.Result{Output: iv.output}
	case thrown:
		errName := iv.err
		if errName == "" {
			// A mock's Throw needs an error name; AWS reports such a
			// failure with an empty one.
			errName = "States.TaskFailed"
			r.notes.add("%s failed with no error name at %s: the case throws States.TaskFailed", iv.what(), iv.end)
		}
		th := value.ObjectOf("Error", errName)
		if iv.cause != "" {
			th.Set("Cause", iv.cause)
		}
		return value.ObjectOf("Throw", th), task.Result{Error: errName, Cause: iv.cause}
	case timedOut:
		if secs := delayFor(iv); secs > 0 {
			return value.ObjectOf("Return", nil, "Delay", value.Int(secs)),
				task.Result{Delay: time.Duration(secs) * time.Second}
		}
		th := value.ObjectOf("Error", orDefault(iv.err, "States.Timeout"))
		if iv.cause != "" {
			th.Set("Cause", iv.cause)
		}
		r.notes.add("%s timed out at %s, but its scheduling event gives no timeout to exceed: the case throws %s instead (a TaskFailed event where AWS recorded a timeout)", iv.what(), iv.end, orDefault(iv.err, "States.Timeout"))
		return value.ObjectOf("Throw", th), task.Result{Error: orDefault(iv.err, "States.Timeout"), Cause: iv.cause}
	}
	r.notes.add("%s had not answered when the execution ended: the case answers it after a year (%d s of the virtual clock), so that the execution ends first as it did", iv.what(), aYear)
	return value.ObjectOf("Return", nil, "Delay", value.Int(aYear)), task.Result{Delay: aYear * time.Second}
}

// delayFor is how long a timed-out invocation's mock takes so that the
// same timer ends it in the replay: one second past its heartbeat or its
// timeout, whichever fired; 0 when the event gives neither.
func delayFor(iv *invocation) int64 {
	if iv.err == "States.HeartbeatTimeout" && iv.beat > 0 {
		return iv.beat + 1
	}
	if iv.timeout > 0 && (iv.beat == 0 || iv.beat >= iv.timeout) {
		return iv.timeout + 1
	}
	if iv.beat > 0 && iv.timeout == 0 {
		return iv.beat + 1
	}
	return 0
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// mocks builds the case's inline mocks: TestCase maps each Task state to
// its responses, by invocation index, equal consecutive responses merged
// into a range ("1-3").
func (r *replayer) mocks() *value.Object {
	if len(r.order) == 0 {
		return nil
	}
	tc := value.NewObject(len(r.order))
	resp := value.NewObject(len(r.order))
	for _, state := range r.order {
		as := r.asked[state]
		rs := value.NewObject(len(as))
		for i := 0; i < len(as); {
			if as[i] == nil {
				i++
				continue
			}
			j := i
			for j+1 < len(as) && as[j+1] != nil && value.Equal(as[j+1].entry, as[i].entry) {
				j++
			}
			key := fmt.Sprint(i)
			if j > i {
				key = fmt.Sprintf("%d-%d", i, j)
			}
			rs.Set(key, as[i].entry)
			i = j + 1
		}
		if rs.Len() == 0 {
			continue
		}
		tc.Set(state, state)
		resp.Set(state, rs)
	}
	if tc.Len() == 0 {
		return nil
	}
	return value.ObjectOf("TestCase", tc, "MockedResponses", resp)
}
