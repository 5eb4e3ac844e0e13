package interp

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/jsonata"
	"github.com/stepd/stepd/value"
)

// jsonataEval evaluates a JSONata-mode state: its fields' templates by
// field name ("Arguments", "Output", "Assign", "Items", ...), compiled once.
type jsonataEval struct {
	fields map[string]*jsonata.Template
	// per Choice rule: Condition, Output, Assign
	rules []map[string]*jsonata.Template
	// per catcher: Output, Assign
	catchers []map[string]*jsonata.Template
	// reader: a Distributed Map's ItemReader Arguments and MaxItems
	reader map[string]*jsonata.Template
	// writer: a Distributed Map's ResultWriter Arguments
	writer map[string]*jsonata.Template
	// context is whether an expression of the state may read
	// $states.context; $states is built without it otherwise.
	context bool
}

func compileTemplates(ptr string, pairs ...any) (map[string]*jsonata.Template, error) {
	m := map[string]*jsonata.Template{}
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].(string)
		f := pairs[i+1].(asl.Field)
		if !f.Set {
			continue
		}
		t, err := jsonata.ParseTemplate(f.Value)
		if err != nil {
			return nil, &CompileError{Pointer: ptr + "/" + name, Err: err}
		}
		m[name] = t
	}
	return m, nil
}

func compileJSONata(s *state) (*jsonataEval, error) {
	e := &jsonataEval{}
	var err error
	e.fields, err = compileTemplates(s.Pointer,
		"Arguments", s.Arguments, "Output", s.Output, "Assign", s.Assign,
		"Items", s.Items, "ItemSelector", s.ItemSelector, "MaxConcurrency", s.MaxConcurrency,
		"ToleratedFailureCount", s.ToleratedFailureCount, "ToleratedFailurePercentage", s.ToleratedFailurePercentage,
		"TimeoutSeconds", s.TimeoutSeconds, "HeartbeatSeconds", s.HeartbeatSeconds,
		"Seconds", s.Seconds, "Timestamp", s.Timestamp, "Error", s.Error, "Cause", s.Cause,
		"Credentials", s.Credentials)
	if err != nil {
		return nil, err
	}
	if b := s.Batcher; b != nil {
		m, err := compileTemplates(b.Pointer, "MaxItemsPerBatch", b.MaxItemsPerBatch,
			"MaxInputBytesPerBatch", b.MaxInputBytesPerBatch, "BatchInput", b.BatchInput)
		if err != nil {
			return nil, err
		}
		maps.Copy(e.fields, m)
	}
	if r := s.Reader; r != nil {
		if e.reader, err = compileTemplates(r.Pointer, "Arguments", r.Parameters, "MaxItems", r.MaxItems); err != nil {
			return nil, err
		}
	}
	if w := s.Writer; w != nil {
		if e.writer, err = compileTemplates(w.Pointer, "Arguments", w.Parameters); err != nil {
			return nil, err
		}
	}
	for i, r := range s.Choices {
		m, err := compileTemplates(fmt.Sprintf("%s/Choices/%d", s.Pointer, i), "Condition", r.Condition, "Output", r.Output, "Assign", r.Assign)
		if err != nil {
			return nil, err
		}
		e.rules = append(e.rules, m)
	}
	for i, c := range s.Catch {
		m, err := compileTemplates(fmt.Sprintf("%s/Catch/%d", s.Pointer, i), "Output", c.Output, "Assign", c.Assign)
		if err != nil {
			return nil, err
		}
		e.catchers = append(e.catchers, m)
	}
	for _, m := range append(append([]map[string]*jsonata.Template{e.fields, e.reader, e.writer}, e.rules...), e.catchers...) {
		for _, t := range m {
			for _, src := range t.Expressions() {
				e.context = e.context || readsContext(src)
			}
		}
	}
	return e, nil
}

// readsContext reports whether a JSONata expression may read
// $states.context: unless every "$states" in it is followed by .input,
// .result or .errorOutput and then an operator, a bracket or a space, it
// may (by $states.context, or by reading $states whole). An expression
// with a % may climb back to $states with the parent operator.
func readsContext(src string) bool {
	const v = "$states"
	if strings.Contains(src, v) && strings.IndexByte(src, '%') >= 0 {
		return true
	}
	for i := strings.Index(src, v); i >= 0; i = strings.Index(src, v) {
		src = src[i+len(v):]
		if src != "" && !endsName(src[0]) {
			continue // a longer name, such as $statesX
		}
		ok := false
		for _, f := range [...]string{".input", ".result", ".errorOutput"} {
			if strings.HasPrefix(src, f) && (len(src) == len(f) || endsName(src[len(f)])) {
				ok = true
				break
			}
		}
		if !ok {
			return true
		}
	}
	return false
}

// endsName reports whether c cannot be part of a JSONata name: a space or
// an operator or bracket character.
func endsName(c byte) bool {
	return strings.IndexByte(" \t\r\n.[](){},;:<>=!+-*/%&|?~^", c) >= 0
}

// inputStates returns $states over the state's raw input (no result or
// errorOutput). Each method of jsonataEval builds the variables,
// th.jsonataVars(e.inputStates(th)), only when the state has a field to
// evaluate.
func (e *jsonataEval) inputStates(th *thread) *value.Object {
	if !e.context && th.jv != nil && th.jv.states != nil && th.jv.states.Len() == 1 {
		// The same as the thread's last (the state before passed its
		// input on): keep it, and with it its evaluator form.
		if in, _ := th.jv.states.Get("input"); value.Same(in, th.run.input) {
			return th.jv.states
		}
	}
	return e.statesVar(th, th.run.input, nil, nil, false, false)
}

// has reports whether the state has any of the fields.
func (e *jsonataEval) has(names ...string) bool {
	for _, n := range names {
		if e.fields[n] != nil {
			return true
		}
	}
	return false
}

// jsonataVars hands JSONata evaluations the workflow variables in scope
// and $states. It keeps, across the thread's evaluations, the evaluator's
// form of each variable (in its scope's slots), of $states' members and of
// the last object result, so that a variable or a state input is
// converted once, not at each evaluation, or not at all when an
// expression made it.
type jsonataVars struct {
	sc     *scope
	states *value.Object
	slot   jsonata.Slot // $states, by member
	// recent holds the form of the last object an expression returned:
	// a state's output, which the next state reads as $states.input.
	recent jsonata.Slot
}

// Recent returns the slot for the form of the last object result.
func (v *jsonataVars) Recent() *jsonata.Slot { return &v.recent }

// Var returns $states or the innermost variable of that name.
func (v *jsonataVars) Var(name string) (any, *jsonata.Slot, bool) {
	if name == "states" {
		return v.states, &v.slot, true
	}
	for s := v.sc; s != nil; s = s.parent {
		if x, ok := s.vars[name]; ok {
			return x, s.slot(name), true
		}
	}
	return nil, nil, false
}

// jsonataVars returns the variables of the thread's evaluations, with
// $states.
func (th *thread) jsonataVars(states *value.Object) *jsonataVars {
	if th.jv == nil {
		th.jv = &jsonataVars{slot: jsonata.Slot{ByMember: true}}
	}
	th.jv.sc, th.jv.states = th.vars, states
	return th.jv
}

// statesVar builds $states; its context only when an expression of the
// state may read it.
func (e *jsonataEval) statesVar(th *thread, input, result, errorOutput any, hasResult, hasError bool) *value.Object {
	s := value.NewObject(4)
	s.Set("input", input)
	if e.context {
		s.Set("context", th.contextObject())
	}
	if hasResult {
		s.Set("result", result)
	}
	if hasError {
		s.Set("errorOutput", errorOutput)
	}
	return s
}

// evalField evaluates a JSONata-mode field. ok is false when the field is
// absent.
func (th *thread) evalField(m map[string]*jsonata.Template, name string, vars jsonata.Vars) (any, bool, *Failure) {
	t := m[name]
	if t == nil {
		return nil, false, nil
	}
	v, err := t.EvalWith(th.x.evalContext(), vars, jsonata.Options{Rand: th.x.rand})
	if in := th.x.evalEnd(); in != nil {
		return nil, true, th.site().interrupted(name, in)
	}
	if err != nil {
		return nil, true, th.site().queryFailure(name, err)
	}
	return v, true, nil
}

// queryFailure maps a JSONata evaluation error to States.QueryEvaluationError
// with AWS's cause text.
func (s site) queryFailure(field string, err error) *Failure {
	var te *jsonata.TemplateError
	if errors.As(err, &te) {
		return s.evalFailure(te.FieldPath(field), te.Cause(field))
	}
	return s.evalFailure(field, err.Error())
}

// evalFailure builds a States.QueryEvaluationError for a field.
func (s site) evalFailure(location, msg string) *Failure {
	return &Failure{Error: ErrQueryEvaluationError, Cause: statePrefix(s.state, s.entered) + msg, evaluation: true, location: location}
}

// typeFailure reports a field whose expression returned the wrong type.
func (e *jsonataEval) typeFailure(th *thread, field, want string, v any) *Failure {
	t := e.fields[field]
	expr := ""
	if t != nil {
		expr = t.Source()
	}
	return th.site().evalFailure(field, jsonata.TypeCause(expr, field, want, v))
}

// assignedDetails renders assignedVariables for a StateExited event.
func assignedDetails(o *value.Object) *value.Object {
	keys := append([]string(nil), o.Keys()...)
	sort.Strings(keys)
	d := value.NewObject(len(keys))
	for _, k := range keys {
		v, _ := o.Get(k)
		d.Set(k, history.Text{V: v})
	}
	return d
}

// outputAndAssign evaluates Output (default: def) and Assign of a state,
// Choice rule or catcher, both against the same variables; the variables
// are assigned when the state exits.
func (th *thread) outputAndAssign(m map[string]*jsonata.Template, vars jsonata.Vars, def any) (any, *Failure) {
	v, ok, f := th.evalField(m, "Assign", vars)
	if f != nil {
		return nil, f
	}
	var assigned *value.Object
	if ok {
		assigned, _ = v.(*value.Object)
	}
	out, ok, f := th.evalField(m, "Output", vars)
	if f != nil {
		return nil, f
	}
	if !ok {
		out = def
	}
	th.addAssigned(assigned)
	return out, nil
}

func (e *jsonataEval) input(th *thread) (any, *Failure) { return th.run.input, nil }

func (e *jsonataEval) inspectInput(*thread, any) {}

func (e *jsonataEval) parameters(th *thread, in any) (any, *Failure) {
	if !e.has("Arguments") {
		return in, nil
	}
	args, ok, f := th.evalField(e.fields, "Arguments", th.jsonataVars(e.inputStates(th)))
	if f != nil {
		return nil, f
	}
	if !ok {
		return in, nil
	}
	return args, nil
}

func (e *jsonataEval) inspectParameters(th *thread, params any) {
	if e.fields["Arguments"] != nil {
		th.inspect("afterArguments", params)
	}
}

func (e *jsonataEval) passResult(_ *thread, in any) (any, *Failure) { return in, nil }

func (e *jsonataEval) selectResult(_ *thread, result any) (any, *Failure) { return result, nil }

func (e *jsonataEval) output(th *thread, result any, hasResult bool) (any, *Failure) {
	if !e.has("Output", "Assign") {
		return result, nil
	}
	if hasResult {
		return th.outputAndAssign(e.fields, th.jsonataVars(e.statesVar(th, th.run.input, result, nil, true, false)), result)
	}
	return th.outputAndAssign(e.fields, th.jsonataVars(e.inputStates(th)), result)
}

func (e *jsonataEval) passOn(th *thread, in any) (any, *Failure) {
	if !e.has("Output", "Assign") {
		return in, nil
	}
	return th.outputAndAssign(e.fields, th.jsonataVars(e.inputStates(th)), in)
}

func (e *jsonataEval) choose(th *thread, in any) (*state, any, *Failure) {
	st := th.cur
	vars := th.jsonataVars(e.inputStates(th))
	for i, m := range e.rules {
		v, _, f := th.evalField(m, "Condition", vars)
		if f != nil {
			return nil, nil, f
		}
		b, isBool := v.(bool)
		if !isBool {
			return nil, nil, th.site().evalFailure("Condition", jsonata.TypeCause(m["Condition"].Source(), "Condition", "boolean", v))
		}
		if b {
			th.x.branch(st.Name, BranchChoice, i)
			next := st.choiceNext[i]
			if m["Output"] == nil && m["Assign"] == nil {
				m = e.fields
			}
			out, f := th.outputAndAssign(m, vars, in)
			return next, out, f
		}
	}
	if st.deflt == nil {
		return nil, nil, &Failure{Error: ErrNoChoiceMatched, Cause: "No Matches!"}
	}
	th.x.branch(st.Name, BranchDefault, 0)
	out, f := th.outputAndAssign(e.fields, vars, in)
	return st.deflt, out, f
}

func (e *jsonataEval) waitUntil(th *thread, _ any) (time.Time, *Failure) {
	var due time.Time
	if !e.has("Seconds", "Timestamp") {
		return due, nil
	}
	vars := th.jsonataVars(e.inputStates(th))
	if v, ok, f := th.evalField(e.fields, "Seconds", vars); f != nil {
		return due, f
	} else if ok {
		n, isNum := v.(value.Number)
		secs, isInt := n.Int64()
		if !isNum || !isInt || secs < 0 {
			return due, e.typeFailure(th, "Seconds", "integer", v)
		}
		due = th.x.now.Add(time.Duration(secs) * time.Second)
	}
	if v, ok, f := th.evalField(e.fields, "Timestamp", vars); f != nil {
		return due, f
	} else if ok {
		s, isStr := v.(string)
		if !isStr {
			s = value.String(v)
		}
		t, valid := parseTimestamp(s)
		if !valid {
			return due, th.site().evalFailure("Timestamp", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: "+s)
		}
		due = t
	}
	return due, nil
}

func (e *jsonataEval) failure(th *thread) *Failure {
	f := &Failure{}
	if !e.has("Error", "Cause") {
		return f
	}
	vars := th.jsonataVars(e.inputStates(th))
	for _, name := range []string{"Error", "Cause"} {
		v, ok, fl := th.evalField(e.fields, name, vars)
		if fl != nil {
			return fl
		}
		if !ok {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return e.typeFailure(th, name, "string", v)
		}
		if name == "Error" {
			f.Error = s
		} else {
			f.Cause = s
		}
	}
	return f
}

// credentials evaluates a Task's Credentials (its RoleArn may be a
// JSONata expression) over $states.input.
func (e *jsonataEval) credentials(th *thread, _ any) (string, *Failure) {
	if !e.has("Credentials") {
		return "", nil
	}
	v, _, f := th.evalField(e.fields, "Credentials", th.jsonataVars(e.inputStates(th)))
	if f != nil {
		return "", f
	}
	return roleArnOf(th, v)
}

func (e *jsonataEval) taskTimeouts(th *thread, _ any) (int64, int64, *Failure) {
	var timeout, heartbeat int64
	if !e.has("TimeoutSeconds", "HeartbeatSeconds") {
		return 0, 0, nil
	}
	vars := th.jsonataVars(e.inputStates(th))
	for _, name := range []string{"TimeoutSeconds", "HeartbeatSeconds"} {
		v, ok, f := th.evalField(e.fields, name, vars)
		if f != nil {
			return 0, 0, f
		}
		if !ok {
			continue
		}
		n, isNum := v.(value.Number)
		i, isInt := n.Int64()
		if !isNum || !isInt || i <= 0 {
			return 0, 0, e.typeFailure(th, name, "integer", v)
		}
		if name == "TimeoutSeconds" {
			timeout = i
		} else {
			heartbeat = i
		}
	}
	return timeout, heartbeat, nil
}

func (e *jsonataEval) mapItems(th *thread, in any) ([]any, *Failure) {
	var items any
	var ok bool
	if e.has("Items") {
		var f *Failure
		if items, ok, f = th.evalField(e.fields, "Items", th.jsonataVars(e.inputStates(th))); f != nil {
			// As for an Items of the wrong type (a function, say): the Map
			// state fails after its EvaluationFailed event.
			th.run.failEvent = "MapStateFailed"
			return nil, f
		}
	}
	if !ok {
		items = in
		if v, read := th.readerItems(); read {
			items, ok = v, true
		}
	}
	arr, isArr := items.([]any)
	if !isArr {
		th.run.failEvent = "MapStateFailed"
		if ok {
			return nil, e.typeFailure(th, "Items", "array", items)
		}
		return nil, th.site().evalFailure("", "Map state input must be an array but was: "+value.String(items))
	}
	return arr, nil
}

// mapLimits evaluates MaxConcurrency and the tolerated failures, before
// the Map state starts.
func (e *jsonataEval) mapLimits(th *thread, c *container, _ any) *Failure {
	var vars jsonata.Vars
	if e.has("MaxConcurrency", "ToleratedFailureCount", "ToleratedFailurePercentage") {
		vars = th.jsonataVars(e.inputStates(th))
	}
	if v, ok, f := th.evalField(e.fields, "MaxConcurrency", vars); f != nil {
		return f
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			return e.typeFailure(th, "MaxConcurrency", "integer", v)
		}
		c.maxConc = int(n.Float64())
	}
	if v, ok, f := th.evalField(e.fields, "ToleratedFailureCount", vars); f != nil {
		return f
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			return e.typeFailure(th, "ToleratedFailureCount", "integer", v)
		}
		c.tolCount, c.hasTol = int(n.Float64()), true
	} else {
		c.tolCount = -1
	}
	if v, ok, f := th.evalField(e.fields, "ToleratedFailurePercentage", vars); f != nil {
		return f
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			return e.typeFailure(th, "ToleratedFailurePercentage", "number", v)
		}
		c.tolPercent, c.hasTol = n.Float64(), true
	}
	th.inspect("maxConcurrency", value.Int(int64(c.maxConc)))
	if c.tolCount >= 0 && c.hasTol {
		th.inspect("toleratedFailureCount", value.Int(int64(c.tolCount)))
	}
	if th.cur.ToleratedFailurePercentage.Set {
		th.inspect("toleratedFailurePercentage", value.Float(c.tolPercent))
	}
	return nil
}

func (e *jsonataEval) mapTolerance(*thread, *container, any) *Failure { return nil }

// writerParams evaluates the ResultWriter's Arguments over $states.input.
func (e *jsonataEval) writerParams(th *thread, _ *container) (any, *Failure) {
	v, ok, f := th.evalField(e.writer, "Arguments", th.jsonataVars(e.inputStates(th)))
	if f != nil || ok {
		return v, f
	}
	return value.NewObject(0), nil
}

// readerParams evaluates the ItemReader's Arguments and MaxItems over
// $states.input.
func (e *jsonataEval) readerParams(th *thread, _ any) (any, int, *Failure) {
	vars := th.jsonataVars(e.inputStates(th))
	var params any = value.NewObject(0)
	if v, ok, f := th.evalField(e.reader, "Arguments", vars); f != nil {
		return nil, 0, f
	} else if ok {
		params = v
	}
	maxItems := 0
	if v, ok, f := th.evalField(e.reader, "MaxItems", vars); f != nil {
		return nil, 0, f
	} else if ok {
		n, isNum := v.(value.Number)
		i, exact := n.Int64()
		if !isNum || !exact {
			return nil, 0, th.site().evalFailure("MaxItems", jsonata.TypeCause(e.reader["MaxItems"].Source(), "MaxItems", "integer", v))
		}
		maxItems = int(max(min(i, maxReaderItems), -1))
	}
	return params, maxItems, nil
}

// mapBatcher evaluates the ItemBatcher's limits and BatchInput, each a
// literal or an expression over $states.input.
func (e *jsonataEval) mapBatcher(th *thread, c *container, _ any) (batching, *Failure) {
	var bt batching
	vars := th.jsonataVars(e.inputStates(th))
	for _, l := range []struct {
		name string
		dst  *int
	}{{"MaxItemsPerBatch", &bt.maxItems}, {"MaxInputBytesPerBatch", &bt.maxBytes}} {
		v, ok, f := th.evalField(e.fields, l.name, vars)
		if f != nil {
			return bt, f
		}
		if !ok {
			continue
		}
		n, isNum := v.(value.Number)
		i, exact := n.Int64()
		if !isNum || !exact || i < 1 {
			return bt, e.typeFailure(th, l.name, "positive integer", v)
		}
		*l.dst = int(i)
	}
	v, ok, f := th.evalField(e.fields, "BatchInput", vars)
	if f != nil {
		return bt, f
	}
	bt.input, bt.hasInput = v, ok
	return bt, nil
}

func (e *jsonataEval) itemInput(th *thread, c *container, ch *thread) (any, *Failure) {
	t := e.fields["ItemSelector"]
	if t == nil {
		return c.items[ch.index], nil
	}
	states := e.statesVar(th, c.input, nil, nil, false, false)
	if e.context {
		states.Set("context", ch.contextObjectFor(th))
	}
	v, err := t.EvalWith(th.x.evalContext(), th.jsonataVars(states), jsonata.Options{Rand: th.x.rand})
	if in := th.x.evalEnd(); in != nil {
		return nil, th.site().interrupted("ItemSelector", in)
	}
	if err != nil {
		return nil, th.site().queryFailure("ItemSelector", err)
	}
	return v, nil
}

func (e *jsonataEval) caught(th *thread, i int, errOut any) (any, *Failure) {
	vars := th.jsonataVars(e.statesVar(th, th.run.input, nil, errOut, false, true))
	return th.outputAndAssign(e.catchers[i], vars, errOut)
}
