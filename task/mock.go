package task

import (
	"context"
	"crypto/rand"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/value"
)

// MockConfig is a mock configuration in AWS Step Functions Local's
// MockConfigFile format, extended with the conformance corpus's Lambda
// function behaviours:
//
//	{"StateMachines": {"<name>": {"TestCases": {"<case>": {"<State>": "<Response>"}}}},
//	 "MockedResponses": {"<Response>": {"0": {"Return": ...}, "1-2": {"Throw": {"Error": "...", "Cause": "..."}}}},
//	 "LambdaFunctions": {"<function ARN>": {"0": {"ReturnInput": true}}},
//	 "TestCase": {"<State>": "<Response>"}}
//
// The top-level TestCase applies to every state machine.
type MockConfig struct {
	machines  map[string]map[string]map[string]string // machine → test case → state → response
	responses map[string]responses
	functions map[string]responses // function ARN → behaviour
	testCase  map[string]string
}

// responses are mocked outcomes by invocation index.
type responses []response

type response struct {
	lo, hi int // inclusive invocation range
	// exactly one of:
	ret         any
	hasReturn   bool
	throw       *Result
	returnInput bool
	repeat      string
	delay       time.Duration
}

func (rs responses) at(i int) *response {
	for k := range rs {
		if i >= rs[k].lo && i <= rs[k].hi {
			return &rs[k]
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return &rs[len(rs)-1] // past the last key: reuse the last entry
}

// ParseMockConfig parses a mock configuration from JSON text.
func ParseMockConfig(data []byte) (*MockConfig, error) {
	v, err := value.Parse(data)
	if err != nil {
		return nil, err
	}
	return MockConfigFromValue(v)
}

// MockConfigFromValue builds a mock configuration from a parsed value.
func MockConfigFromValue(v any) (*MockConfig, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("mock configuration: must be a JSON object")
	}
	c := &MockConfig{machines: map[string]map[string]map[string]string{}, responses: map[string]responses{}, functions: map[string]responses{}}
	for k, v := range o.All {
		switch k {
		case "StateMachines":
			if err := c.parseMachines(v); err != nil {
				return nil, err
			}
		case "MockedResponses":
			if err := parseResponseSet(v, "MockedResponses", c.responses); err != nil {
				return nil, err
			}
		case "LambdaFunctions":
			if err := parseResponseSet(v, "LambdaFunctions", c.functions); err != nil {
				return nil, err
			}
		case "TestCase":
			m, err := stringMap(v, "TestCase")
			if err != nil {
				return nil, err
			}
			c.testCase = m
		default:
			return nil, fmt.Errorf("mock configuration: unknown member %q (want StateMachines, MockedResponses, LambdaFunctions or TestCase)", k)
		}
	}
	check := func(where string, m map[string]string) error {
		for state, r := range m {
			if _, ok := c.responses[r]; !ok {
				return fmt.Errorf("mock configuration: %s.%s names the response %q, which MockedResponses does not define", where, state, r)
			}
		}
		return nil
	}
	if err := check("TestCase", c.testCase); err != nil {
		return nil, err
	}
	for sm, cases := range c.machines {
		for tc, m := range cases {
			if err := check(fmt.Sprintf("StateMachines.%s.TestCases.%s", sm, tc), m); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func stringMap(v any, where string) (map[string]string, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("mock configuration: %s must be an object", where)
	}
	m := make(map[string]string, o.Len())
	for k, e := range o.All {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("mock configuration: %s.%s must be a response name (a string)", where, k)
		}
		m[k] = s
	}
	return m, nil
}

func (c *MockConfig) parseMachines(v any) error {
	o, ok := v.(*value.Object)
	if !ok {
		return fmt.Errorf("mock configuration: StateMachines must be an object")
	}
	for sm, mv := range o.All {
		mo, ok := mv.(*value.Object)
		if !ok {
			return fmt.Errorf("mock configuration: StateMachines.%s must be an object", sm)
		}
		tcs, ok := mo.Get("TestCases")
		tco, isObj := tcs.(*value.Object)
		if !ok || !isObj {
			return fmt.Errorf("mock configuration: StateMachines.%s.TestCases must be an object", sm)
		}
		cases := map[string]map[string]string{}
		for tc, tv := range tco.All {
			m, err := stringMap(tv, fmt.Sprintf("StateMachines.%s.TestCases.%s", sm, tc))
			if err != nil {
				return err
			}
			cases[tc] = m
		}
		c.machines[sm] = cases
	}
	return nil
}

func parseResponseSet(v any, where string, dst map[string]responses) error {
	o, ok := v.(*value.Object)
	if !ok {
		return fmt.Errorf("mock configuration: %s must be an object", where)
	}
	for name, rv := range o.All {
		ro, ok := rv.(*value.Object)
		if !ok {
			return fmt.Errorf("mock configuration: %s.%s must be an object keyed by invocation index", where, name)
		}
		var rs responses
		for key, ev := range ro.All {
			loc := fmt.Sprintf("%s.%s.%q", where, name, key)
			lo, hi, err := parseRange(key)
			if err != nil {
				return fmt.Errorf("mock configuration: %s: %w", loc, err)
			}
			r, err := parseResponse(ev, loc)
			if err != nil {
				return err
			}
			r.lo, r.hi = lo, hi
			rs = append(rs, r)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
		dst[name] = rs
	}
	return nil
}

func parseRange(key string) (int, int, error) {
	a, b, isRange := strings.Cut(key, "-")
	lo, err := strconv.Atoi(a)
	if err != nil || lo < 0 {
		return 0, 0, fmt.Errorf("invalid invocation index (want \"N\" or \"N-M\")")
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, err := strconv.Atoi(b)
	if err != nil || hi < lo {
		return 0, 0, fmt.Errorf("invalid invocation range (want \"N-M\" with N <= M)")
	}
	return lo, hi, nil
}

func parseResponse(v any, loc string) (response, error) {
	o, ok := v.(*value.Object)
	if !ok {
		return response{}, fmt.Errorf("mock configuration: %s must be an object with Return or Throw", loc)
	}
	var r response
	n := 0
	for k, e := range o.All {
		switch k {
		case "Return":
			r.ret, r.hasReturn = e, true
			n++
		case "ReturnInput":
			r.returnInput = e == true
			n++
		case "ReturnRepeat":
			ro, _ := e.(*value.Object)
			val, _ := ro.Get("Value")
			cnt, _ := ro.Get("Count")
			s, ok1 := val.(string)
			cn, ok2 := cnt.(value.Number)
			if !ok1 || !ok2 {
				return r, fmt.Errorf("mock configuration: %s.ReturnRepeat needs a string Value and a number Count", loc)
			}
			count, _ := cn.Int64()
			r.repeat = strings.Repeat(s, int(count))
			n++
		case "Throw":
			to, ok := e.(*value.Object)
			if !ok {
				return r, fmt.Errorf("mock configuration: %s.Throw must be an object with Error and Cause", loc)
			}
			errName, _ := to.Get("Error")
			cause, _ := to.Get("Cause")
			es, _ := errName.(string)
			cs, _ := cause.(string)
			if es == "" {
				return r, fmt.Errorf("mock configuration: %s.Throw.Error must be a non-empty string", loc)
			}
			r.throw = &Result{Error: es, Cause: cs}
			n++
		case "Delay":
			d, ok := e.(value.Number)
			if !ok {
				return r, fmt.Errorf("mock configuration: %s.Delay must be a number of seconds", loc)
			}
			r.delay = time.Duration(d.Float64() * float64(time.Second))
		default:
			return r, fmt.Errorf("mock configuration: %s: unknown member %q (want Return, Throw, ReturnInput, ReturnRepeat or Delay)", loc, k)
		}
	}
	if n != 1 {
		return r, fmt.Errorf("mock configuration: %s must have exactly one of Return, Throw, ReturnInput, ReturnRepeat", loc)
	}
	return r, nil
}

// Invoker returns an invoker serving the states of the named state machine
// in the given test case. An empty test case uses only the top-level
// TestCase map and Lambda function behaviours.
func (c *MockConfig) Invoker(stateMachine, testCase string) (Invoker, error) {
	states := c.testCase
	if testCase != "" {
		cases, ok := c.machines[stateMachine]
		if !ok {
			return nil, fmt.Errorf("mock configuration: no state machine %q in StateMachines", stateMachine)
		}
		m, ok := cases[testCase]
		if !ok {
			return nil, fmt.Errorf("mock configuration: state machine %q has no test case %q", stateMachine, testCase)
		}
		states = m
	}
	return &mockInvoker{c: c, states: states}, nil
}

type mockInvoker struct {
	c      *MockConfig
	states map[string]string
}

func (m *mockInvoker) Invoke(ctx context.Context, req *Request) Result {
	if name, ok := m.states[req.StateName]; ok {
		r := m.c.responses[name].at(req.Attempt)
		if r == nil {
			return Result{Error: "States.Runtime", Cause: fmt.Sprintf("mock response %q has no entries", name)}
		}
		res := r.result(req.Input)
		res.Delay = r.delay
		return res
	}
	fn, event, direct, isLambda := lambdaTarget(req)
	if isLambda {
		if rs, ok := m.c.findFunction(fn); ok {
			r := rs.at(req.Attempt)
			res := r.result(event)
			res.Delay = r.delay
			if res.Failed() && direct {
				// The direct Lambda integration passes the function's
				// error payload on as Lambda's runtime wrote it.
				res.Cause = pythonJSON(res.Cause)
			}
			if res.Failed() || direct {
				return res
			}
			res.Output = invokeResponse(res.Output)
			return res
		}
		if len(m.c.functions) > 0 {
			return Result{Error: "Lambda.ResourceNotFoundException", Cause: fmt.Sprintf("Function not found: %s (Service: Lambda, Status Code: 404, Request ID: %s)", fn, newRequestID())}
		}
	}
	return Result{Error: "States.Runtime", Cause: fmt.Sprintf("no mock for state %q (resource %s): add it to the test case in the mock configuration, or a LambdaFunctions entry for the function", req.StateName, req.Resource)}
}

func (r *response) result(event any) Result {
	switch {
	case r.throw != nil:
		return *r.throw
	case r.returnInput:
		return Result{Output: event}
	case r.repeat != "":
		return Result{Output: r.repeat}
	}
	return Result{Output: r.ret}
}

func (c *MockConfig) findFunction(fn string) (responses, bool) {
	if rs, ok := c.functions[fn]; ok {
		return rs, true
	}
	name := functionName(fn)
	for arn, rs := range c.functions {
		if functionName(arn) == name {
			return rs, true
		}
	}
	return nil, false
}

// functionName extracts the bare function name from a name, partial ARN or
// ARN, without a version or alias qualifier.
func functionName(s string) string {
	if i := strings.Index(s, "function:"); i >= 0 {
		s = s[i+len("function:"):]
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	return s
}

// lambdaTarget finds the function and event of a Lambda task.
func lambdaTarget(req *Request) (fn string, event any, direct, ok bool) {
	res := req.Resource
	if strings.Contains(res, ":lambda:") && strings.Contains(res, ":function:") {
		return res, req.Input, true, true
	}
	if strings.HasPrefix(res, "arn:") && strings.Contains(res, ":states:::lambda:invoke") {
		in, _ := req.Input.(*value.Object)
		f, _ := in.Get("FunctionName")
		fs, _ := f.(string)
		payload, _ := in.Get("Payload")
		if payload == nil {
			// No payload (or null): the function receives an empty event.
			payload = value.NewObject(0)
		}
		if s, isStr := payload.(string); isStr {
			// A string payload is sent as it is: Lambda parses it as JSON.
			if v, err := value.ParseString(s); err == nil {
				payload = v
			}
		}
		return fs, payload, false, true
	}
	return "", nil, false, false
}

// invokeResponse wraps a function's result as the lambda:invoke
// integration returns it.
func invokeResponse(payload any) *value.Object {
	body := value.String(payload)
	reqID := newRequestID()
	length := strconv.Itoa(len(body))
	all := value.NewObject(8)
	all.Set("X-Amz-Executed-Version", []any{"$LATEST"})
	all.Set("x-amzn-Remapped-Content-Length", []any{"0"})
	all.Set("Connection", []any{"keep-alive"})
	all.Set("x-amzn-RequestId", []any{reqID})
	all.Set("Content-Length", []any{length})
	all.Set("Date", []any{time.Now().UTC().Format(time.RFC1123)})
	all.Set("X-Amzn-Trace-Id", []any{"Root=1-" + reqID[:8] + "-" + strings.ReplaceAll(reqID[9:], "-", "")[:24]})
	all.Set("Content-Type", []any{"application/json"})
	hdr := value.NewObject(8)
	hdr.Set("Connection", "keep-alive")
	hdr.Set("Content-Length", length)
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Date", time.Now().UTC().Format(time.RFC1123))
	hdr.Set("X-Amz-Executed-Version", "$LATEST")
	hdr.Set("x-amzn-Remapped-Content-Length", "0")
	hdr.Set("x-amzn-RequestId", reqID)
	hdr.Set("X-Amzn-Trace-Id", "Root=1-"+reqID[:8])
	meta := value.NewObject(3)
	meta.Set("AllHttpHeaders", all)
	meta.Set("HttpHeaders", hdr)
	meta.Set("HttpStatusCode", value.Int(200))
	out := value.NewObject(5)
	out.Set("ExecutedVersion", "$LATEST")
	out.Set("Payload", payload)
	out.Set("SdkHttpMetadata", meta)
	out.Set("SdkResponseMetadata", value.ObjectOf("RequestId", reqID))
	out.Set("StatusCode", value.Int(200))
	return out
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// pythonJSON re-encodes a JSON object text with the separators Python's
// json.dumps uses (", " and ": "), as Lambda's Python runtime reports
// errors; other text is returned unchanged.
func pythonJSON(s string) string {
	v, err := value.ParseString(s)
	if err != nil {
		return s
	}
	if _, ok := v.(*value.Object); !ok {
		return s
	}
	var b []byte
	b = appendPython(b, v)
	return string(b)
}

func appendPython(b []byte, v any) []byte {
	switch x := v.(type) {
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPython(b, e)
		}
		return append(b, ']')
	case *value.Object:
		b = append(b, '{')
		for i := 0; i < x.Len(); i++ {
			k, e := x.At(i)
			if i > 0 {
				b = append(b, ", "...)
			}
			b = value.AppendString(b, k)
			b = append(b, ": "...)
			b = appendPython(b, e)
		}
		return append(b, '}')
	}
	return value.Append(b, v)
}
