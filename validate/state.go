package validate

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/jsonata"
	"github.com/stepd/stepd/jsonpath"
	"github.com/stepd/stepd/value"
)

// state checks one state.
func (c *checker) state(st *asl.State) {
	if len(st.Name) == 0 {
		c.errorf(st.Pointer, asl.CodeInvalidName, "State names must not be empty")
	}
	if st.Type == "Task" {
		c.resource(st)
	}
	c.retriers(st)
	c.catchers(st)
	if st.QueryLanguage == asl.JSONata {
		c.jsonataState(st)
	} else {
		c.jsonPathState(st)
	}
	if st.Type == "Choice" && st.Default == "" {
		c.warnf(st.Pointer, "MISSING_DEFAULT", "Choice state %q has no Default: an input that matches no rule fails the execution with States.NoChoiceMatched", st.Name)
	}
}

// errorEquals checks the ErrorEquals rules shared by Retry and Catch:
// States.ALL must be alone in its list and in the last element.
func (c *checker) errorEquals(ptr string, list []string, last bool) {
	if len(list) == 0 {
		c.errorf(ptr+"/ErrorEquals", asl.CodeSchema, "ErrorEquals must name at least one error")
	}
	for _, e := range list {
		if e != "States.ALL" {
			continue
		}
		if len(list) > 1 {
			c.errorf(ptr+"/ErrorEquals", asl.CodeSchema, "States.ALL must appear alone in ErrorEquals")
		}
		if !last {
			c.errorf(ptr+"/ErrorEquals", asl.CodeSchema, "States.ALL must appear only in the last element")
		}
	}
}

func (c *checker) retriers(st *asl.State) {
	for i, r := range st.Retry {
		c.errorEquals(r.Pointer, r.ErrorEquals, i == len(st.Retry)-1)
		if r.MaxAttempts > 99999999 {
			c.errorf(r.Pointer+"/MaxAttempts", asl.CodeSchema, "MaxAttempts must be at most 99999999")
		}
		if r.IntervalSeconds > 99999999 {
			c.errorf(r.Pointer+"/IntervalSeconds", asl.CodeSchema, "IntervalSeconds must be at most 99999999")
		}
	}
}

func (c *checker) catchers(st *asl.State) {
	for i, k := range st.Catch {
		c.errorEquals(k.Pointer, k.ErrorEquals, i == len(st.Catch)-1)
		if st.QueryLanguage == asl.JSONata {
			if k.ResultPath.Set {
				c.errorf(k.Pointer+"/ResultPath", asl.CodeSchema, "The field 'ResultPath' is not supported in JSONata query language")
			}
			c.template(k.Pointer+"/Output", k.Output)
			c.template(k.Pointer+"/Assign", k.Assign)
		} else {
			if k.Output.Set {
				c.errorf(k.Pointer+"/Output", asl.CodeSchema, "The field 'Output' is not supported in JSONPath query language")
			}
			c.refPath(k.Pointer+"/ResultPath", k.ResultPath)
			c.payload(k.Pointer+"/Assign", k.Assign)
		}
	}
}

// Optimized integrations AWS recognises, by service: the actions it accepts.
// A service not listed here is not checked.
var integrations = map[string][]string{
	"lambda":   {"invoke"},
	"dynamodb": {"getItem", "putItem", "deleteItem", "updateItem"},
	"sqs":      {"sendMessage"},
	"sns":      {"publish"},
	"events":   {"putEvents"},
	"states":   {"startExecution"},
	"http":     {"invoke"},
}

var patterns = []string{".sync:2", ".sync", ".waitForTaskToken"}

func (c *checker) resource(st *asl.State) {
	res := st.Resource
	ptr := st.Pointer + "/Resource"
	if strings.HasPrefix(res, "{%") {
		return
	}
	pattern := ""
	for _, p := range patterns {
		if strings.HasSuffix(res, p) {
			pattern = p
			break
		}
	}
	if c.typ == Express && strings.HasPrefix(pattern, ".sync") {
		c.errorf(ptr, asl.CodeSchema, "Express state machine does not support '.sync' service integration")
	}
	if c.typ == Express && pattern == ".waitForTaskToken" {
		// The trailing space is AWS's (recorded: "integration  at /States/…").
		c.errorf(ptr, asl.CodeSchema, "Express state machine does not support '.waitForTaskToken' service integration ")
	}
	if c.typ == Express && isActivityARN(res) {
		c.errorf(ptr, asl.CodeSchema, "Express state machine does not support Activity ARN")
	}
	if pattern == ".waitForTaskToken" && !st.TimeoutSeconds.Set && st.TimeoutSecondsPath == "" && !st.HeartbeatSeconds.Set && st.HeartbeatSecondsPath == "" {
		c.warnf(st.Pointer, "MISSING_TIMEOUT", "Task %q waits for a callback but has no TimeoutSeconds or HeartbeatSeconds: a lost token leaves the execution waiting for up to a year", st.Name)
	}
	const prefix = "arn:aws:states:::"
	if !strings.HasPrefix(res, prefix) {
		return
	}
	rest := strings.TrimSuffix(res[len(prefix):], pattern)
	svc, action, _ := strings.Cut(rest, ":")
	actions, known := integrations[svc]
	if !known {
		return
	}
	for _, a := range actions {
		if a == action {
			if svc == "http" {
				c.httpConnection(st)
			}
			return
		}
	}
	c.errorf(ptr, asl.CodeSchema, "The resource provided %s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", res)
}

// httpConnection checks that an HTTP Task names its EventBridge
// connection: AWS refuses one without Authentication.ConnectionArn (or
// stepd's InvocationConfig.ConnectionArn) when it is created, in the words
// of its other missing fields ("The field 'RoleArn' is required but was
// missing", a recorded case). A JSONata expression standing for the whole
// Arguments, or for the connection, is checked when it runs.
func (c *checker) httpConnection(st *asl.State) {
	member, f := "Parameters", st.Parameters
	if st.QueryLanguage == "JSONata" {
		member, f = "Arguments", st.Arguments
	}
	if !f.Set {
		c.errorf(st.Pointer, asl.CodeSchema, "The field '%s' is required but was missing", member)
		return
	}
	args, ok := f.Value.(*value.Object)
	if !ok {
		return // an expression, evaluated when the task runs
	}
	ptr := st.Pointer + "/" + member
	for _, name := range []string{"Authentication", "InvocationConfig"} {
		if _, ok := args.Get(name + ".$"); ok {
			return
		}
		v, ok := args.Get(name)
		if !ok {
			continue
		}
		conn, ok := v.(*value.Object)
		if !ok {
			return // a JSONata expression, or a type the task refuses when it runs
		}
		_, arn := conn.Get("ConnectionArn")
		_, arnPath := conn.Get("ConnectionArn.$")
		if !arn && !arnPath {
			c.errorf(ptr+"/"+name, asl.CodeSchema, "The field 'ConnectionArn' is required but was missing")
		}
		return
	}
	c.errorf(ptr, asl.CodeSchema, "The field 'Authentication' is required but was missing")
}

// path checks a JSONPath (or $variable, or intrinsic function where allowed).
func (c *checker) path(ptr, text string, calls bool) {
	if text == "" {
		return
	}
	if calls && intrinsic.IsCall(text) {
		call, err := intrinsic.Parse(text)
		if err == nil {
			err = call.EscapeError()
		}
		if err != nil {
			c.errorErr(ptr, err, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call: %v", lastSegment(ptr), err)
		}
		return
	}
	if _, err := jsonpath.Compile(stripVariable(text)); err != nil {
		c.errorErr(ptr, err, "The value for the field '%s' must be a valid JSONPath: %v", lastSegment(ptr), err)
	}
}

// stripVariable turns "$var.a" into "$.a" for syntax checks.
func stripVariable(text string) string {
	if len(text) > 1 && text[0] == '$' && text[1] != '$' && text[1] != '.' && text[1] != '[' {
		end := 1
		for end < len(text) && text[end] != '.' && text[end] != '[' {
			end++
		}
		return "$" + text[end:]
	}
	return text
}

func lastSegment(ptr string) string {
	return ptr[strings.LastIndexByte(ptr, '/')+1:]
}

func (c *checker) refPath(ptr string, f asl.PathField) {
	if !f.Set || f.Null {
		return
	}
	if _, err := jsonpath.CompileReference(f.Path); err != nil {
		c.errorErr(ptr, err, "The value for the field '%s' must be a valid reference path: %v", lastSegment(ptr), err)
	}
}

func (c *checker) optPath(ptr string, f asl.PathField) {
	if f.Set && !f.Null {
		c.path(ptr, f.Path, false)
	}
}

// payload checks a JSONPath-mode payload template: every "x.$" member
// holds a path or an intrinsic function; a string that looks like one in a
// plain member gets the NO_DOLLAR warning.
func (c *checker) payload(ptr string, f asl.Field) {
	if f.Set {
		c.payloadValue(ptr, f.Value)
	}
}

func (c *checker) payloadValue(ptr string, v any) {
	switch x := v.(type) {
	case *value.Object:
		for k, e := range x.All {
			kp := ptr + "/" + k
			if strings.HasSuffix(k, ".$") {
				s, ok := e.(string)
				if !ok {
					c.errorf(kp, asl.CodeSchema, "The value for the field '%s' must be a STRING that contains a JSONPath or an intrinsic function", k)
					continue
				}
				c.path(kp, s, true)
				continue
			}
			if s, ok := e.(string); ok && (strings.HasPrefix(s, "$.") || strings.HasPrefix(s, "$$.") || intrinsic.IsCall(s)) {
				c.warnf(kp, "NO_DOLLAR", "The value of the field '%s' looks like a JSONPath or an intrinsic function, but the field name does not end with '.$'", k)
			}
			c.payloadValue(kp, e)
		}
	case []any:
		for i, e := range x {
			c.payloadValue(fmt.Sprintf("%s/%d", ptr, i), e)
		}
	}
}

func (c *checker) jsonPathState(st *asl.State) {
	p := st.Pointer
	c.optPath(p+"/InputPath", st.InputPath)
	c.optPath(p+"/OutputPath", st.OutputPath)
	c.refPath(p+"/ResultPath", st.ResultPath)
	c.optPath(p+"/ItemsPath", st.ItemsPath)
	c.payload(p+"/Parameters", st.Parameters)
	c.payload(p+"/ResultSelector", st.ResultSelector)
	c.payload(p+"/ItemSelector", st.ItemSelector)
	c.payload(p+"/Assign", st.Assign)
	for _, f := range []struct{ name, text string }{
		{"TimeoutSecondsPath", st.TimeoutSecondsPath}, {"HeartbeatSecondsPath", st.HeartbeatSecondsPath},
		{"SecondsPath", st.SecondsPath}, {"TimestampPath", st.TimestampPath},
		{"MaxConcurrencyPath", st.MaxConcurrencyPath}, {"ToleratedFailureCountPath", st.ToleratedFailureCountPath},
		{"ToleratedFailurePercentagePath", st.ToleratedFailurePercentagePath},
	} {
		c.path(p+"/"+f.name, f.text, false)
	}
	c.path(p+"/ErrorPath", st.ErrorPath, true)
	c.path(p+"/CausePath", st.CausePath, true)
	if b := st.Batcher; b != nil {
		c.path(b.Pointer+"/MaxItemsPerBatchPath", b.MaxItemsPerBatchPath, false)
		c.path(b.Pointer+"/MaxInputBytesPerBatchPath", b.MaxInputBytesPerBatchPath, false)
		c.payload(b.Pointer+"/BatchInput", b.BatchInput)
	}
	if w := st.Writer; w != nil {
		c.payload(w.Pointer+"/Parameters", w.Parameters)
	}
	if r := st.Reader; r != nil {
		c.payload(r.Pointer+"/Parameters", r.Parameters)
		c.path(r.Pointer+"/ReaderConfig/MaxItemsPath", r.MaxItemsPath, false)
	}
	if st.Type == "Pass" && st.Result.Set {
		if o, ok := st.Result.Value.(*value.Object); ok {
			for k := range o.All {
				if strings.HasSuffix(k, ".$") {
					c.warnf(p+"/Result/"+k, "PASS_RESULT_IS_STATIC", "The Result of a Pass state is static: the path in '%s' is not evaluated (use Parameters)", k)
				}
			}
		}
	}
	for i, r := range st.Choices {
		c.rule(fmt.Sprintf("%s/Choices/%d", p, i), r)
	}
}

func (c *checker) rule(ptr string, r *asl.ChoiceRule) {
	for i, s := range r.And {
		c.rule(fmt.Sprintf("%s/And/%d", ptr, i), s)
	}
	for i, s := range r.Or {
		c.rule(fmt.Sprintf("%s/Or/%d", ptr, i), s)
	}
	if r.Not != nil {
		c.rule(ptr+"/Not", r.Not)
	}
	if r.Variable != "" {
		c.path(ptr+"/Variable", r.Variable, false)
	}
	if strings.HasSuffix(r.Operator, "Path") {
		if s, ok := r.Operand.(string); ok {
			c.path(ptr+"/"+r.Operator, s, false)
		}
	}
	c.payload(ptr+"/Assign", r.Assign)
}

func (c *checker) template(ptr string, f asl.Field) {
	if !f.Set {
		return
	}
	if _, err := jsonata.ParseTemplate(f.Value); err != nil {
		c.errorErr(ptr, err, "%v", err)
	}
}

func (c *checker) jsonataState(st *asl.State) {
	p := st.Pointer
	for _, f := range []struct {
		name  string
		field asl.Field
	}{
		{"Arguments", st.Arguments}, {"Output", st.Output}, {"Assign", st.Assign}, {"Items", st.Items},
		{"ItemSelector", st.ItemSelector}, {"MaxConcurrency", st.MaxConcurrency},
		{"ToleratedFailureCount", st.ToleratedFailureCount}, {"ToleratedFailurePercentage", st.ToleratedFailurePercentage},
		{"TimeoutSeconds", st.TimeoutSeconds}, {"HeartbeatSeconds", st.HeartbeatSeconds},
		{"Seconds", st.Seconds}, {"Timestamp", st.Timestamp}, {"Error", st.Error}, {"Cause", st.Cause},
	} {
		c.template(p+"/"+f.name, f.field)
	}
	if b := st.Batcher; b != nil {
		c.template(b.Pointer+"/MaxItemsPerBatch", b.MaxItemsPerBatch)
		c.template(b.Pointer+"/MaxInputBytesPerBatch", b.MaxInputBytesPerBatch)
		c.template(b.Pointer+"/BatchInput", b.BatchInput)
	}
	if w := st.Writer; w != nil {
		c.template(w.Pointer+"/Arguments", w.Parameters)
	}
	if r := st.Reader; r != nil {
		c.template(r.Pointer+"/Arguments", r.Parameters)
		c.template(r.Pointer+"/ReaderConfig/MaxItems", r.MaxItems)
	}
	for i, r := range st.Choices {
		rp := fmt.Sprintf("%s/Choices/%d", p, i)
		c.template(rp+"/Condition", r.Condition)
		c.template(rp+"/Output", r.Output)
		c.template(rp+"/Assign", r.Assign)
	}
}

// isActivityARN reports whether a Task's Resource names an activity:
// arn:PARTITION:states:REGION:ACCOUNT:activity:NAME.
func isActivityARN(res string) bool {
	parts := strings.SplitN(res, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[2] == "states" && parts[5] == "activity"
}
