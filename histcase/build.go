package histcase

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/value"
)

// Options are what a case needs besides the history.
type Options struct {
	// Definition is the state machine's definition as recorded: a JSON
	// value, or DefinitionText when it is not JSON. One is required.
	Definition     any
	DefinitionText string
	// DefinitionFile, when set, is written as the case's definitionFile
	// (relative to the case file) instead of the definition itself.
	DefinitionFile string
	// ExecutionArn names the recorded execution: the case runs with its
	// state machine's and execution's names, so that the Context object
	// holds them. Optional.
	ExecutionArn string
	// Name is the case's name ("" for none: the file's name is used).
	Name string
	// Type is STANDARD (the default) or EXPRESS.
	Type string
	// Children are the histories of the child executions of the
	// execution's Distributed Map states, when they are available.
	Children []*History
	// MissingChildren says which child executions' histories could not
	// be had, and why (an Express child keeps none): one line each.
	MissingChildren []string
}

// Result is a generated case.
type Result struct {
	// Case is the case file's JSON object.
	Case *value.Object
	// Notes list what could not be replayed exactly and what was done
	// about it (also in the case, as "notes").
	Notes []string
	// Reproduced reports whether the case, run by stepd test's
	// machinery, gives the expected outcome; Diffs says how it does not.
	Reproduced bool
	Diffs      []conformance.Diff
}

// notes collects the notes of a generation, each once, in order.
type notes struct {
	list []string
	// randomNumbers is set when the definition draws numbers a replay
	// cannot reproduce (random numbers, the time in milliseconds).
	randomNumbers bool
}

func (n *notes) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(n.list, s) {
		n.list = append(n.list, s)
	}
}

// The account and region stepd test runs cases in.
const (
	caseAccount = conformance.Account
	caseRegion  = conformance.Region
)

// Build turns a recorded execution history into a stepd test case: the
// definition and the execution's input; inline mocks (Step Functions
// Local's TestCase and MockedResponses) giving each Task state its
// recorded responses in the order a replay asks for them; and the
// recorded status, output, error and cause as expected. It replays the
// execution once on stepd's engine with the recorded responses to learn
// that order, and once more as stepd test runs the case, to say whether
// the case reproduces the recording.
func Build(ctx context.Context, h *History, o Options) (*Result, error) {
	if h == nil {
		return nil, errors.New("no history")
	}
	if o.Definition == nil && o.DefinitionText == "" {
		return nil, errors.New("no definition: give the state machine's definition (a file, or fetched from the server with DescribeStateMachineForExecution)")
	}
	var sm *asl.StateMachine
	var err error
	if o.Definition != nil {
		sm, err = asl.FromValue(o.Definition)
	} else {
		sm, err = asl.Parse([]byte(o.DefinitionText))
	}
	if err != nil {
		return nil, fmt.Errorf("the definition: %w", err)
	}
	typ := o.Type
	if typ == "" {
		typ = "STANDARD"
	}
	if typ != "STANDARD" && typ != "EXPRESS" {
		return nil, fmt.Errorf("type must be STANDARD or EXPRESS, not %q", typ)
	}
	end, err := ending(h)
	if err != nil {
		return nil, err
	}
	input, role, err := startInput(h)
	if err != nil {
		return nil, err
	}
	n := &notes{}
	ivs, err := invocations(h, "")
	if err != nil {
		return nil, err
	}
	for i, c := range o.Children {
		cv, err := invocations(c, fmt.Sprintf("child execution %d", i+1))
		if err != nil {
			return nil, fmt.Errorf("child execution %d: %w", i+1, err)
		}
		ivs = append(ivs, cv...)
	}
	run, scope, err := runOf(o, h, role, n)
	if err != nil {
		return nil, err
	}
	def := o.Definition
	if def == nil {
		def = o.DefinitionText
	}
	scanDefinition(def, n)
	noteHistory(h, o, end, n)

	rep := newReplayer(ivs, n)
	x, err := (&engine.Local{Region: caseRegion, Account: caseAccount, Config: engine.Config{Invoker: rep}}).
		Run(ctx, sm, engine.Execution{StateMachineName: run.sm, Name: run.exec, RoleArn: run.role, Input: input, Express: typ == "EXPRESS"})
	if err != nil {
		return nil, fmt.Errorf("replaying the execution: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	got := conformance.OutcomeOf(x)
	noteUnused(ivs, n)

	c := value.NewObject(12)
	if o.Name != "" {
		c.Set("name", o.Name)
	}
	c.Set("kind", "execution")
	c.Set("type", typ)
	if o.DefinitionFile != "" {
		c.Set("definitionFile", o.DefinitionFile)
	} else if o.Definition != nil {
		c.Set("definition", o.Definition)
	} else {
		c.Set("definitionString", o.DefinitionText)
	}
	c.Set("input", input)
	if m := rep.mocks(); m != nil {
		c.Set("mocks", m)
	}
	c.Set("expected", expectedOf(end, got, scope, n))
	runObj := value.ObjectOf("stateMachineName", run.sm, "executionName", run.exec)
	if run.role != "" {
		runObj.Set("roleArn", run.role)
	}
	c.Set("run", runObj)

	res := &Result{Case: c}
	vc, err := conformance.FromValue(c, orDefault(o.Name, "generated"))
	if err != nil {
		return nil, fmt.Errorf("the generated case: %w", err)
	}
	if o.Definition == nil {
		vc.DefinitionString = o.DefinitionText
	} else {
		vc.Definition = o.Definition
	}
	r := conformance.Check(ctx, vc)
	switch {
	case r.Err != nil:
		n.add("the case does not run on stepd: %v", r.Err)
	case !r.OutcomeOK:
		res.Diffs = r.OutcomeErr
		for _, d := range r.OutcomeErr {
			n.add("the replay on stepd does not reproduce the recorded %s (the case expects what was recorded): %s", d.Where, oneLine(d.String()))
		}
	default:
		res.Reproduced = true
	}
	res.Notes = n.list
	if len(n.list) > 0 {
		arr := make([]any, len(n.list))
		for i, s := range n.list {
			arr[i] = s
		}
		c.Set("notes", arr)
	}
	return res, nil
}

// noteUnused notes, per state, the recorded invocations the replay did
// not ask for.
func noteUnused(ivs []*invocation, n *notes) {
	unused := map[string][]*invocation{}
	var states []string
	for _, iv := range ivs {
		if iv.used || iv.end == nil {
			continue
		}
		if _, ok := unused[iv.state]; !ok {
			states = append(states, iv.state)
		}
		unused[iv.state] = append(unused[iv.state], iv)
	}
	for _, st := range states {
		list := unused[st]
		if len(list) == 1 {
			n.add("%s was recorded but the replay did not ask for it: the replay took another path (see the differences below, if any)", list[0].what())
			continue
		}
		n.add("%d recorded invocations of %s, the first at %s, were not asked for by the replay: it took another path (see the differences below, if any)", len(list), orDefault(st, "a Task state the history does not name"), list[0].scheduled)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n\t", "; ")), " ")
}

// runNames are the names a case runs with.
type runNames struct{ sm, exec, role string }

// runOf takes the names of the execution from its ARN when given, and
// the account and region it ran in from the ARN or its role.
func runOf(o Options, h *History, role string, n *notes) (runNames, arn.Scope, error) {
	r := runNames{sm: "stepd_test", exec: "replay", role: role}
	var scope arn.Scope
	if o.ExecutionArn != "" {
		a, err := arn.Parse(o.ExecutionArn)
		if err != nil || !a.IsExecution() || len(a.Names) < 2 {
			return r, scope, fmt.Errorf("execution ARN %q: not the ARN of an execution (arn:aws:states:REGION:ACCOUNT:execution:STATE_MACHINE:NAME)", o.ExecutionArn)
		}
		r.sm, r.exec = a.Names[0], a.Names[1]
		scope = a.Scope()
	} else {
		n.add("the execution's ARN was not given: the case runs it as execution %q of state machine %q, so values made of the Context object's names (the execution's name and ARN) differ from the recording", r.exec, r.sm)
	}
	if scope.Account == "" {
		if a, err := arn.Parse(role); err == nil {
			scope.Account = a.Account
		}
	}
	if scope.Region == "" {
		for _, e := range h.Events {
			if reg := e.Str("region"); e.Type == "TaskScheduled" && reg != "" {
				scope.Region = reg
				break
			}
		}
	}
	return r, scope, nil
}

// noteHistory notes what of the recorded execution a case cannot replay
// as it happened.
func noteHistory(h *History, o Options, end *terminal, n *notes) {
	maps := 0
	for _, e := range h.Events {
		for _, k := range []string{"inputDetails", "outputDetails", "assignedVariablesDetails"} {
			if d, ok := e.Details.Get(k); ok {
				if t, _ := value.AsObject(d).Get("truncated"); t == true {
					n.add("%s: its %s is marked truncated: the case holds what the history gave, which is not the whole value", e, strings.TrimSuffix(k, "Details"))
				}
			}
		}
		switch e.Type {
		case "MapRunStarted":
			maps++
			if len(o.Children) == 0 && len(o.MissingChildren) == 0 {
				n.add("a Distributed Map ran a Map Run (%s): its child executions' histories were not given, so the Task states of its ItemProcessor have no recorded responses (give them with --child, or fetch them with --endpoint)", e)
			}
		case "ExecutionRedriven":
			n.add("the execution was redriven (%s): the case runs it once, from the start, with the responses of every run in order", e)
		}
	}
	for _, m := range o.MissingChildren {
		n.add("a Distributed Map's child history is missing, so its Task states' answers are not in the case: %s", m)
	}
	if end.status == "ABORTED" {
		n.add("the execution was stopped (%s): a case cannot stop its execution, so the replay runs on past that point and the expected ABORTED status cannot be reproduced", end.event)
	}
	if maps > 0 && usesItemReader(o.Definition) {
		n.add("a Distributed Map reads its items with an ItemReader: a history does not record what it read, so the case cannot serve the read (give the Map a mock for its S3 call, or put the items in the input with ItemsPath)")
	}
}

func usesItemReader(def any) bool {
	found := false
	walk(def, func(k string, _ any) {
		if k == "ItemReader" {
			found = true
		}
	})
	return found
}

// walk calls f for every member of every object in v.
func walk(v any, f func(k string, v any)) {
	switch v := v.(type) {
	case *value.Object:
		for k, e := range v.All {
			f(k, e)
			walk(e, f)
		}
	case []any:
		for _, e := range v {
			walk(e, f)
		}
	}
}

// source is a value a definition draws that a replay cannot reproduce.
type source struct {
	re      *regexp.Regexp
	what    string
	numbers bool // it draws numbers
}

var sources = []source{
	{regexp.MustCompile(`States\.UUID\(|\$uuid\(`), "a random UUID", false},
	{regexp.MustCompile(`States\.MathRandom\(|\$random\(`), "a random number", true},
	{regexp.MustCompile(`\$now\(|\$millis\(`), "the current time", true},
	{regexp.MustCompile(`StartTime|EnteredTime|RedriveTime`), "a time of the Context object", false},
	{regexp.MustCompile(`Task\.Token`), "the task token", false},
}

// scanDefinition notes the states that draw values a replay cannot
// reproduce.
func scanDefinition(def any, n *notes) {
	forEachState(def, func(name string, st *value.Object) {
		text := stateText(st)
		for _, s := range sources {
			if s.re.MatchString(text) {
				if s.numbers {
					n.randomNumbers = true
				}
				n.add("state %s uses %s: the replay draws its own, so a task's parameters made of it do not match the recording (its responses are given in recorded order), and the output's values made of it are matched by a wildcard where they differ", name, s.what)
			}
		}
		if t, _ := st.Get("Type"); t == "Wait" && (st.Has("Timestamp") || st.Has("TimestampPath")) {
			n.add("Wait state %s waits until a time: stepd test's clock is virtual, so the wait takes no real time", name)
		}
	})
}

// forEachState calls f for every state of a definition, nested ones
// included.
func forEachState(def any, f func(name string, st *value.Object)) {
	o, _ := def.(*value.Object)
	sv, _ := o.Get("States")
	states, _ := sv.(*value.Object)
	for name, s := range states.All {
		st, ok := s.(*value.Object)
		if !ok {
			continue
		}
		f(name, st)
		for _, k := range []string{"Iterator", "ItemProcessor"} {
			if sub, ok := st.Get(k); ok {
				forEachState(sub, f)
			}
		}
		if bv, ok := st.Get("Branches"); ok {
			bs, _ := bv.([]any)
			for _, b := range bs {
				forEachState(b, f)
			}
		}
	}
}

// stateText is a state's JSON text without its nested states.
func stateText(st *value.Object) string {
	flat := value.NewObject(st.Len())
	for k, v := range st.All {
		if k != "Iterator" && k != "ItemProcessor" && k != "Branches" {
			flat.Set(k, v)
		}
	}
	return value.String(flat)
}
