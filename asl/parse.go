package asl

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/stepd/stepd/value"
)

// Parse parses a definition from JSON text. On failure the error is
// Diagnostics listing every problem found.
func Parse(data []byte) (*StateMachine, error) {
	v, err := value.Parse(data)
	if err != nil {
		var se *value.SyntaxError
		msg := err.Error()
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			msg = fmt.Sprintf("%s at line %d, column %d", se.Msg, line, col)
		}
		return nil, Diagnostics{{Pointer: "/", Code: CodeInvalidJSON, Message: msg, Err: err}}
	}
	return FromValue(v)
}

func lineCol(data []byte, off int) (int, int) {
	line, col := 1, 1
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// FromValue builds a definition from a parsed JSON value. Warnings (what
// stepd cannot run, State.NotImplemented) are not errors.
func FromValue(v any) (*StateMachine, error) {
	sm, diags := Build(v)
	if err := diags.Errors().Err(); err != nil {
		return nil, err
	}
	return sm, nil
}

// Build builds a definition and returns every problem found. The machine is
// returned (possibly with dangling transitions) when the only problems are
// missing transition targets, so that a validator can go on checking it.
func Build(v any) (*StateMachine, Diagnostics) {
	p := &parser{}
	o, ok := object(v)
	if !ok {
		return nil, Diagnostics{{Pointer: "/", Code: CodeSchema, Message: "The definition must be a JSON object"}}
	}
	sm := p.machine(o, "", scopeTop)
	for _, d := range p.diags {
		if d.Code != CodeMissingTarget && !d.IsWarning() {
			return nil, p.diags
		}
	}
	return sm, p.diags
}

type parser struct {
	diags Diagnostics
	topQL string // the top-level QueryLanguage
}

// unsupported reports field k of the object at ptr as not supported,
// with the nearest of the known fields as a hint.
func (p *parser) unsupported(ptr, k string, known map[string]bool) {
	p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
	if near := Nearest(k, maps.Keys(known)); near != "" {
		p.diags[len(p.diags)-1].Hint = "did you mean '" + near + "'?"
	}
}

// notImplemented reports what AWS accepts in state st that stepd cannot
// run: a WARNING, and the state's NotImplemented message (the first one),
// which an execution entering it fails with.
func (p *parser) notImplemented(st *State, ptr, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.diags = append(p.diags, Diagnostic{Pointer: ptr, Code: CodeUnsupported, Message: msg, Severity: SeverityWarning})
	if st.NotImplemented == "" {
		st.NotImplemented = msg
	}
}

func (p *parser) errorf(ptr, code, format string, args ...any) {
	if ptr == "" {
		ptr = "/"
	}
	p.diags = append(p.diags, Diagnostic{Pointer: ptr, Code: code, Message: fmt.Sprintf(format, args...)})
}

// fields checks a JSON object's members against the allowed set.
func (p *parser) fields(o *value.Object, ptr string, allowed map[string]bool, required ...string) {
	var missing []string
	for _, r := range required {
		if !o.Has(r) {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		p.errorf(ptr, CodeSchema, "These fields are required: [%s]", strings.Join(missing, ", "))
	}
	for _, k := range o.Keys() {
		if !allowed[k] {
			p.unsupported(ptr, k, allowed)
		}
	}
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func (p *parser) str(o *value.Object, key, ptr string) string {
	v, ok := o.Get(key)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'String' but got '%s'", typeName(v))
	}
	return s
}

// target reads a transition target: a state name, which may be empty. ok
// reports whether the member is present and a string.
func (p *parser) target(o *value.Object, key, ptr string) (name string, ok bool) {
	name = p.str(o, key, ptr)
	v, _ := o.Get(key)
	_, ok = v.(string)
	return name, ok
}

func (p *parser) boolean(o *value.Object, key, ptr string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'Boolean' but got '%s'", typeName(v))
	}
	return b
}

// integer reads a non-negative integer member.
func (p *parser) integer(o *value.Object, key, ptr string, min int) (int, bool) {
	v, ok := o.Get(key)
	if !ok {
		return 0, false
	}
	n, isNum := v.(value.Number)
	if !isNum {
		p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
		return 0, false
	}
	i, exact := n.Int64()
	if !exact || i > math.MaxInt32 {
		p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'Integer' but got '%s'", string(n))
		return 0, false
	}
	if int(i) < min {
		p.errorf(ptr+"/"+key, CodeSchema, "Value is less than the minimum %d", min)
	}
	return int(i), true
}

func field(o *value.Object, key string) Field {
	v, ok := o.Get(key)
	return Field{Set: ok, Value: v}
}

func (p *parser) path(o *value.Object, key, ptr string) PathField {
	v, ok := o.Get(key)
	if !ok {
		return PathField{}
	}
	switch x := v.(type) {
	case nil:
		return PathField{Set: true, Null: true}
	case string:
		return PathField{Set: true, Path: x}
	}
	p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'String' but got '%s'", typeName(v))
	return PathField{}
}

// object returns v as an object. A nil *value.Object (possible only in
// values built by hand) counts as null, so that no method is called on it.
func object(v any) (*value.Object, bool) {
	o, ok := v.(*value.Object)
	return o, ok && o != nil
}

func typeName(v any) string {
	if o, ok := v.(*value.Object); ok && o == nil {
		return "Null"
	}
	switch value.KindOf(v) {
	case value.KindNull:
		return "Null"
	case value.KindBool:
		return "Boolean"
	case value.KindNumber:
		return "Number"
	case value.KindString:
		return "String"
	case value.KindArray:
		return "Array"
	case value.KindObject:
		return "Object"
	}
	return "Unknown"
}

func (p *parser) queryLanguage(o *value.Object, ptr, inherited string) string {
	if !o.Has("QueryLanguage") {
		return inherited
	}
	ql := p.str(o, "QueryLanguage", ptr)
	switch ql {
	case JSONPath, JSONata:
	default:
		p.errorf(ptr+"/QueryLanguage", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"JSONPath\",\"JSONata\"])", ql)
		return inherited
	}
	if p.topQL == JSONata && ql == JSONPath {
		p.errorf(ptr, CodeSchema, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
	}
	return ql
}

// The members a machine object may have, by where it sits. AWS rejects
// QueryLanguage on an ItemProcessor or Iterator: the states inside inherit
// the top-level language (or declare their own).
var (
	topFields       = set("Comment", "StartAt", "States", "TimeoutSeconds", "Version", "QueryLanguage")
	branchFields    = set("Comment", "StartAt", "States", "TimeoutSeconds", "Version", "QueryLanguage")
	processorFields = set("Comment", "StartAt", "States", "TimeoutSeconds", "Version", "ProcessorConfig")
)

// scope says where a machine sits.
type scope int

const (
	scopeTop scope = iota
	scopeBranch
	scopeProcessor
)

func (p *parser) machine(o *value.Object, ptr string, where scope) *StateMachine {
	sm := &StateMachine{Pointer: ptr, Raw: o, States: map[string]*State{}}
	var missing []string
	if !o.Has("States") {
		missing = append(missing, "States")
	}
	if !o.Has("StartAt") {
		missing = append(missing, "StartAt")
	}
	if len(missing) > 0 {
		p.errorf(ptr, CodeSchema, "These fields are required: [%s]", strings.Join(missing, ", "))
	}
	allowed := topFields
	switch where {
	case scopeBranch:
		allowed = branchFields
	case scopeProcessor:
		allowed = processorFields
	}
	for _, k := range o.Keys() {
		if !allowed[k] {
			p.unsupported(ptr, k, allowed)
		}
	}
	sm.Comment = p.str(o, "Comment", ptr)
	sm.StartAt = p.str(o, "StartAt", ptr)
	sm.Version = p.str(o, "Version", ptr)
	sm.TimeoutSeconds, sm.HasTimeout = p.integer(o, "TimeoutSeconds", ptr, 0)
	if where == scopeTop {
		p.topQL = JSONPath
		if o.Has("QueryLanguage") {
			p.topQL = p.queryLanguage(o, ptr, JSONPath)
		}
	}
	// Nested machines run in the top-level language: states inside a Map or
	// Parallel inherit it, not the language of the Map or Parallel state.
	sm.QueryLanguage = p.topQL
	states, ok := o.Get("States")
	so, isObj := object(states)
	if ok && !isObj {
		p.errorf(ptr+"/States", CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(states))
	}
	if ok && isObj && so.Len() == 0 {
		p.errorf(ptr+"/States", CodeSchema, "There must be at least one state")
	}
	// declared holds every state name of this scope, including states too
	// malformed to build, so that transitions to them are not also
	// reported as missing.
	declared := make(map[string]bool, so.Len())
	for name, sv := range so.All {
		declared[name] = true
		sptr := ptr + "/States/" + escape(name)
		if javaLen(name) > 80 {
			p.errorf(sptr, CodeSchema, "State name is longer than 80 characters")
		}
		stObj, isObj := object(sv)
		if !isObj {
			p.errorf(sptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(sv))
			continue
		}
		st := p.state(name, stObj, sptr, sm.QueryLanguage)
		if st == nil {
			continue
		}
		if _, dup := sm.States[name]; !dup {
			sm.Names = append(sm.Names, name)
		}
		sm.States[name] = st
	}
	if isObj {
		p.targets(sm, declared)
	}
	return sm
}

// javaLen is the length of s in UTF-16 code units, as AWS (Java) counts.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// targets reports transitions to states that are not declared in sm.
func (p *parser) targets(sm *StateMachine, declared map[string]bool) {
	check := func(ptr, name string, present bool) {
		if present && !declared[name] {
			p.errorf(ptr, CodeMissingTarget, "Missing 'Next' target: %s", name)
			if near := Nearest(name, maps.Keys(declared)); near != "" {
				p.diags[len(p.diags)-1].Hint = "did you mean '" + near + "'?"
			}
		}
	}
	start, _ := sm.Raw.Get("StartAt")
	_, hasStart := start.(string)
	check(sm.Pointer+"/StartAt", sm.StartAt, hasStart)
	for _, name := range sm.Names {
		st := sm.States[name]
		check(st.Pointer+"/Next", st.Next, st.hasNext)
		check(st.Pointer+"/Default", st.Default, st.hasDefault)
		// AWS locates these with brackets: /States/C/Choices[0]/Next.
		for i, c := range st.Choices {
			check(fmt.Sprintf("%s/Choices[%d]/Next", st.Pointer, i), c.Next, c.hasNext)
		}
		for i, c := range st.Catch {
			check(fmt.Sprintf("%s/Catch[%d]/Next", st.Pointer, i), c.Next, c.hasNext)
		}
	}
}

// Fields allowed per state type and query language.
var (
	commonFields  = []string{"Type", "Comment", "QueryLanguage"}
	jsonPathIO    = []string{"InputPath", "OutputPath"}
	jsonataIO     = []string{"Output", "Assign"}
	transition    = []string{"Next", "End"}
	stateFieldSet = map[string][]string{
		"Pass":     {"Result", "ResultPath", "Parameters"},
		"Task":     {"Resource", "Parameters", "ResultSelector", "ResultPath", "Retry", "Catch", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Credentials", "Arguments"},
		"Choice":   {"Choices", "Default"},
		"Wait":     {"Seconds", "Timestamp", "SecondsPath", "TimestampPath"},
		"Succeed":  {},
		"Fail":     {"Error", "Cause", "ErrorPath", "CausePath"},
		"Parallel": {"Branches", "Parameters", "ResultSelector", "ResultPath", "Retry", "Catch", "Arguments"},
		"Map":      {"Iterator", "ItemProcessor", "ItemsPath", "Items", "ItemSelector", "Parameters", "ResultSelector", "ResultPath", "Retry", "Catch", "MaxConcurrency", "MaxConcurrencyPath", "ToleratedFailureCount", "ToleratedFailureCountPath", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath", "ItemReader", "ItemBatcher", "ResultWriter", "Label", "Arguments"},
	}
	stateFields = map[string]map[string]bool{}
	// The fields of one query language, refused in the other.
	jsonPathOnly = []string{"InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "ItemsPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath", "TimestampPath", "ErrorPath", "CausePath", "MaxConcurrencyPath", "ToleratedFailureCountPath", "ToleratedFailurePercentagePath"}
	jsonataOnly  = []string{"Arguments", "Output", "Items"}
)

// StateFields lists the fields a state of type typ may have in the query
// language ql (JSONPath or JSONata), in a stable order; nil for an
// unknown type. The legacy Map fields (Iterator, and Parameters in
// JSONPath) are included.
func StateFields(typ, ql string) []string {
	allowed, ok := stateFields[typ]
	if !ok {
		return nil
	}
	refused := jsonataOnly
	if ql == JSONata {
		refused = jsonPathOnly
	}
	var out []string
	for k := range allowed {
		if !slices.Contains(refused, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// MachineFields lists the fields of a state machine object: at the top
// (top), in a Parallel branch, or in a Map's ItemProcessor (processor).
func MachineFields(where string) []string {
	m := topFields
	switch where {
	case "branch":
		m = branchFields
	case "processor":
		m = processorFields
	}
	return slices.Sorted(maps.Keys(m))
}

// StateTypes lists the state types.
func StateTypes() []string { return slices.Sorted(maps.Keys(stateFieldSet)) }

func init() {
	for typ, fs := range stateFieldSet {
		all := slices.Concat(commonFields, jsonPathIO, jsonataIO, fs)
		if typ != "Choice" && typ != "Succeed" && typ != "Fail" {
			all = append(all, transition...)
		}
		stateFields[typ] = set(all...)
	}
}

func (p *parser) state(name string, o *value.Object, ptr, inherited string) *State {
	st := &State{Name: name, Pointer: ptr, Raw: o}
	tv, ok := o.Get("Type")
	if !ok {
		p.errorf(ptr, CodeSchema, "These fields are required: [Type]")
		return nil
	}
	st.Type, _ = tv.(string)
	allowed, known := stateFields[st.Type]
	if !known {
		p.errorf(ptr+"/Type", CodeSchema, "Instance value (%s) not found in enum (possible values: [\"Task\",\"Pass\",\"Choice\",\"Wait\",\"Succeed\",\"Fail\",\"Parallel\",\"Map\"])", value.String(tv))
		if near := Nearest(st.Type, maps.Keys(stateFields)); near != "" {
			p.diags[len(p.diags)-1].Hint = "did you mean '" + near + "'?"
		}
		return nil
	}
	for _, k := range o.Keys() {
		if !allowed[k] {
			p.unsupported(ptr, k, allowed)
		}
	}
	st.Comment = p.str(o, "Comment", ptr)
	st.QueryLanguage = p.queryLanguage(o, ptr, inherited)
	st.Next, st.hasNext = p.target(o, "Next", ptr)
	st.End = p.boolean(o, "End", ptr)
	switch st.Type {
	case "Task", "Pass", "Wait", "Parallel", "Map":
		switch {
		case !st.hasNext && !st.End:
			p.errorf(ptr, CodeSchema, "These fields are required: [Next | End]")
		case st.hasNext && st.End:
			p.errorf(ptr, CodeSchema, "Only one of 'Next' or 'End' can be specified")
		}
	}
	st.InputPath = p.path(o, "InputPath", ptr)
	st.OutputPath = p.path(o, "OutputPath", ptr)
	st.ResultPath = p.path(o, "ResultPath", ptr)
	st.Parameters = field(o, "Parameters")
	st.ResultSelector = field(o, "ResultSelector")
	st.Result = field(o, "Result")
	st.Arguments = field(o, "Arguments")
	st.Output = field(o, "Output")
	st.Assign = field(o, "Assign")
	p.objectField(st.Assign, ptr+"/Assign")
	if st.QueryLanguage == JSONata {
		for _, k := range jsonPathOnly {
			if o.Has(k) {
				p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in JSONata query language", k)
			}
		}
	} else {
		for _, k := range jsonataOnly {
			if o.Has(k) {
				p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in JSONPath query language", k)
			}
		}
	}

	switch st.Type {
	case "Task":
		if !o.Has("Resource") {
			p.errorf(ptr, CodeSchema, "These fields are required: [Resource]")
		}
		st.Resource = p.str(o, "Resource", ptr)
		st.TimeoutSeconds = p.secondsField(o, "TimeoutSeconds", ptr, st.QueryLanguage)
		st.HeartbeatSeconds = p.secondsField(o, "HeartbeatSeconds", ptr, st.QueryLanguage)
		st.TimeoutSecondsPath = p.str(o, "TimeoutSecondsPath", ptr)
		st.HeartbeatSecondsPath = p.str(o, "HeartbeatSecondsPath", ptr)
		if st.TimeoutSeconds.Set && st.TimeoutSecondsPath != "" {
			p.errorf(ptr, CodeSchema, "Only one of 'TimeoutSeconds' or 'TimeoutSecondsPath' can be specified")
		}
		if st.HeartbeatSeconds.Set && st.HeartbeatSecondsPath != "" {
			p.errorf(ptr, CodeSchema, "Only one of 'HeartbeatSeconds' or 'HeartbeatSecondsPath' can be specified")
		}
		st.Credentials = field(o, "Credentials")
		if st.Credentials.Set {
			co, isObj := object(st.Credentials.Value)
			if !isObj || !(co.Has("RoleArn") || co.Has("RoleArn.$")) {
				p.errorf(ptr+"/Credentials", CodeSchema, "The field 'RoleArn' is required but was missing")
			}
		}
	case "Choice":
		p.choices(st, o, ptr)
		st.Default, st.hasDefault = p.target(o, "Default", ptr)
	case "Wait":
		p.wait(st, o, ptr)
	case "Fail":
		st.Error = field(o, "Error")
		st.Cause = field(o, "Cause")
		st.ErrorPath = p.str(o, "ErrorPath", ptr)
		st.CausePath = p.str(o, "CausePath", ptr)
		if st.Error.Set && st.ErrorPath != "" {
			p.errorf(ptr, CodeSchema, "Only one of 'Error' or 'ErrorPath' can be specified")
		}
		if st.Cause.Set && st.CausePath != "" {
			p.errorf(ptr, CodeSchema, "Only one of 'Cause' or 'CausePath' can be specified")
		}
		for _, k := range []string{"Error", "Cause"} {
			if v, ok := o.Get(k); ok {
				if _, isStr := v.(string); !isStr {
					p.errorf(ptr+"/"+k, CodeSchema, "Expected value of type 'String' but got '%s'", typeName(v))
				}
			}
		}
	case "Parallel":
		bv, ok := o.Get("Branches")
		arr, isArr := bv.([]any)
		switch {
		case !ok:
			p.errorf(ptr, CodeSchema, "These fields are required: [Branches]")
		case !isArr:
			p.errorf(ptr+"/Branches", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(bv))
		case len(arr) == 0:
			p.errorf(ptr+"/Branches", CodeSchema, "There must be at least one branch")
		}
		for i, b := range arr {
			bptr := fmt.Sprintf("%s/Branches/%d", ptr, i)
			bo, isObj := object(b)
			if !isObj {
				p.errorf(bptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(b))
				continue
			}
			st.Branches = append(st.Branches, p.machine(bo, bptr, scopeBranch))
		}
	case "Map":
		p.mapState(st, o, ptr)
	}
	if st.Type == "Task" || st.Type == "Parallel" || st.Type == "Map" {
		st.Retry = p.retriers(o, ptr)
		st.Catch = p.catchers(o, ptr, st.QueryLanguage)
	}
	return st
}

func (p *parser) objectField(f Field, ptr string) {
	if !f.Set {
		return
	}
	if _, ok := object(f.Value); !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(f.Value))
	}
}

// isExpr reports whether s is a JSONata expression string {% ... %}.
func isExpr(s string) bool {
	return strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}") && len(s) >= 4
}

// secondsField reads a field that holds a positive integer, or a JSONata
// expression in JSONata mode.
func (p *parser) secondsField(o *value.Object, key, ptr, ql string) Field {
	f := field(o, key)
	if !f.Set {
		return f
	}
	switch v := f.Value.(type) {
	case value.Number:
		i, exact := v.Int64()
		if !exact || i < 0 || i > 99999999 {
			p.errorf(ptr+"/"+key, CodeSchema, "Expected a non-negative integer but got '%s'", string(v))
		}
	case string:
		if ql != JSONata || !isExpr(v) {
			p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'Integer' but got 'String'")
		}
	default:
		p.errorf(ptr+"/"+key, CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
	}
	return f
}

func (p *parser) wait(st *State, o *value.Object, ptr string) {
	st.Seconds = p.secondsField(o, "Seconds", ptr, st.QueryLanguage)
	st.Timestamp = field(o, "Timestamp")
	st.SecondsPath = p.str(o, "SecondsPath", ptr)
	st.TimestampPath = p.str(o, "TimestampPath", ptr)
	n := 0
	for _, k := range []string{"Seconds", "Timestamp", "SecondsPath", "TimestampPath"} {
		if o.Has(k) {
			n++
		}
	}
	if n != 1 {
		p.errorf(ptr, CodeSchema, "Exactly one of 'Seconds', 'Timestamp', 'SecondsPath' or 'TimestampPath' must be specified")
	}
	if st.Timestamp.Set {
		s, ok := st.Timestamp.Value.(string)
		if !ok || !validTimestamp(s) && !(st.QueryLanguage == JSONata && isExpr(s)) {
			p.errorf(ptr+"/Timestamp", CodeSchema, "String does not match RFC3339 timestamp")
		}
	}
}

func (p *parser) stringList(v any, ptr string) []string {
	arr, ok := v.([]any)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			p.errorf(fmt.Sprintf("%s/%d", ptr, i), CodeSchema, "Expected value of type 'String' but got '%s'", typeName(e))
			continue
		}
		out = append(out, s)
	}
	return out
}
