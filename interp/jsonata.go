package interp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/jsonata"
	"github.com/stepd/stepd/value"
)

// jsonataFields holds a JSONata-mode state's compiled templates, by field
// name ("Arguments", "Output", "Assign", "Items", ...).
type jsonataFields struct {
	fields map[string]*jsonata.Template
	// per Choice rule: Condition, Output, Assign
	rules []map[string]*jsonata.Template
	// per catcher: Output, Assign
	catchers []map[string]*jsonata.Template
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

func compileJSONata(s *state) (*jsonataFields, error) {
	jx := &jsonataFields{}
	var err error
	jx.fields, err = compileTemplates(s.Pointer,
		"Arguments", s.Arguments, "Output", s.Output, "Assign", s.Assign,
		"Items", s.Items, "ItemSelector", s.ItemSelector, "MaxConcurrency", s.MaxConcurrency,
		"ToleratedFailureCount", s.ToleratedFailureCount, "ToleratedFailurePercentage", s.ToleratedFailurePercentage,
		"TimeoutSeconds", s.TimeoutSeconds, "HeartbeatSeconds", s.HeartbeatSeconds,
		"Seconds", s.Seconds, "Timestamp", s.Timestamp, "Error", s.Error, "Cause", s.Cause)
	if err != nil {
		return nil, err
	}
	for i, r := range s.Choices {
		m, err := compileTemplates(fmt.Sprintf("%s/Choices/%d", s.Pointer, i), "Condition", r.Condition, "Output", r.Output, "Assign", r.Assign)
		if err != nil {
			return nil, err
		}
		jx.rules = append(jx.rules, m)
	}
	for i, c := range s.Catch {
		m, err := compileTemplates(fmt.Sprintf("%s/Catch/%d", s.Pointer, i), "Output", c.Output, "Assign", c.Assign)
		if err != nil {
			return nil, err
		}
		jx.catchers = append(jx.catchers, m)
	}
	return jx, nil
}

// jvars builds the JSONata variables: the workflow variables in scope and
// $states.
func (th *thread) jvars(states *value.Object) map[string]any {
	vars := map[string]any{}
	var chain []*scope
	for s := th.vars; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].vars {
			vars[k] = v
		}
	}
	vars["states"] = states
	return vars
}

func (th *thread) statesVar(input, result, errorOutput any, hasResult, hasError bool) *value.Object {
	s := value.NewObject(4)
	s.Set("input", input)
	s.Set("context", th.contextObject())
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
func (th *thread) evalField(m map[string]*jsonata.Template, name string, vars map[string]any) (any, bool, *Failure) {
	t := m[name]
	if t == nil {
		return nil, false, nil
	}
	v, err := t.EvalWith(context.Background(), vars, jsonata.Options{Rand: th.x.rand})
	if err != nil {
		return nil, true, th.queryFailure(name, err)
	}
	return v, true, nil
}

// queryFailure maps a JSONata evaluation error to States.QueryEvaluationError
// with AWS's cause text.
func (th *thread) queryFailure(field string, err error) *Failure {
	var te *jsonata.TemplateError
	if errors.As(err, &te) {
		return th.evalFailure(te.FieldPath(field), te.Cause(field))
	}
	return th.evalFailure(field, err.Error())
}

// evalFailure builds a States.QueryEvaluationError for a field.
func (th *thread) evalFailure(location, msg string) *Failure {
	return &Failure{Error: ErrQueryEvaluationError, Cause: statePrefix(th.cur.Name, th.run.enteredID) + msg, evaluation: true, location: location}
}

// typeFailure reports a field whose expression returned the wrong type.
func (th *thread) typeFailure(field, want string, v any) *Failure {
	t := th.cur.jx.fields[field]
	expr := ""
	if t != nil {
		expr = t.Source()
	}
	return th.evalFailure(field, jsonata.TypeCause(expr, field, want, v))
}

// assignJSONata evaluates Assign and returns the new variables; they take
// effect only once the state's other fields have been evaluated.
func (th *thread) assignJSONata(m map[string]*jsonata.Template, vars map[string]any) (*value.Object, *Failure) {
	v, ok, f := th.evalField(m, "Assign", vars)
	if f != nil || !ok {
		return nil, f
	}
	o, _ := v.(*value.Object)
	return o, nil
}

// exitAssigned leaves the state, recording assigned variables on the
// Exited event as AWS does.
func (th *thread) exitAssigned(output any, next *state, assigned *value.Object) {
	th.addAssigned(assigned)
	th.exit(output, next)
}

// assignedDetails renders assignedVariables for a StateExited event.
func assignedDetails(o *value.Object) *value.Object {
	keys := append([]string(nil), o.Keys()...)
	sort.Strings(keys)
	d := value.NewObject(len(keys))
	for _, k := range keys {
		v, _ := o.Get(k)
		d.Set(k, value.String(v))
	}
	return d
}

func (th *thread) runJSONata() {
	st := th.cur
	jx := st.jx.fields
	in := th.run.input
	vars := th.jvars(th.statesVar(in, nil, nil, false, false))
	switch st.Type {
	case "Pass", "Succeed":
		th.finishJSONata(vars, in, st.next)
	case "Fail":
		f := &Failure{}
		for _, name := range []string{"Error", "Cause"} {
			v, ok, fl := th.evalField(jx, name, vars)
			if fl != nil {
				th.propagate(fl)
				return
			}
			if !ok {
				continue
			}
			s, isStr := v.(string)
			if !isStr {
				th.propagate(th.typeFailure(name, "string", v))
				return
			}
			if name == "Error" {
				f.Error = s
			} else {
				f.Cause = s
			}
		}
		th.propagate(f)
	case "Choice":
		for i, c := range st.choices {
			m := st.jx.rules[i]
			v, _, fl := th.evalField(m, "Condition", vars)
			if fl != nil {
				th.fail(fl)
				return
			}
			b, isBool := v.(bool)
			if !isBool {
				th.fail(th.evalFailure("Condition", jsonata.TypeCause(m["Condition"].Source(), "Condition", "boolean", v)))
				return
			}
			if b {
				if m["Output"] != nil || m["Assign"] != nil {
					th.finishFields(m, vars, in, c.next)
				} else {
					th.finishJSONata(vars, in, c.next)
				}
				return
			}
		}
		if st.deflt == nil {
			th.fail(&Failure{Error: ErrNoChoiceMatched, Cause: "No Matches!"})
			return
		}
		th.finishJSONata(vars, in, st.deflt)
	case "Wait":
		var due time.Time
		if v, ok, fl := th.evalField(jx, "Seconds", vars); fl != nil {
			th.fail(fl)
			return
		} else if ok {
			n, isNum := v.(value.Number)
			secs, isInt := n.Int64()
			if !isNum || !isInt || secs < 0 {
				th.fail(th.typeFailure("Seconds", "integer", v))
				return
			}
			due = th.x.now.Add(time.Duration(secs) * time.Second)
		}
		if v, ok, fl := th.evalField(jx, "Timestamp", vars); fl != nil {
			th.fail(fl)
			return
		} else if ok {
			s, isStr := v.(string)
			if !isStr {
				s = value.String(v)
			}
			t, valid := parseTimestamp(s)
			if !valid {
				th.fail(th.evalFailure("Timestamp", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: "+s))
				return
			}
			due = t
		}
		th.run.effInput = in
		th.x.timer(th, opWait, due)
	case "Task":
		th.runTaskJSONata(vars)
	case "Parallel", "Map":
		th.runContainerJSONata(vars)
	}
}

// waitDoneJSONata finishes a JSONata Wait state.
func (th *thread) waitDoneJSONata() {
	vars := th.jvars(th.statesVar(th.run.input, nil, nil, false, false))
	th.finishJSONata(vars, th.run.input, th.cur.next)
}

// finishJSONata evaluates the state's Output (default: def) and Assign, and
// exits to next.
func (th *thread) finishJSONata(vars map[string]any, def any, next *state) {
	th.finishFields(th.cur.jx.fields, vars, def, next)
}

func (th *thread) finishFields(m map[string]*jsonata.Template, vars map[string]any, def any, next *state) {
	out, assigned, f := th.outputAndAssign(m, vars, def)
	if f != nil {
		th.fail(f)
		return
	}
	th.exitAssigned(out, next, assigned)
}

// outputAndAssign evaluates Output (default: def) and Assign of a state,
// Choice rule or catcher, both against the same variables.
func (th *thread) outputAndAssign(m map[string]*jsonata.Template, vars map[string]any, def any) (any, *value.Object, *Failure) {
	assigned, f := th.assignJSONata(m, vars)
	if f != nil {
		return nil, nil, f
	}
	out, ok, f := th.evalField(m, "Output", vars)
	if f != nil {
		return nil, nil, f
	}
	if !ok {
		out = def
	}
	return out, assigned, nil
}

func (th *thread) runTaskJSONata(vars map[string]any) {
	st := th.cur
	th.gen++
	th.prepareToken()
	if th.token() != "" {
		vars = th.jvars(th.statesVar(th.run.input, nil, nil, false, false))
	}
	jx := st.jx.fields
	args, ok, f := th.evalField(jx, "Arguments", vars)
	if f != nil {
		th.fail(f)
		return
	}
	if !ok {
		args = th.run.input
	} else {
		th.inspect("afterArguments", args)
	}
	var timeout, heartbeat int64
	for _, name := range []string{"TimeoutSeconds", "HeartbeatSeconds"} {
		v, ok, f := th.evalField(jx, name, vars)
		if f != nil {
			th.fail(f)
			return
		}
		if !ok {
			continue
		}
		n, isNum := v.(value.Number)
		i, isInt := n.Int64()
		if !isNum || !isInt || i <= 0 {
			th.fail(th.typeFailure(name, "integer", v))
			return
		}
		if name == "TimeoutSeconds" {
			timeout = i
		} else {
			heartbeat = i
		}
	}
	th.schedule(args, timeout, heartbeat)
}

// completeJSONata finishes a Task, Parallel or Map state with its result.
func (th *thread) completeJSONata(result any) {
	// AWS records no "result" inspection for JSONata states, nor for Map
	// and Parallel states in either language.
	vars := th.jvars(th.statesVar(th.run.input, result, nil, true, false))
	th.finishJSONata(vars, result, th.cur.next)
}

func (th *thread) runContainerJSONata(vars map[string]any) {
	st := th.cur
	th.gen++
	jx := st.jx.fields
	if st.Type == "Parallel" {
		args, ok, f := th.evalField(jx, "Arguments", vars)
		if f != nil {
			th.fail(f)
			return
		}
		if !ok {
			args = th.run.input
		}
		th.startParallel(args)
		return
	}
	items, ok, f := th.evalField(jx, "Items", vars)
	if f != nil {
		th.fail(f)
		return
	}
	if !ok {
		items = th.run.input
		if v, read := th.readerItems(); read {
			items, ok = v, true
		}
	}
	arr, isArr := items.([]any)
	if !isArr {
		th.run.failEvent = "MapStateFailed"
		if ok {
			th.fail(th.typeFailure("Items", "array", items))
		} else {
			f := th.evalFailure("", "Map state input must be an array but was: "+value.String(items))
			th.fail(f)
		}
		return
	}
	c := &container{owner: th, st: st, isMap: true, input: th.run.input, items: arr}
	if v, ok, f := th.evalField(jx, "MaxConcurrency", vars); f != nil {
		th.fail(f)
		return
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			th.fail(th.typeFailure("MaxConcurrency", "integer", v))
			return
		}
		c.maxConc = int(n.Float64())
	}
	if v, ok, f := th.evalField(jx, "ToleratedFailureCount", vars); f != nil {
		th.fail(f)
		return
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			th.fail(th.typeFailure("ToleratedFailureCount", "integer", v))
			return
		}
		c.tolCount, c.hasTol = int(n.Float64()), true
	} else {
		c.tolCount = -1
	}
	if v, ok, f := th.evalField(jx, "ToleratedFailurePercentage", vars); f != nil {
		th.fail(f)
		return
	} else if ok {
		n, isNum := v.(value.Number)
		if !isNum {
			th.fail(th.typeFailure("ToleratedFailurePercentage", "number", v))
			return
		}
		c.tolPercent, c.hasTol = n.Float64(), true
	}
	th.startMap(c)
}

// itemInputJSONata evaluates ItemSelector for one iteration.
func (c *container) itemInputJSONata(ch *thread) (any, *Failure) {
	th := c.owner
	t := c.st.jx.fields["ItemSelector"]
	if t == nil {
		return c.items[ch.index], nil
	}
	states := th.statesVar(c.input, nil, nil, false, false)
	states.Set("context", ch.contextObjectFor(th))
	v, err := t.EvalWith(context.Background(), th.jvars(states), jsonata.Options{Rand: th.x.rand})
	if err != nil {
		return nil, th.queryFailure("ItemSelector", err)
	}
	return v, nil
}

func (th *thread) caughtJSONata(c *catcher, f *Failure, errOut *value.Object) {
	st := th.cur
	idx := 0
	for i, cc := range st.catch {
		if cc == c {
			idx = i
		}
	}
	m := st.jx.catchers[idx]
	vars := th.jvars(th.statesVar(th.run.input, nil, errOut, false, true))
	out, assigned, fl := th.outputAndAssign(m, vars, errOut)
	if fl != nil {
		th.propagate(fl) // a catcher's own failure is not caught again
		return
	}
	th.exitAssigned(out, c.next, assigned)
}

var _ = strings.Contains
