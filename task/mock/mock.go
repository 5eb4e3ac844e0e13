// Package mock serves Task states from a mock configuration (AWS Step
// Functions Local's MockConfigFile, and the conformance corpus's mocks with
// their Lambda function behaviours) instead of calling anything: Config is
// the parsed configuration, Invoker the task.Invoker for one state machine
// and test case.
//
// It must not import the engine beside it, the other backends but
// task/lambdashape, or anything above (service, conformance and cmd/stepd use
// it).
package mock

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

// Config is a mock configuration. It reads two formats, which may be
// mixed in one document.
//
// AWS Step Functions Local's MockConfigFile:
//
//	{"StateMachines": {"<machine>": {"TestCases": {"<case>": {"<State>": "<Response>"}}}},
//	 "MockedResponses": {"<Response>": {"0": {"Return": ...},
//	                                    "1-2": {"Throw": {"Error": "...", "Cause": "..."}}}}}
//
// The conformance corpus's "mocks" member, which adds Lambda function
// behaviours and a test case that applies to every state machine:
//
//	{"LambdaFunctions": {"<function ARN>": {"0": {"ReturnInput": true}, "Delay": ...}},
//	 "TestCase": {"<State>": "<Response>"},
//	 "MockedResponses": {...}}
//
// Response maps are keyed by the invocation index of the state in the
// execution (task.Request.Attempt, retries included): "0", "1", or inclusive
// ranges "1-3". An entry holds exactly one of
//
//   - {"Return": v}: the raw integration result (before ResultSelector and
//     ResultPath);
//   - {"Throw": {"Error": e, "Cause": c}}: the task fails with e and c;
//   - {"ReturnInput": true}: the effective input (for a Lambda function, the
//     event it was invoked with);
//   - {"ReturnRepeat": {"Value": s, "Count": n}}: the string s repeated n
//     times;
//
// and optionally "Delay": seconds of simulated run time (task.Result.Delay).
//
// A response to a .waitForTaskToken or .sync Task is the outcome of the
// callback or of the job; as AWS does, the history records TaskSubmitted
// (with an empty object as output: the configuration does not give the
// response of the call that handed the token on or started the job)
// before the task's success or failure (task.Result.Submitted).
//
// An invocation past the last key reuses the last entry, so that "0" alone
// answers every invocation (the conformance corpus depends on this).
// Step Functions Local instead fails the execution when an invocation has no
// entry. An invocation that falls in a gap between keys (or before the first
// one) fails with States.Runtime here too.
type Config struct {
	machines  map[string]map[string]map[string]string // machine → test case → state → response
	testCase  map[string]string                       // top-level TestCase
	responses map[string]responses
	functions []function // LambdaFunctions in document order
}

// function is a mocked Lambda function.
type function struct {
	arn string
	ref lambdashape.Ref
	rs  responses
}

// responses are mocked outcomes by invocation index, sorted by range.
type responses []response

type responseKind uint8

const (
	kindReturn responseKind = iota
	kindThrow
	kindReturnInput
	kindReturnRepeat
)

type response struct {
	key    string
	lo, hi int // inclusive invocation range
	kind   responseKind
	value  any // Return value, or the repeated string
	err    string
	cause  string
	delay  time.Duration
}

// at returns the entry for invocation i: the one whose range holds i, the
// last one when i is past every range, or nil for a gap.
func (rs responses) at(i int) *response {
	for k := range rs {
		if i >= rs[k].lo && i <= rs[k].hi {
			return &rs[k]
		}
	}
	if len(rs) > 0 && i > rs[len(rs)-1].hi {
		return &rs[len(rs)-1]
	}
	return nil
}

// result is the outcome of the entry for the given event (the effective
// input).
func (r *response) result(event any) task.Result {
	var res task.Result
	switch r.kind {
	case kindThrow:
		res = task.Result{Error: r.err, Cause: r.cause}
	case kindReturnInput:
		res = task.Result{Output: event}
	default:
		res = task.Result{Output: r.value}
	}
	res.Delay = r.delay
	return res
}

// maxRepeat bounds the size of a ReturnRepeat string.
const maxRepeat = 64 << 20

// Parse parses a mock configuration from JSON text.
func Parse(data []byte) (*Config, error) {
	v, err := value.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("mock configuration: %w", err)
	}
	return FromValue(v)
}

// FromValue builds a mock configuration from a parsed JSON value.
// Errors name the JSON location of the problem, e.g.
// `MockedResponses.R1."1-x": invalid invocation range`.
func FromValue(v any) (*Config, error) {
	c, err := fromValue(v)
	if err != nil {
		return nil, fmt.Errorf("mock configuration: %w", err)
	}
	return c, nil
}

func fromValue(v any) (*Config, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object, not %s", value.Phrase(v))
	}
	c := &Config{
		machines:  map[string]map[string]map[string]string{},
		responses: map[string]responses{},
	}
	for k, v := range o.All {
		var err error
		switch k {
		case "StateMachines":
			err = c.parseMachines(v)
		case "MockedResponses":
			err = forEachMember(v, k, func(name string, rv any) error {
				rs, err := parseResponses(rv, path(k, name), false)
				c.responses[name] = rs
				return err
			})
		case "LambdaFunctions":
			err = forEachMember(v, k, func(arn string, rv any) error {
				at := path(k, arn)
				ref, ok := lambdashape.ParseRef(arn)
				if !ok {
					return fmt.Errorf("%s: not a Lambda function ARN or name", at)
				}
				rs, err := parseResponses(rv, at, true)
				c.functions = append(c.functions, function{arn: arn, ref: ref, rs: rs})
				return err
			})
		case "TestCase":
			c.testCase, err = stringMap(v, k)
		default:
			err = fmt.Errorf("unknown member %q (want StateMachines, MockedResponses, LambdaFunctions or TestCase)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	// Every test case must name defined responses.
	check := func(at string, m map[string]string) error {
		for _, state := range sortedKeys(m) {
			if _, ok := c.responses[m[state]]; !ok {
				return fmt.Errorf("%s: names the response %q, which MockedResponses does not define", path(at, state), m[state])
			}
		}
		return nil
	}
	if err := check("TestCase", c.testCase); err != nil {
		return nil, err
	}
	for _, sm := range sortedKeys(c.machines) {
		for _, tc := range sortedKeys(c.machines[sm]) {
			if err := check(path(path(path("StateMachines", sm), "TestCases"), tc), c.machines[sm][tc]); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (c *Config) parseMachines(v any) error {
	return forEachMember(v, "StateMachines", func(sm string, mv any) error {
		at := path("StateMachines", sm)
		mo, ok := mv.(*value.Object)
		if !ok {
			return fmt.Errorf("%s: must be an object with TestCases, not %s", at, value.Phrase(mv))
		}
		cases := map[string]map[string]string{}
		for k, tcs := range mo.All {
			if k != "TestCases" {
				return fmt.Errorf("%s: unknown member %q (want TestCases)", at, k)
			}
			err := forEachMember(tcs, path(at, k), func(tc string, tv any) error {
				m, err := stringMap(tv, path(path(at, k), tc))
				cases[tc] = m
				return err
			})
			if err != nil {
				return err
			}
		}
		c.machines[sm] = cases
		return nil
	})
}

// forEachMember calls f for each member of the object v.
func forEachMember(v any, at string, f func(k string, v any) error) error {
	o, ok := v.(*value.Object)
	if !ok {
		return fmt.Errorf("%s: must be an object, not %s", at, value.Phrase(v))
	}
	for k, e := range o.All {
		if err := f(k, e); err != nil {
			return err
		}
	}
	return nil
}

func stringMap(v any, at string) (map[string]string, error) {
	m := map[string]string{}
	err := forEachMember(v, at, func(k string, e any) error {
		s, ok := e.(string)
		if !ok {
			return fmt.Errorf("%s: must be the name of a mocked response (a string), not %s", path(at, k), value.Phrase(e))
		}
		m[k] = s
		return nil
	})
	return m, err
}

func parseResponses(v any, at string, isLambda bool) (responses, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object keyed by invocation index, not %s", at, value.Phrase(v))
	}
	if o.Len() == 0 {
		return nil, fmt.Errorf("%s: has no entries (want keys such as \"0\" or \"1-3\")", at)
	}
	rs := make(responses, 0, o.Len())
	for key, ev := range o.All {
		kat := path(at, key)
		lo, hi, err := parseRange(key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kat, err)
		}
		r, err := parseResponse(ev, kat, isLambda)
		if err != nil {
			return nil, err
		}
		r.key, r.lo, r.hi = key, lo, hi
		rs = append(rs, r)
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	for i := 1; i < len(rs); i++ {
		if rs[i].lo <= rs[i-1].hi {
			return nil, fmt.Errorf("%s: the invocations %q and %q overlap", at, rs[i-1].key, rs[i].key)
		}
	}
	return rs, nil
}

var (
	indexRE = regexp.MustCompile(`^[0-9]+$`)
	rangeRE = regexp.MustCompile(`^([0-9]+)-([0-9]+)$`)
)

func parseRange(key string) (int, int, error) {
	if indexRE.MatchString(key) {
		n, err := strconv.Atoi(key)
		if err != nil {
			return 0, 0, fmt.Errorf("invalid invocation index (too large)")
		}
		return n, n, nil
	}
	m := rangeRE.FindStringSubmatch(key)
	if m == nil {
		if strings.Contains(key, "-") {
			return 0, 0, fmt.Errorf("invalid invocation range (want \"N-M\" with N <= M)")
		}
		return 0, 0, fmt.Errorf("invalid invocation index (want \"N\" or a range \"N-M\")")
	}
	lo, err1 := strconv.Atoi(m[1])
	hi, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || hi < lo {
		return 0, 0, fmt.Errorf("invalid invocation range (want \"N-M\" with N <= M)")
	}
	return lo, hi, nil
}

func parseResponse(v any, at string, isLambda bool) (response, error) {
	var r response
	o, ok := v.(*value.Object)
	if !ok {
		return r, fmt.Errorf("%s: must be an object with Return or Throw, not %s", at, value.Phrase(v))
	}
	n := 0
	for k, e := range o.All {
		kat := path(at, k)
		switch k {
		case "Return":
			r.kind, r.value = kindReturn, e
			n++
		case "ReturnInput":
			if e != true {
				return r, fmt.Errorf("%s: must be true", kat)
			}
			r.kind = kindReturnInput
			n++
		case "ReturnRepeat":
			s, err := parseRepeat(e, kat)
			if err != nil {
				return r, err
			}
			r.kind, r.value = kindReturnRepeat, s
			n++
		case "Throw":
			if err := parseThrow(e, kat, &r); err != nil {
				return r, err
			}
			r.kind = kindThrow
			n++
		case "Delay":
			d, ok := e.(value.Number)
			secs := 0.0
			if ok {
				secs = d.Float64()
			}
			if !ok || secs < 0 || math.IsInf(secs, 0) || secs > 1e9 {
				return r, fmt.Errorf("%s: must be a non-negative number of seconds", kat)
			}
			r.delay = time.Duration(secs * float64(time.Second))
		default:
			want := "Return, Throw, ReturnInput, ReturnRepeat or Delay"
			if !isLambda {
				want = "Return or Throw (or ReturnInput, ReturnRepeat, Delay)"
			}
			return r, fmt.Errorf("%s: unknown member (want %s)", kat, want)
		}
	}
	if n != 1 {
		return r, fmt.Errorf("%s: must have exactly one of Return, Throw, ReturnInput and ReturnRepeat", at)
	}
	return r, nil
}

func parseRepeat(v any, at string) (string, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return "", fmt.Errorf("%s: must be an object with Value and Count", at)
	}
	val, _ := o.Get("Value")
	cnt, _ := o.Get("Count")
	s, ok1 := val.(string)
	cn, ok2 := cnt.(value.Number)
	count, isInt := int64(0), false
	if ok2 {
		count, isInt = cn.Int64()
	}
	if !ok1 || !isInt || count < 0 || o.Len() != 2 {
		return "", fmt.Errorf("%s: must be {\"Value\": string, \"Count\": non-negative integer}", at)
	}
	if len(s) > 0 && count > maxRepeat/int64(len(s)) {
		return "", fmt.Errorf("%s: the repeated string would exceed %d bytes", at, maxRepeat)
	}
	return strings.Repeat(s, int(count)), nil
}

func parseThrow(v any, at string, r *response) error {
	o, ok := v.(*value.Object)
	if !ok {
		return fmt.Errorf("%s: must be an object with Error and Cause", at)
	}
	for k, e := range o.All {
		s, isStr := e.(string)
		switch {
		case k != "Error" && k != "Cause":
			return fmt.Errorf("%s: unknown member (want Error and Cause)", path(at, k))
		case !isStr:
			return fmt.Errorf("%s: must be a string, not %s", path(at, k), value.Phrase(e))
		case k == "Error":
			r.err = s
		default:
			r.cause = s
		}
	}
	if r.err == "" {
		return fmt.Errorf("%s: must be a non-empty string", path(at, "Error"))
	}
	return nil
}

// StateMachines returns the names of the state machines the configuration's
// StateMachines member describes, sorted.
func (c *Config) StateMachines() []string { return sortedKeys(c.machines) }

// Invoker returns an invoker serving the states of the named state machine
// in the given test case. The top-level TestCase map applies to every state
// machine; the named test case adds to it (and wins for a state in both).
// With an empty test case only the top-level TestCase and the Lambda
// functions apply. A test case that the configuration does not define is an
// error.
//
// The invoker (a *Invoker) answers, in this order: a state listed in
// the test case with its mocked response; a Lambda task whose function is
// described under LambdaFunctions with that behaviour, wrapped as the
// integration returns it; a Lambda task naming another function with
// Lambda.ResourceNotFoundException as AWS reports it (when LambdaFunctions
// is not empty, it describes the account's functions); anything else with a
// States.Runtime failure whose cause names the state and resource and says
// how to mock it.
func (c *Config) Invoker(stateMachine, testCase string) (task.Invoker, error) {
	states := map[string]string{}
	for k, v := range c.testCase {
		states[k] = v
	}
	if testCase != "" {
		cases, ok := c.machines[stateMachine]
		if !ok {
			return nil, fmt.Errorf("mock configuration: StateMachines has no state machine %q (test case %q)", stateMachine, testCase)
		}
		m, ok := cases[testCase]
		if !ok {
			return nil, fmt.Errorf("mock configuration: state machine %q has no test case %q (it has %s)", stateMachine, testCase, strings.Join(quoteAll(sortedKeys(cases)), ", "))
		}
		for k, v := range m {
			states[k] = v
		}
	}
	return &Invoker{c: c, states: states, machine: stateMachine, testCase: testCase}, nil
}

// Invoker serves tasks from a Config; see Config.Invoker.
type Invoker struct {
	c        *Config
	states   map[string]string
	machine  string
	testCase string
}

// Serves reports whether the configuration mocks the request: its state is
// in the test case, or it is a Lambda task for a described function. A
// task.Router passes over an Invoker for the requests it does not serve.
func (m *Invoker) Serves(req *task.Request) bool {
	if _, ok := m.states[req.StateName]; ok {
		return true
	}
	call, ok := lambdashape.CallOf(req)
	if !ok {
		return false
	}
	_, found := m.c.findFunction(call.Function)
	return found
}

// Immediate reports true: a mock answers from its configuration, at once
// (a mocked run time is a Result.Delay, which the engine's clock applies).
func (m *Invoker) Immediate(*task.Request) bool { return true }

// Invoke answers the request from the mock configuration.
func (m *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	if name, ok := m.states[req.StateName]; ok {
		r := m.c.responses[name].at(req.Attempt)
		if r == nil {
			return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("the mocked response %q has no entry for invocation %d of state %q", name, req.Attempt, req.StateName)}
		}
		res := r.result(req.Input)
		if req.Pattern == task.WaitForTaskToken || req.Pattern.Job() {
			// The response is the callback's or the job's outcome; AWS
			// records the call that handed the token on or started the
			// job (TaskSubmitted) before it, succeeded or failed. The
			// configuration does not give that call's response.
			res.Submitted = value.NewObject(0)
		}
		return res
	}
	if call, ok := lambdashape.CallOf(req); ok && len(m.c.functions) > 0 {
		return m.invokeFunction(req, call)
	}
	where := fmt.Sprintf("state machine %q", m.machine)
	if m.testCase != "" {
		where += fmt.Sprintf(", test case %q", m.testCase)
	}
	how := "map the state to a MockedResponses entry in the test case of the mock configuration"
	if strings.Contains(req.Resource, ":lambda:") {
		how += ", or describe the function under LambdaFunctions"
	}
	return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no mock for state %q (resource %s) in %s: %s", req.StateName, req.Resource, where, how)}
}

func (m *Invoker) invokeFunction(req *task.Request, call lambdashape.Call) task.Result {
	if call.Err != nil {
		return *call.Err
	}
	fn, ok := m.c.findFunction(call.Function)
	if !ok {
		return lambdashape.NotFound(call)
	}
	r := fn.rs.at(req.Attempt)
	if r == nil {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("LambdaFunctions.%s has no entry for invocation %d of state %q", fn.arn, req.Attempt, req.StateName)}
	}
	event, perr := call.Event()
	if perr != nil {
		return *perr
	}
	res := r.result(event)
	switch {
	case res.Failed() && call.Direct:
		// The direct Lambda integration passes the function's error on
		// as the runtime wrote it (Python's json.dumps separators).
		res.Cause = lambdashape.PythonCause(res.Cause)
	case res.Failed(), call.Direct:
	default:
		res.Output = lambdashape.InvokeResponse(res.Output, call)
	}
	return res
}

func (c *Config) findFunction(name string) (*function, bool) {
	for i := range c.functions {
		if c.functions[i].arn == name {
			return &c.functions[i], true
		}
	}
	ref, ok := lambdashape.ParseRef(name)
	if !ok {
		return nil, false
	}
	for i := range c.functions {
		if c.functions[i].ref.Matches(ref) {
			return &c.functions[i], true
		}
	}
	return nil, false
}

// path appends a member name to a JSON location, quoting it unless it is a
// plain identifier.
func path(at, key string) string {
	if identRE.MatchString(key) {
		return at + "." + key
	}
	return at + "." + strconv.Quote(key)
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
