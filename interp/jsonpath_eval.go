package interp

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/jsonpath"
	"github.com/stepd/stepd/value"
)

// jsonPathEval evaluates a JSONPath-mode state: paths, payload templates
// and intrinsic functions, compiled once.
type jsonPathEval struct {
	st *state

	inputPath, outputPath *ref // nil: identity
	inputNull, outputNull bool
	resultPath            *jsonpath.Path // nil: $ (replace)
	resultNull            bool           // ResultPath null: discard the result

	params, resultSelector, itemSelector, assign *payload
	result                                       any // Pass Result
	hasResult                                    bool

	rules []*choice // Choice rules

	secondsPath, timestampPath           *ref
	timeoutPath, heartbeatPath           *ref
	errorPath, causePath                 *ref
	itemsPath                            *ref
	maxConcurrencyPath                   *ref
	toleratedCountPath, toleratedPctPath *ref
	batchItemsPath, batchBytesPath       *ref     // ItemBatcher's paths
	batchInput                           *payload // ItemBatcher's BatchInput
	readerArgs                           *payload // ItemReader's Parameters
	credentialsArgs                      *payload // a Task's Credentials
	readerMaxPath                        *ref     // ItemReader's MaxItemsPath
	writerArgs                           *payload // ResultWriter's Parameters

	catchers []jsonPathCatcher
}

type jsonPathCatcher struct {
	resultPath *jsonpath.Path
	resultNull bool
	assign     *payload
}

func compileJSONPath(s *state) (*jsonPathEval, error) {
	fail := func(field string, err error) error {
		return &CompileError{Pointer: s.Pointer + "/" + field, Err: err}
	}
	e := &jsonPathEval{st: s}
	var err error
	for i, c := range s.Catch {
		var cc jsonPathCatcher
		if cc.resultPath, cc.resultNull, err = compileResultPath(c.ResultPath); err != nil {
			return nil, fail(fmt.Sprintf("Catch/%d/ResultPath", i), err)
		}
		if c.Assign.Set {
			if cc.assign, err = compilePayload(c.Assign.Value); err != nil {
				return nil, fail(fmt.Sprintf("Catch/%d/Assign", i), err)
			}
		}
		e.catchers = append(e.catchers, cc)
	}
	if e.inputPath, e.inputNull, err = compileOptRef(s.InputPath); err != nil {
		return nil, fail("InputPath", err)
	}
	if e.outputPath, e.outputNull, err = compileOptRef(s.OutputPath); err != nil {
		return nil, fail("OutputPath", err)
	}
	if e.resultPath, e.resultNull, err = compileResultPath(s.ResultPath); err != nil {
		return nil, fail("ResultPath", err)
	}
	templates := []struct {
		name string
		f    asl.Field
		dst  **payload
	}{
		{"Parameters", s.Parameters, &e.params},
		{"ResultSelector", s.ResultSelector, &e.resultSelector},
		{"ItemSelector", s.ItemSelector, &e.itemSelector},
		{"Assign", s.Assign, &e.assign},
		{"Credentials", s.Credentials, &e.credentialsArgs},
	}
	for _, t := range templates {
		if !t.f.Set {
			continue
		}
		if *t.dst, err = compilePayload(t.f.Value); err != nil {
			return nil, fail(t.name, err)
		}
	}
	if s.Type == "Succeed" || s.Type == "Fail" {
		e.assign = nil // never evaluated in these states
	}
	if s.Result.Set {
		e.result, e.hasResult = s.Result.Value, true
	}
	paths := []struct {
		name string
		text string
		dst  **ref
	}{
		{"SecondsPath", s.SecondsPath, &e.secondsPath},
		{"TimestampPath", s.TimestampPath, &e.timestampPath},
		{"TimeoutSecondsPath", s.TimeoutSecondsPath, &e.timeoutPath},
		{"HeartbeatSecondsPath", s.HeartbeatSecondsPath, &e.heartbeatPath},
		{"ErrorPath", s.ErrorPath, &e.errorPath},
		{"CausePath", s.CausePath, &e.causePath},
		{"MaxConcurrencyPath", s.MaxConcurrencyPath, &e.maxConcurrencyPath},
		{"ToleratedFailureCountPath", s.ToleratedFailureCountPath, &e.toleratedCountPath},
		{"ToleratedFailurePercentagePath", s.ToleratedFailurePercentagePath, &e.toleratedPctPath},
	}
	if b := s.Batcher; b != nil {
		paths = append(paths, struct {
			name string
			text string
			dst  **ref
		}{"ItemBatcher/MaxItemsPerBatchPath", b.MaxItemsPerBatchPath, &e.batchItemsPath}, struct {
			name string
			text string
			dst  **ref
		}{"ItemBatcher/MaxInputBytesPerBatchPath", b.MaxInputBytesPerBatchPath, &e.batchBytesPath})
		if b.BatchInput.Set {
			if e.batchInput, err = compilePayload(b.BatchInput.Value); err != nil {
				return nil, fail("ItemBatcher/BatchInput", err)
			}
		}
	}
	if w := s.Writer; w != nil && w.Parameters.Set {
		if e.writerArgs, err = compilePayload(w.Parameters.Value); err != nil {
			return nil, fail("ResultWriter/Parameters", err)
		}
	}
	if r := s.Reader; r != nil {
		if r.Parameters.Set {
			if e.readerArgs, err = compilePayload(r.Parameters.Value); err != nil {
				return nil, fail("ItemReader/Parameters", err)
			}
		}
		paths = append(paths, struct {
			name string
			text string
			dst  **ref
		}{"ItemReader/ReaderConfig/MaxItemsPath", r.MaxItemsPath, &e.readerMaxPath})
	}
	for _, p := range paths {
		if p.text == "" {
			continue
		}
		if *p.dst, err = compileRefOrCall(p.text); err != nil {
			return nil, fail(p.name, err)
		}
	}
	if s.ItemsPath.Set && !s.ItemsPath.Null {
		if e.itemsPath, err = compileRef(s.ItemsPath.Path); err != nil {
			return nil, fail("ItemsPath", err)
		}
	}
	for i, r := range s.Choices {
		c, err := compileChoice(r)
		if err != nil {
			return nil, fail(fmt.Sprintf("Choices/%d", i), err)
		}
		if r.Assign.Set {
			if c.assign, err = compilePayload(r.Assign.Value); err != nil {
				return nil, fail(fmt.Sprintf("Choices/%d/Assign", i), err)
			}
		}
		e.rules = append(e.rules, c)
	}
	return e, nil
}

// compileRefOrCall compiles a field that holds a path or an intrinsic
// function call (ErrorPath, CausePath and the other *Path fields).
func compileRefOrCall(text string) (*ref, error) {
	if intrinsic.IsCall(text) {
		c, err := intrinsic.Parse(text)
		if err != nil {
			return nil, err
		}
		return &ref{text: text, call: c}, nil
	}
	return compileRef(text)
}

func compileOptRef(f asl.PathField) (*ref, bool, error) {
	if !f.Set {
		return nil, false, nil
	}
	if f.Null {
		return nil, true, nil
	}
	if f.Path == "$" {
		return nil, false, nil
	}
	r, err := compileRef(f.Path)
	return r, false, err
}

func compileResultPath(f asl.PathField) (*jsonpath.Path, bool, error) {
	if !f.Set {
		return nil, false, nil
	}
	if f.Null {
		return nil, true, nil
	}
	if f.Path == "$" {
		return nil, false, nil
	}
	p, err := jsonpath.CompileReference(f.Path)
	return p, false, err
}

// env returns the JSONPath evaluation environment over input for the
// thread's current state.
func (th *thread) env(input any) *env {
	return &env{input: input, vars: th.vars, rand: th.x.rand, th: th, budget: th.x.info.Budget}
}

func (e *jsonPathEval) input(th *thread) (any, *Failure) {
	return th.applyPath(e.inputPath, e.inputNull, th.run.input)
}

// applyPath applies InputPath or OutputPath to v: null gives {}, no path
// gives v itself.
func (th *thread) applyPath(path *ref, null bool, v any) (any, *Failure) {
	if null {
		return value.NewObject(0), nil
	}
	if path == nil {
		return v, nil
	}
	out, err := path.get(th.env(v))
	if err != nil {
		return nil, th.site().pathFailure(err)
	}
	return out, nil
}

func (e *jsonPathEval) inspectInput(th *thread, in any) { th.inspect("afterInputPath", in) }

func (e *jsonPathEval) parameters(th *thread, in any) (any, *Failure) {
	if e.params == nil {
		return in, nil
	}
	return th.evalPayload(e.params, in)
}

func (e *jsonPathEval) inspectParameters(th *thread, params any) {
	th.inspect("afterParameters", params)
}

// passResult: AWS's inspection data for a Pass state is, with Result, the
// result; otherwise the input and parameters stages.
func (e *jsonPathEval) passResult(th *thread, in any) (any, *Failure) {
	if e.hasResult {
		// A Pass state's Result takes precedence over Parameters.
		th.inspect("result", e.result)
		return e.result, nil
	}
	th.inspect("afterInputPath", in)
	result, f := e.parameters(th, in)
	if f != nil {
		return nil, f
	}
	th.inspect("afterParameters", result)
	return result, nil
}

func (e *jsonPathEval) selectResult(th *thread, result any) (any, *Failure) {
	if e.resultSelector == nil {
		return result, nil
	}
	return th.evalPayload(e.resultSelector, result)
}

// output: Assign (over the result), ResultPath, OutputPath.
func (e *jsonPathEval) output(th *thread, result any, _ bool) (any, *Failure) {
	if f := th.assign(e.assign, result); f != nil {
		return nil, f
	}
	th.inspect("afterResultSelector", result)
	out, f := e.applyResultPath(th.run.input, result)
	if f != nil {
		return nil, f
	}
	th.inspect("afterResultPath", out)
	return e.applyOutputPath(th, out)
}

func (e *jsonPathEval) passOn(th *thread, in any) (any, *Failure) {
	if f := th.assign(e.assign, in); f != nil {
		return nil, f
	}
	return e.applyOutputPath(th, in)
}

func (e *jsonPathEval) applyOutputPath(th *thread, v any) (any, *Failure) {
	return th.applyPath(e.outputPath, e.outputNull, v)
}

// applyResultPath combines the raw state input and the result.
func (e *jsonPathEval) applyResultPath(input, result any) (any, *Failure) {
	if e.resultNull {
		return input, nil
	}
	if e.resultPath == nil {
		return result, nil
	}
	out, err := e.resultPath.Set(input, result)
	if err != nil {
		return nil, &Failure{Error: ErrResultPathMatchFailure, Cause: resultPathCause(e.st.ResultPath.Path, input)}
	}
	return out, nil
}

func resultPathCause(path string, input any) string {
	return fmt.Sprintf("Unable to apply ReferencePath %s to input %s", path, value.String(input))
}

func (e *jsonPathEval) choose(th *thread, in any) (*state, any, *Failure) {
	st := th.cur
	env := th.env(in)
	var next *state
	var matched *choice
	for i, c := range e.rules {
		ok, err := c.eval(env)
		if err != nil {
			return nil, nil, th.site().pathFailure(err)
		}
		if ok {
			next, matched = st.choiceNext[i], c
			th.x.branch(st.Name, BranchChoice, i)
			break
		}
	}
	if next == nil {
		next = st.deflt
		if next != nil {
			th.x.branch(st.Name, BranchDefault, 0)
		}
	}
	if next == nil {
		return nil, nil, &Failure{Error: ErrNoChoiceMatched, Cause: "No Matches! "}
	}
	if matched != nil && matched.assign != nil {
		if f := th.assign(matched.assign, in); f != nil {
			return nil, nil, f
		}
	}
	out, f := e.passOn(th, in)
	return next, out, f
}

func (e *jsonPathEval) waitUntil(th *thread, in any) (time.Time, *Failure) {
	st := th.cur
	fail := func(format string, args ...any) (time.Time, *Failure) {
		return time.Time{}, runtimeFailure(st.Name, th.run.enteredID, format, args...)
	}
	switch {
	case st.Seconds.Set:
		n, _ := st.Seconds.Value.(value.Number)
		return th.x.now.Add(time.Duration(n.Float64() * float64(time.Second))), nil
	case st.Timestamp.Set:
		s, _ := st.Timestamp.Value.(string)
		t, ok := parseTimestamp(s)
		if !ok {
			return fail("Invalid timestamp %s", s)
		}
		return t, nil
	case e.secondsPath != nil:
		v, err := e.secondsPath.get(th.env(in))
		if err != nil {
			return fail("The SecondsPath parameter does not reference an input value: %s", st.SecondsPath)
		}
		n, ok := v.(value.Number)
		secs, isInt := n.Int64()
		switch {
		case !ok || !isInt:
			return fail("The SecondsPath parameter cannot be parsed as a long value: %s == %s", st.SecondsPath, value.String(v))
		case secs < 0:
			return fail("The SecondsPath parameter references a negative value: %s == %s", st.SecondsPath, value.String(v))
		}
		return th.x.now.Add(time.Duration(secs) * time.Second), nil
	case e.timestampPath != nil:
		v, err := e.timestampPath.get(th.env(in))
		if err != nil {
			return fail("The TimestampPath parameter does not reference an input value: %s", st.TimestampPath)
		}
		s, isStr := v.(string)
		if !isStr {
			s = value.String(v)
		}
		t, ok := parseTimestamp(s)
		if !ok {
			return fail("The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: %s == %s", st.TimestampPath, s)
		}
		return t, nil
	}
	return time.Time{}, nil
}

func (e *jsonPathEval) failure(th *thread) *Failure {
	st := th.cur
	th.inspect("afterInputPath", th.run.input)
	f := &Failure{}
	if s, ok := st.Error.Value.(string); ok {
		f.Error = s
	}
	if s, ok := st.Cause.Value.(string); ok {
		f.Cause = s
	}
	env := th.env(th.run.input)
	if e.errorPath != nil {
		v, err := th.evalRefOrCall(e.errorPath, "ErrorPath", env)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return runtimeFailure(st.Name, th.run.enteredID, "The ErrorPath '%s' must point to a string, got %s", st.ErrorPath, value.String(v))
		}
		f.Error = s
	}
	if e.causePath != nil {
		v, err := th.evalRefOrCall(e.causePath, "CausePath", env)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return runtimeFailure(st.Name, th.run.enteredID, "The CausePath '%s' must point to a string, got %s", st.CausePath, value.String(v))
		}
		f.Cause = s
	}
	return f
}

func (th *thread) evalRefOrCall(r *ref, field string, e *env) (any, *Failure) {
	v, err := r.get(e)
	if err != nil {
		if f := th.site().budgetFailure(err); f != nil {
			return nil, f
		}
		if r.call != nil {
			return nil, &Failure{Error: ErrIntrinsicFailure, Cause: statePrefix(th.cur.Name, th.run.enteredID) + intrinsicCause(err)}
		}
		return nil, runtimeFailure(th.cur.Name, th.run.enteredID, "The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", r.text, field, value.String(e.input))
	}
	return v, nil
}

func (e *jsonPathEval) taskTimeouts(th *thread, in any) (int64, int64, *Failure) {
	st := th.cur
	var timeout, heartbeat int64
	if n, ok := st.TimeoutSeconds.Value.(value.Number); ok {
		timeout, _ = n.Int64()
	}
	if n, ok := st.HeartbeatSeconds.Value.(value.Number); ok {
		heartbeat, _ = n.Int64()
	}
	if e.timeoutPath != nil {
		v, err := e.timeoutPath.get(th.env(in))
		if err != nil {
			return 0, 0, th.site().pathFailure(err)
		}
		n, ok := v.(value.Number)
		if i, isInt := n.Int64(); ok && isInt && i > 0 {
			timeout = i
		} else {
			return 0, 0, runtimeFailure(st.Name, th.run.enteredID, "The TimeoutSecondsPath parameter does not reference a valid integer value: %s", value.String(v))
		}
	}
	if e.heartbeatPath != nil {
		v, err := e.heartbeatPath.get(th.env(in))
		if err != nil {
			return 0, 0, th.site().pathFailure(err)
		}
		n, ok := v.(value.Number)
		if i, isInt := n.Int64(); ok && isInt && i > 0 {
			heartbeat = i
		} else {
			return 0, 0, runtimeFailure(st.Name, th.run.enteredID, "The HeartbeatSecondsPath parameter does not reference a valid integer value: %s", value.String(v))
		}
	}
	return timeout, heartbeat, nil
}

func (e *jsonPathEval) mapItems(th *thread, in any) ([]any, *Failure) {
	st := th.cur
	items := in
	if v, read := th.readerItems(); read {
		items = v
	} else if e.itemsPath != nil {
		v, err := e.itemsPath.get(th.env(in))
		if err != nil {
			return nil, th.site().pathFailure(err)
		}
		items = v
	}
	arr, ok := items.([]any)
	if ok && e.itemsPath != nil {
		th.inspect("afterItemsPath", arr)
	}
	if !ok {
		// AWS names the path as applied to its document: "$$.Execution.Input"
		// reads "$.Execution.Input" of the Context object. TestState, which
		// has no event ids, reports the message alone.
		path := "$"
		if e.itemsPath != nil {
			path = strings.TrimPrefix(e.itemsPath.text, "$")
			if !strings.HasPrefix(path, "$") {
				path = e.itemsPath.text
			}
		}
		f := runtimeFailure(st.Name, th.run.enteredID, "Reference path \"%s\" must point to array.", path)
		if th.x.test != nil {
			f.Cause = fmt.Sprintf("Reference path \"%s\" must point to array.", path)
		}
		return nil, f
	}
	return arr, nil
}

// mapLimits evaluates MaxConcurrency(Path), before the Map state starts.
func (e *jsonPathEval) mapLimits(th *thread, c *container, in any) *Failure {
	st := th.cur
	if n, ok := st.MaxConcurrency.Value.(value.Number); ok {
		c.maxConc = int(n.Float64())
	}
	if e.maxConcurrencyPath != nil {
		f, fl := th.pathNumber(e.maxConcurrencyPath, "MaxConcurrencyPath", st.MaxConcurrencyPath, "integer", in)
		if fl != nil {
			return fl
		}
		c.maxConc = int(f)
	}
	th.inspect("maxConcurrency", value.Int(int64(c.maxConc)))
	return nil
}

// credentials evaluates a Task's Credentials ("RoleArn" or "RoleArn.$")
// over the effective input.
func (e *jsonPathEval) credentials(th *thread, in any) (string, *Failure) {
	if e.credentialsArgs == nil {
		return "", nil
	}
	v, err := e.credentialsArgs.eval(th.env(in))
	if err != nil {
		return "", th.site().payloadFailure(err, in)
	}
	return roleArnOf(th, v)
}

// writerParams evaluates the ResultWriter's Parameters over the effective
// input.
func (e *jsonPathEval) writerParams(th *thread, c *container) (any, *Failure) {
	if e.writerArgs == nil {
		return value.NewObject(0), nil
	}
	v, err := e.writerArgs.eval(th.env(c.input))
	if err != nil {
		return nil, th.site().payloadFailure(err, c.input)
	}
	return v, nil
}

// readerParams evaluates the ItemReader's Parameters and MaxItems(Path)
// over the effective input.
func (e *jsonPathEval) readerParams(th *thread, in any) (any, int, *Failure) {
	r := th.cur.Reader
	var params any = value.NewObject(0)
	if e.readerArgs != nil {
		v, err := e.readerArgs.eval(th.env(in))
		if err != nil {
			return nil, 0, th.site().payloadFailure(err, in)
		}
		params = v
	}
	maxItems := 0
	if n, ok := r.MaxItems.Value.(value.Number); ok {
		maxItems = int(n.Float64())
	}
	if e.readerMaxPath != nil {
		f, fl := th.pathNumber(e.readerMaxPath, "MaxItemsPath", r.MaxItemsPath, "integer", in)
		if fl != nil {
			return nil, 0, fl
		}
		if f != float64(int64(f)) {
			v, _ := e.readerMaxPath.get(th.env(in))
			return nil, 0, runtimeFailure(th.cur.Name, th.run.enteredID, "The MaxItemsPath field refers to value \"%s\" which is not a valid integer: %s", value.String(v), r.MaxItemsPath)
		}
		// A negative count fails the Map Run (States.ItemReaderFailed);
		// one beyond AWS's limit reads up to it.
		maxItems = int(max(min(f, maxReaderItems), -1))
	}
	return params, maxItems, nil
}

// mapBatcher evaluates the ItemBatcher's limits (literals or paths over
// the effective input) and its BatchInput (over the effective input).
func (e *jsonPathEval) mapBatcher(th *thread, c *container, in any) (batching, *Failure) {
	b := th.cur.Batcher
	var bt batching
	for _, l := range []struct {
		lit  asl.Field
		path *ref
		name string
		text string
		dst  *int
	}{
		{b.MaxItemsPerBatch, e.batchItemsPath, "MaxItemsPerBatchPath", b.MaxItemsPerBatchPath, &bt.maxItems},
		{b.MaxInputBytesPerBatch, e.batchBytesPath, "MaxInputBytesPerBatchPath", b.MaxInputBytesPerBatchPath, &bt.maxBytes},
	} {
		if n, ok := l.lit.Value.(value.Number); ok {
			*l.dst = int(n.Float64())
		}
		if l.path != nil {
			f, fl := th.pathNumber(l.path, l.name, l.text, "integer", in)
			if fl != nil {
				return bt, fl
			}
			if f < 1 || f != float64(int64(f)) {
				return bt, runtimeFailure(th.cur.Name, th.run.enteredID, "%s must point to a positive integer, not %v.", l.name, f)
			}
			*l.dst = int(f)
		}
	}
	if e.batchInput != nil {
		v, err := e.batchInput.eval(th.env(c.input))
		if err != nil {
			return bt, th.site().payloadFailure(err, c.input)
		}
		bt.input, bt.hasInput = v, true
	}
	return bt, nil
}

// mapTolerance evaluates the tolerated failure count and percentage, once
// the Map state has started.
func (e *jsonPathEval) mapTolerance(th *thread, c *container, in any) *Failure {
	st := th.cur
	c.tolCount = -1
	if n, ok := st.ToleratedFailureCount.Value.(value.Number); ok {
		c.tolCount, c.hasTol = int(n.Float64()), true
	}
	if n, ok := st.ToleratedFailurePercentage.Value.(value.Number); ok {
		c.tolPercent, c.hasTol = n.Float64(), true
	}
	if e.toleratedCountPath != nil {
		f, fl := th.pathNumber(e.toleratedCountPath, "ToleratedFailureCountPath", st.ToleratedFailureCountPath, "integer", in)
		if fl != nil {
			return fl
		}
		if f < 0 {
			return runtimeFailure(st.Name, th.run.enteredID, "ToleratedFailureCount cannot be negative.")
		}
		c.tolCount, c.hasTol = int(f), true
	}
	if e.toleratedPctPath != nil {
		f, fl := th.pathNumber(e.toleratedPctPath, "ToleratedFailurePercentagePath", st.ToleratedFailurePercentagePath, "float", in)
		if fl != nil {
			return fl
		}
		c.tolPercent, c.hasTol = f, true
	}
	if c.hasTol && (c.tolPercent < 0 || c.tolPercent > 100) {
		return runtimeFailure(st.Name, th.run.enteredID, "ToleratedFailurePercentage must be between 0 and 100.")
	}
	if c.tolCount >= 0 && c.hasTol {
		th.inspect("toleratedFailureCount", value.Int(int64(c.tolCount)))
	}
	if st.ToleratedFailurePercentage.Set || e.toleratedPctPath != nil {
		th.inspect("toleratedFailurePercentage", value.Float(c.tolPercent))
	}
	return nil
}

// pathNumber reads a number for a *Path field. AWS also accepts a string
// holding a number.
func (th *thread) pathNumber(r *ref, field, path, kind string, in any) (float64, *Failure) {
	v, err := r.get(th.env(in))
	if err != nil {
		return 0, th.site().pathFailure(err)
	}
	switch x := v.(type) {
	case value.Number:
		return x.Float64(), nil
	case string:
		if n, err := value.ParseString(x); err == nil {
			if num, ok := n.(value.Number); ok {
				return num.Float64(), nil
			}
		}
	}
	text, isStr := v.(string)
	if !isStr {
		text = value.String(v)
	}
	return 0, runtimeFailure(th.cur.Name, th.run.enteredID, "The %s field refers to value \"%s\" which is not a valid %s: %s", field, text, kind, path)
}

func (e *jsonPathEval) itemInput(th *thread, c *container, ch *thread) (any, *Failure) {
	sel := e.itemSelector
	if sel == nil {
		sel = e.params
	}
	if sel == nil {
		return c.items[ch.index], nil
	}
	env := th.env(c.input)
	env.item = ch
	v, err := sel.eval(env)
	if err != nil {
		return nil, th.site().payloadFailure(err, c.input)
	}
	return v, nil
}

// caught: the catcher's Assign (over the error output), then its
// ResultPath over the raw input.
func (e *jsonPathEval) caught(th *thread, i int, errOut any) (any, *Failure) {
	c := &e.catchers[i]
	if c.assign != nil {
		if f := th.assign(c.assign, errOut); f != nil {
			return nil, f
		}
	}
	if c.resultNull {
		return th.run.input, nil
	}
	if c.resultPath == nil {
		return errOut, nil
	}
	v, err := c.resultPath.Set(th.run.input, errOut)
	if err != nil {
		return nil, &Failure{Error: ErrResultPathMatchFailure, Cause: resultPathCause(e.st.Catch[i].ResultPath.Path, th.run.input)}
	}
	return v, nil
}

func (s site) pathFailure(err error) *Failure {
	return runtimeFailure(s.state, s.entered, "%s", err.Error())
}

// evalPayload evaluates a payload template and maps its errors to ASL
// failures.
func (th *thread) evalPayload(p *payload, input any) (any, *Failure) {
	v, err := p.eval(th.env(input))
	if err == nil {
		return v, nil
	}
	if f := th.site().budgetFailure(err); f != nil {
		return nil, f
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

// assign evaluates a JSONPath-mode Assign block over input and records the
// variables to assign when the state exits.
func (th *thread) assign(p *payload, input any) *Failure {
	if p == nil {
		return nil
	}
	v, err := p.eval(th.env(input))
	if err != nil {
		return th.site().payloadFailure(err, input)
	}
	o, _ := v.(*value.Object)
	th.addAssigned(o)
	return nil
}

func (s site) payloadFailure(err error, input any) *Failure {
	if f := s.budgetFailure(err); f != nil {
		return f
	}
	var pe *payloadError
	if errors.As(err, &pe) && pe.name == ErrIntrinsicFailure {
		return &Failure{Error: ErrIntrinsicFailure, Cause: statePrefix(s.state, s.entered) + intrinsicCause(pe.err)}
	}
	if errors.As(err, &pe) {
		return runtimeFailure(s.state, s.entered,
			"The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
			pe.expr, pe.field, value.String(input))
	}
	return runtimeFailure(s.state, s.entered, "%s", err.Error())
}
