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

// FromValue builds a definition from a parsed JSON value.
func FromValue(v any) (*StateMachine, error) {
	sm, diags := Build(v)
	if err := diags.Err(); err != nil {
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
		if d.Code != CodeMissingTarget {
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
	if near := nearest(k, maps.Keys(known)); near != "" {
		p.diags[len(p.diags)-1].Hint = "did you mean '" + near + "'?"
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
)

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
		if near := nearest(st.Type, maps.Keys(stateFields)); near != "" {
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
		for _, k := range []string{"InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "ItemsPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath", "TimestampPath", "ErrorPath", "CausePath", "MaxConcurrencyPath", "ToleratedFailureCountPath", "ToleratedFailurePercentagePath"} {
			if o.Has(k) {
				p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in JSONata query language", k)
			}
		}
	} else {
		for _, k := range []string{"Arguments", "Output", "Items"} {
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

func (p *parser) mapState(st *State, o *value.Object, ptr string) {
	procKey := "ItemProcessor"
	pv, ok := o.Get("ItemProcessor")
	if !ok {
		pv, ok = o.Get("Iterator")
		procKey = "Iterator"
	}
	if o.Has("ItemProcessor") && o.Has("Iterator") {
		p.errorf(ptr, CodeSchema, "Only one of 'ItemProcessor' or 'Iterator' can be specified")
	}
	if !ok {
		p.errorf(ptr, CodeSchema, "These fields are required: [ItemProcessor]")
	} else if po, isObj := object(pv); !isObj {
		p.errorf(ptr+"/"+procKey, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(pv))
	} else {
		st.ProcessorMode = "INLINE"
		if cv, ok := po.Get("ProcessorConfig"); ok {
			if co, isObj := object(cv); isObj {
				if m := p.str(co, "Mode", ptr+"/"+procKey+"/ProcessorConfig"); m != "" {
					st.ProcessorMode = m
					if m != "INLINE" && m != "DISTRIBUTED" {
						p.errorf(ptr+"/"+procKey+"/ProcessorConfig/Mode", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"INLINE\",\"DISTRIBUTED\"])", m)
					}
				}
				st.ExecutionType = p.str(co, "ExecutionType", ptr+"/"+procKey+"/ProcessorConfig")
				if t := st.ExecutionType; t != "" && t != "STANDARD" && t != "EXPRESS" {
					p.errorf(ptr+"/"+procKey+"/ProcessorConfig/ExecutionType", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"STANDARD\",\"EXPRESS\"])", t)
				}
				for _, k := range co.Keys() {
					if k != "Mode" && k != "ExecutionType" {
						p.errorf(ptr+"/"+procKey+"/ProcessorConfig/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
					}
				}
			} else {
				p.errorf(ptr+"/"+procKey+"/ProcessorConfig", CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(cv))
			}
		}
		st.ItemProcessor = p.machine(po, ptr+"/"+procKey, scopeProcessor)
	}
	st.ItemsPath = p.path(o, "ItemsPath", ptr)
	st.Items = field(o, "Items")
	st.ItemSelector = field(o, "ItemSelector")
	st.MaxConcurrency = field(o, "MaxConcurrency")
	st.MaxConcurrencyPath = p.str(o, "MaxConcurrencyPath", ptr)
	st.ToleratedFailureCount = field(o, "ToleratedFailureCount")
	st.ToleratedFailurePercentage = field(o, "ToleratedFailurePercentage")
	st.ToleratedFailureCountPath = p.str(o, "ToleratedFailureCountPath", ptr)
	st.ToleratedFailurePercentagePath = p.str(o, "ToleratedFailurePercentagePath", ptr)
	st.ItemReader = field(o, "ItemReader")
	st.ItemBatcher = field(o, "ItemBatcher")
	st.ResultWriter = field(o, "ResultWriter")
	st.Label = p.str(o, "Label", ptr)
	if st.ItemBatcher.Set {
		st.Batcher = p.itemBatcher(st, ptr+"/ItemBatcher")
	}
	if st.ItemReader.Set {
		st.Reader = p.itemReader(st, ptr+"/ItemReader")
	}
	if st.ResultWriter.Set {
		st.Writer = p.resultWriter(st, ptr+"/ResultWriter")
	}
	if st.MaxConcurrency.Set && st.MaxConcurrencyPath != "" {
		p.errorf(ptr, CodeSchema, "Only one of 'MaxConcurrency' or 'MaxConcurrencyPath' can be specified")
	}
	if v, ok := st.MaxConcurrency.Value.(value.Number); ok {
		if i, exact := v.Int64(); !exact || i < 0 {
			p.errorf(ptr+"/MaxConcurrency", CodeSchema, "Expected a non-negative integer but got '%s'", string(v))
		}
	}
}

// itemBatcher parses a Map's ItemBatcher: an object of known members only,
// each limit a positive integer given once (literally, by path in
// JSONPath or by expression in JSONata), in a DISTRIBUTED Map.
func (p *parser) itemBatcher(st *State, ptr string) *ItemBatcher {
	o, ok := object(st.ItemBatcher.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ItemBatcher.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ItemBatcher' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	allowed := set("MaxItemsPerBatch", "MaxInputBytesPerBatch", "BatchInput", "MaxItemsPerBatchPath", "MaxInputBytesPerBatchPath")
	for _, k := range o.Keys() {
		if !allowed[k] {
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		} else if st.QueryLanguage == JSONata && strings.HasSuffix(k, "Path") {
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in JSONata query language", k)
		}
	}
	b := &ItemBatcher{Pointer: ptr,
		MaxItemsPerBatch: field(o, "MaxItemsPerBatch"), MaxInputBytesPerBatch: field(o, "MaxInputBytesPerBatch"),
		MaxItemsPerBatchPath: p.str(o, "MaxItemsPerBatchPath", ptr), MaxInputBytesPerBatchPath: p.str(o, "MaxInputBytesPerBatchPath", ptr),
		BatchInput: field(o, "BatchInput")}
	for _, l := range []struct {
		name string
		f    Field
		path string
		max  int64
	}{
		{"MaxItemsPerBatch", b.MaxItemsPerBatch, b.MaxItemsPerBatchPath, 0},
		{"MaxInputBytesPerBatch", b.MaxInputBytesPerBatch, b.MaxInputBytesPerBatchPath, maxBatchBytes},
	} {
		if l.f.Set && l.path != "" {
			p.errorf(ptr, CodeSchema, "Only one of '%s' or '%sPath' can be specified", l.name, l.name)
		}
		if !l.f.Set {
			continue
		}
		switch v := l.f.Value.(type) {
		case value.Number:
			if i, exact := v.Int64(); !exact || i < 1 || l.max > 0 && i > l.max {
				if l.max > 0 {
					p.errorf(ptr+"/"+l.name, CodeSchema, "Expected an integer between 1 and %d but got '%s'", l.max, string(v))
				} else {
					p.errorf(ptr+"/"+l.name, CodeSchema, "Expected a positive integer but got '%s'", string(v))
				}
			}
		case string:
			if st.QueryLanguage != JSONata {
				p.errorf(ptr+"/"+l.name, CodeSchema, "Expected value of type 'Integer' but got 'String'")
			}
		default:
			p.errorf(ptr+"/"+l.name, CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
		}
	}
	if !b.MaxItemsPerBatch.Set && !b.MaxInputBytesPerBatch.Set && b.MaxItemsPerBatchPath == "" && b.MaxInputBytesPerBatchPath == "" {
		p.errorf(ptr, CodeSchema, "These fields are required: [MaxItemsPerBatch | MaxItemsPerBatchPath | MaxInputBytesPerBatch | MaxInputBytesPerBatchPath]")
	}
	if b.BatchInput.Set && st.QueryLanguage != JSONata {
		p.objectField(b.BatchInput, ptr+"/BatchInput")
	}
	return b
}

// itemReader parses a Map's ItemReader: known members only, each named
// when it is not, with the ReaderConfig its Resource needs.
func (p *parser) itemReader(st *State, ptr string) *ItemReader {
	o, ok := object(st.ItemReader.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ItemReader.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ItemReader' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	params := "Parameters"
	if st.QueryLanguage == JSONata {
		params = "Arguments"
	}
	for _, k := range o.Keys() {
		switch k {
		case "Resource", "ReaderConfig", params:
		case "Parameters", "Arguments":
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in %s query language", k, map[bool]string{true: "JSONata", false: "JSONPath"}[st.QueryLanguage == JSONata])
		default:
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	r := &ItemReader{Pointer: ptr, Resource: p.str(o, "Resource", ptr), Parameters: field(o, params)}
	if st.QueryLanguage != JSONata { // Arguments may be one expression
		p.objectField(r.Parameters, ptr+"/"+params)
	}
	switch r.Resource {
	case "arn:aws:states:::s3:getObject":
		r.Action = "getObject"
	case "arn:aws:states:::s3:listObjectsV2":
		r.Action = "listObjectsV2"
	case "":
		p.errorf(ptr, CodeSchema, "These fields are required: [Resource]")
	default:
		p.errorf(ptr+"/Resource", CodeSchema, "The ItemReader Resource '%s' is not supported: stepd reads items with arn:aws:states:::s3:getObject or arn:aws:states:::s3:listObjectsV2", r.Resource)
	}
	cv, hasConfig := o.Get("ReaderConfig")
	co, isObj := object(cv)
	if hasConfig && !isObj {
		p.errorf(ptr+"/ReaderConfig", CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(cv))
	}
	if co == nil {
		co = value.NewObject(0)
	}
	cptr := ptr + "/ReaderConfig"
	for _, k := range co.Keys() {
		switch k {
		case "InputType", "CSVHeaderLocation", "CSVHeaders", "CSVDelimiter", "MaxItems", "MaxItemsPath":
		default:
			p.errorf(cptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	r.InputType = p.str(co, "InputType", cptr)
	r.CSVHeaderLocation = p.str(co, "CSVHeaderLocation", cptr)
	r.CSVDelimiter = p.str(co, "CSVDelimiter", cptr)
	r.MaxItems = field(co, "MaxItems")
	r.MaxItemsPath = p.str(co, "MaxItemsPath", cptr)
	if hv, ok := co.Get("CSVHeaders"); ok {
		r.CSVHeaders = p.stringList(hv, cptr+"/CSVHeaders")
	}
	switch r.InputType {
	case "JSON", "JSONL", "CSV":
		if r.Action == "listObjectsV2" {
			p.errorf(cptr+"/InputType", CodeSchema, "The InputType '%s' reads an object with arn:aws:states:::s3:getObject, not arn:aws:states:::s3:listObjectsV2", r.InputType)
		}
	case "MANIFEST":
		p.errorf(cptr+"/InputType", CodeUnsupported, "The InputType 'MANIFEST' (an Amazon S3 inventory) is not implemented by stepd yet")
	case "":
		if r.Action == "getObject" {
			p.errorf(cptr, CodeSchema, "These fields are required: [InputType]")
		}
	default:
		p.errorf(cptr+"/InputType", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"CSV\",\"JSON\",\"JSONL\",\"MANIFEST\"])", r.InputType)
	}
	if r.InputType != "CSV" {
		for _, k := range []string{"CSVHeaderLocation", "CSVHeaders", "CSVDelimiter"} {
			if co.Has(k) {
				p.errorf(cptr+"/"+k, CodeSchema, "The field '%s' is only supported with the InputType CSV", k)
			}
		}
	}
	switch r.CSVHeaderLocation {
	case "", "FIRST_ROW":
		if len(r.CSVHeaders) > 0 {
			p.errorf(cptr+"/CSVHeaders", CodeSchema, "CSVHeaders can only be given with the CSVHeaderLocation GIVEN")
		}
	case "GIVEN":
		if len(r.CSVHeaders) == 0 {
			p.errorf(cptr, CodeSchema, "These fields are required: [CSVHeaders]")
		}
	default:
		p.errorf(cptr+"/CSVHeaderLocation", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"FIRST_ROW\",\"GIVEN\"])", r.CSVHeaderLocation)
	}
	switch r.CSVDelimiter {
	case "", "COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB":
	default:
		p.errorf(cptr+"/CSVDelimiter", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"COMMA\",\"PIPE\",\"SEMICOLON\",\"SPACE\",\"TAB\"])", r.CSVDelimiter)
	}
	if r.MaxItems.Set && r.MaxItemsPath != "" {
		p.errorf(cptr, CodeSchema, "Only one of 'MaxItems' or 'MaxItemsPath' can be specified")
	}
	if st.QueryLanguage == JSONata && r.MaxItemsPath != "" {
		p.errorf(cptr+"/MaxItemsPath", CodeSchema, "The field 'MaxItemsPath' is not supported in JSONata query language")
	}
	switch v := r.MaxItems.Value.(type) {
	case nil:
	case value.Number:
		if i, exact := v.Int64(); !exact || i < 0 || i > 100000000 {
			p.errorf(cptr+"/MaxItems", CodeSchema, "Expected an integer between 0 and 100000000 but got '%s'", string(v))
		}
	case string:
		if st.QueryLanguage != JSONata {
			p.errorf(cptr+"/MaxItems", CodeSchema, "Expected value of type 'Integer' but got 'String'")
		}
	default:
		p.errorf(cptr+"/MaxItems", CodeSchema, "Expected value of type 'Integer' but got '%s'", typeName(v))
	}
	if st.ItemsPath.Set || st.Items.Set {
		p.errorf(ptr, CodeSchema, "Only one of 'ItemReader' or 'ItemsPath'/'Items' can be specified")
	}
	return r
}

// resultWriter parses a Map's ResultWriter: a Resource, s3:putObject,
// and its Parameters (Arguments); WriterConfig is refused, naming it, as
// stepd does not apply its transformations yet.
func (p *parser) resultWriter(st *State, ptr string) *ResultWriter {
	o, ok := object(st.ResultWriter.Value)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(st.ResultWriter.Value))
		return nil
	}
	if st.ProcessorMode != "DISTRIBUTED" {
		p.errorf(ptr, CodeSchema, "The field 'ResultWriter' is only supported in a Map state whose ProcessorConfig Mode is DISTRIBUTED")
	}
	params := "Parameters"
	if st.QueryLanguage == JSONata {
		params = "Arguments"
	}
	for _, k := range o.Keys() {
		switch k {
		case "Resource", params:
		case "WriterConfig":
			p.errorf(ptr+"/WriterConfig", CodeUnsupported, "The field 'WriterConfig' (OutputType, Transformation) is not implemented by stepd yet")
		case "Parameters", "Arguments":
			p.errorf(ptr+"/"+k, CodeSchema, "The field '%s' is not supported in %s query language", k, map[bool]string{true: "JSONata", false: "JSONPath"}[st.QueryLanguage == JSONata])
		default:
			p.errorf(ptr+"/"+escape(k), CodeSchema, "Field '%s' is not supported", k)
		}
	}
	w := &ResultWriter{Pointer: ptr, Resource: p.str(o, "Resource", ptr), Parameters: field(o, params)}
	if st.QueryLanguage != JSONata {
		p.objectField(w.Parameters, ptr+"/"+params)
	}
	switch w.Resource {
	case "arn:aws:states:::s3:putObject":
		if !w.Parameters.Set {
			p.errorf(ptr, CodeSchema, "These fields are required: [%s]", params)
		}
	case "":
		p.errorf(ptr, CodeSchema, "These fields are required: [Resource]")
	default:
		p.errorf(ptr+"/Resource", CodeSchema, "The ResultWriter Resource '%s' is not supported: results are written with arn:aws:states:::s3:putObject", w.Resource)
	}
	return w
}

// maxBatchBytes is the largest MaxInputBytesPerBatch AWS accepts: a
// batch is one child execution's input, at most 256 KiB.
const maxBatchBytes = 256 * 1024

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

var retrierFields = set("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment")

func (p *parser) retriers(o *value.Object, ptr string) []*Retrier {
	v, ok := o.Get("Retry")
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Retry", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return nil
	}
	var out []*Retrier
	for i, e := range arr {
		rptr := fmt.Sprintf("%s/Retry/%d", ptr, i)
		ro, isObj := object(e)
		if !isObj {
			p.errorf(rptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(e))
			continue
		}
		p.fields(ro, rptr, retrierFields, "ErrorEquals")
		r := &Retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2, JitterStrategy: "NONE", Pointer: rptr}
		if ev, ok := ro.Get("ErrorEquals"); ok {
			r.ErrorEquals = p.stringList(ev, rptr+"/ErrorEquals")
		}
		if n, ok := p.integer(ro, "IntervalSeconds", rptr, 1); ok {
			r.IntervalSeconds = n
		}
		if n, ok := p.integer(ro, "MaxAttempts", rptr, 0); ok {
			r.MaxAttempts = n
		}
		if n, ok := p.integer(ro, "MaxDelaySeconds", rptr, 1); ok {
			r.MaxDelaySeconds, r.HasMaxDelay = n, true
		}
		if bv, ok := ro.Get("BackoffRate"); ok {
			n, isNum := bv.(value.Number)
			if !isNum || n.Float64() < 1 {
				p.errorf(rptr+"/BackoffRate", CodeSchema, "BackoffRate must be a number greater than or equal to 1.0")
			} else {
				r.BackoffRate = n.Float64()
			}
		}
		if js := p.str(ro, "JitterStrategy", rptr); js != "" {
			if js != "FULL" && js != "NONE" {
				p.errorf(rptr+"/JitterStrategy", CodeSchema, "Instance value (\"%s\") not found in enum (possible values: [\"FULL\",\"NONE\"])", js)
			}
			r.JitterStrategy = js
		}
		r.Comment = p.str(ro, "Comment", rptr)
		out = append(out, r)
	}
	return out
}

var catcherFields = set("ErrorEquals", "Next", "ResultPath", "Output", "Assign", "Comment")

func (p *parser) catchers(o *value.Object, ptr, ql string) []*Catcher {
	v, ok := o.Get("Catch")
	if !ok {
		return nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Catch", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return nil
	}
	var out []*Catcher
	for i, e := range arr {
		cptr := fmt.Sprintf("%s/Catch/%d", ptr, i)
		co, isObj := object(e)
		if !isObj {
			p.errorf(cptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(e))
			continue
		}
		p.fields(co, cptr, catcherFields, "ErrorEquals", "Next")
		c := &Catcher{Pointer: cptr}
		if ev, ok := co.Get("ErrorEquals"); ok {
			c.ErrorEquals = p.stringList(ev, cptr+"/ErrorEquals")
		}
		c.Next, c.hasNext = p.target(co, "Next", cptr)
		c.ResultPath = p.path(co, "ResultPath", cptr)
		c.Output = field(co, "Output")
		c.Assign = field(co, "Assign")
		p.objectField(c.Assign, cptr+"/Assign")
		c.Comment = p.str(co, "Comment", cptr)
		out = append(out, c)
	}
	return out
}

// Comparison operators of Choice rules.
var operators = func() map[string]bool {
	m := map[string]bool{"StringMatches": true, "IsNull": true, "IsPresent": true, "IsNumeric": true, "IsString": true, "IsBoolean": true, "IsTimestamp": true, "BooleanEquals": true, "BooleanEqualsPath": true}
	for _, t := range []string{"String", "Numeric", "Timestamp"} {
		for _, op := range []string{"Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals"} {
			m[t+op] = true
			m[t+op+"Path"] = true
		}
	}
	return m
}()

func (p *parser) choices(st *State, o *value.Object, ptr string) {
	v, ok := o.Get("Choices")
	if !ok {
		p.errorf(ptr, CodeSchema, "These fields are required: [Choices]")
		return
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Choices", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return
	}
	if len(arr) == 0 {
		p.errorf(ptr+"/Choices", CodeSchema, "There must be at least one choice rule")
	}
	for i, e := range arr {
		r := p.rule(e, fmt.Sprintf("%s/Choices/%d", ptr, i), true, st.QueryLanguage)
		if r != nil {
			st.Choices = append(st.Choices, r)
		}
	}
}

func (p *parser) rule(v any, ptr string, top bool, ql string) *ChoiceRule {
	o, ok := object(v)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(v))
		return nil
	}
	r := &ChoiceRule{Pointer: ptr}
	r.Comment = p.str(o, "Comment", ptr)
	if top {
		r.Next, r.hasNext = p.target(o, "Next", ptr)
		if !o.Has("Next") {
			p.errorf(ptr, CodeSchema, "These fields are required: [Next]")
		}
		r.Output = field(o, "Output")
		r.Assign = field(o, "Assign")
		p.objectField(r.Assign, ptr+"/Assign")
	}
	if ql == JSONata && top {
		r.Condition = field(o, "Condition")
		if !r.Condition.Set {
			p.errorf(ptr, CodeSchema, "These fields are required: [Condition]")
		}
		for _, k := range o.Keys() {
			switch k {
			case "Condition", "Next", "Output", "Assign", "Comment":
			default:
				p.unsupported(ptr, k, jsonataRuleFields)
			}
		}
		return r
	}
	nOps := 0
	for _, k := range o.Keys() {
		switch {
		case k == "Variable":
			r.Variable = p.str(o, k, ptr)
		case k == "And" || k == "Or":
			sub, _ := o.Get(k)
			arr, isArr := sub.([]any)
			if !isArr {
				p.errorf(ptr+"/"+k, CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(sub))
				continue
			}
			nOps++
			if len(arr) == 0 {
				p.errorf(ptr+"/"+k, CodeSchema, "'%s' must have at least one choice rule", k)
			}
			for i, e := range arr {
				sr := p.rule(e, fmt.Sprintf("%s/%s/%d", ptr, k, i), false, ql)
				if sr == nil {
					continue
				}
				if k == "And" {
					r.And = append(r.And, sr)
				} else {
					r.Or = append(r.Or, sr)
				}
			}
		case k == "Not":
			sub, _ := o.Get(k)
			nOps++
			r.Not = p.rule(sub, ptr+"/Not", false, ql)
		case operators[k]:
			nOps++
			r.Operator = k
			r.Operand, _ = o.Get(k)
			p.operand(r, ptr+"/"+k)
		case top && (k == "Next" || k == "Output" || k == "Assign"), k == "Comment":
		default:
			p.unsupported(ptr, k, ruleFields(top))
		}
	}
	switch {
	case nOps == 0:
		p.errorf(ptr, CodeSchema, "A choice rule must have exactly one comparison operator or And, Or, Not")
	case nOps > 1:
		p.errorf(ptr, CodeSchema, "A choice rule must have exactly one comparison operator or And, Or, Not")
	case r.Operator != "" && r.Variable == "":
		p.errorf(ptr, CodeSchema, "These fields are required: [Variable]")
	}
	return r
}

func (p *parser) operand(r *ChoiceRule, ptr string) {
	op, v := r.Operator, r.Operand
	bad := func(want string) {
		p.errorf(ptr, CodeSchema, "Expected value of type '%s' but got '%s'", want, typeName(v))
	}
	switch {
	case strings.HasSuffix(op, "Path"):
		if _, ok := v.(string); !ok {
			bad("String")
		}
	case strings.HasPrefix(op, "Is"), op == "BooleanEquals":
		if _, ok := v.(bool); !ok {
			bad("Boolean")
		}
	case strings.HasPrefix(op, "Numeric"):
		if _, ok := v.(value.Number); !ok {
			bad("Number")
		}
	case strings.HasPrefix(op, "String"):
		if _, ok := v.(string); !ok {
			bad("String")
		}
	case strings.HasPrefix(op, "Timestamp"):
		s, ok := v.(string)
		if !ok {
			bad("String")
		} else if !validTimestamp(s) {
			p.errorf(ptr, CodeSchema, "String does not match RFC3339 timestamp")
		}
	}
}

// jsonataRuleFields are the fields of a JSONata Choice rule.
var jsonataRuleFields = set("Condition", "Next", "Output", "Assign", "Comment")

// ruleFields are the fields a JSONPath Choice rule may have: the
// operators, And, Or, Not, Variable, Comment and, at the top, Next,
// Output and Assign.
func ruleFields(top bool) map[string]bool {
	m := set("Variable", "And", "Or", "Not", "Comment")
	for k := range operators {
		m[k] = true
	}
	if top {
		m["Next"], m["Output"], m["Assign"] = true, true, true
	}
	return m
}
