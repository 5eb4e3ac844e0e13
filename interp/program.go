package interp

import (
	"fmt"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/jsonpath"
)

// Program is a state machine definition compiled for execution: paths,
// templates and intrinsic calls are parsed once. A Program is immutable and
// may be shared by any number of concurrent executions.
type Program struct {
	Def  *asl.StateMachine
	root *machine
}

type machine struct {
	sm      *asl.StateMachine
	states  map[string]*state
	start   *state
	jsonata bool
}

// state is one compiled state.
type state struct {
	*asl.State
	next    *state
	jsonata bool

	inputPath, outputPath *ref // nil: identity
	inputNull, outputNull bool
	resultPath            *jsonpath.Path // nil: $ (replace)
	resultNull            bool           // ResultPath null: discard the result

	parameters, resultSelector, itemSelector, assign *payload
	result                                           any // Pass Result

	retry []*asl.Retrier
	catch []*catcher

	choices []*choice
	deflt   *state

	secondsPath, timestampPath           *ref
	timeoutPath, heartbeatPath           *ref
	errorPath, causePath                 *ref
	itemsPath                            *ref
	maxConcurrencyPath                   *ref
	toleratedCountPath, toleratedPctPath *ref

	branches  []*machine
	processor *machine

	// JSONata-mode fields.
	jx *jsonataFields
}

type catcher struct {
	*asl.Catcher
	next       *state
	resultPath *jsonpath.Path
	resultNull bool
	assign     *payload
}

// Compile compiles a parsed definition.
func Compile(sm *asl.StateMachine) (*Program, error) {
	m, err := compileMachine(sm)
	if err != nil {
		return nil, err
	}
	return &Program{Def: sm, root: m}, nil
}

// CompileError names the state and field that failed to compile.
type CompileError struct {
	Pointer string
	Err     error
}

func (e *CompileError) Error() string { return fmt.Sprintf("%s: %v", e.Pointer, e.Err) }
func (e *CompileError) Unwrap() error { return e.Err }

func compileMachine(sm *asl.StateMachine) (*machine, error) {
	m := &machine{sm: sm, states: make(map[string]*state, len(sm.States)), jsonata: sm.QueryLanguage == asl.JSONata}
	for _, name := range sm.Names {
		m.states[name] = &state{State: sm.States[name]}
	}
	for _, name := range sm.Names {
		if err := m.compileState(m.states[name]); err != nil {
			return nil, err
		}
	}
	m.start = m.states[sm.StartAt]
	if m.start == nil {
		return nil, &CompileError{Pointer: sm.Pointer + "/StartAt", Err: fmt.Errorf("StartAt names a state %q that does not exist", sm.StartAt)}
	}
	return m, nil
}

func (m *machine) target(s *state, field, name string) (*state, error) {
	t := m.states[name]
	if t == nil {
		return nil, &CompileError{Pointer: s.Pointer + "/" + field, Err: fmt.Errorf("Missing 'Next' target: %s", name)}
	}
	return t, nil
}

func (m *machine) compileState(s *state) error {
	fail := func(field string, err error) error {
		return &CompileError{Pointer: s.Pointer + "/" + field, Err: err}
	}
	var err error
	s.jsonata = s.QueryLanguage == asl.JSONata
	if s.Next != "" {
		if s.next, err = m.target(s, "Next", s.Next); err != nil {
			return err
		}
	}
	if s.Default != "" {
		if s.deflt, err = m.target(s, "Default", s.Default); err != nil {
			return err
		}
	}
	for i, c := range s.Catch {
		cc := &catcher{Catcher: c}
		if cc.next, err = m.target(s, fmt.Sprintf("Catch/%d/Next", i), c.Next); err != nil {
			return err
		}
		if !s.jsonata {
			if cc.resultPath, cc.resultNull, err = compileResultPath(c.ResultPath); err != nil {
				return fail(fmt.Sprintf("Catch/%d/ResultPath", i), err)
			}
			if c.Assign.Set {
				if cc.assign, err = compilePayload(c.Assign.Value); err != nil {
					return fail(fmt.Sprintf("Catch/%d/Assign", i), err)
				}
			}
		}
		s.catch = append(s.catch, cc)
	}
	s.retry = s.Retry
	for _, b := range s.Branches {
		bm, err := compileMachine(b)
		if err != nil {
			return err
		}
		s.branches = append(s.branches, bm)
	}
	if s.ItemProcessor != nil {
		if s.processor, err = compileMachine(s.ItemProcessor); err != nil {
			return err
		}
	}
	if s.jsonata {
		if s.jx, err = compileJSONata(s); err != nil {
			return err
		}
		for i, r := range s.Choices {
			c := &choice{rule: r}
			if c.next, err = m.target(s, fmt.Sprintf("Choices/%d/Next", i), r.Next); err != nil {
				return err
			}
			s.choices = append(s.choices, c)
		}
		return nil
	}

	// JSONPath mode.
	if s.inputPath, s.inputNull, err = compileOptRef(s.InputPath); err != nil {
		return fail("InputPath", err)
	}
	if s.outputPath, s.outputNull, err = compileOptRef(s.OutputPath); err != nil {
		return fail("OutputPath", err)
	}
	if s.resultPath, s.resultNull, err = compileResultPath(s.ResultPath); err != nil {
		return fail("ResultPath", err)
	}
	templates := []struct {
		name string
		f    fieldRef
		dst  **payload
	}{
		{"Parameters", s.Parameters.Value, &s.parameters},
		{"ResultSelector", s.ResultSelector.Value, &s.resultSelector},
		{"ItemSelector", s.ItemSelector.Value, &s.itemSelector},
		{"Assign", s.Assign.Value, &s.assign},
	}
	sets := []bool{s.Parameters.Set, s.ResultSelector.Set, s.ItemSelector.Set, s.Assign.Set}
	for i, t := range templates {
		if !sets[i] {
			continue
		}
		if *t.dst, err = compilePayload(t.f); err != nil {
			return fail(t.name, err)
		}
	}
	if s.Result.Set {
		s.result = s.Result.Value
	}
	paths := []struct {
		name string
		text string
		dst  **ref
	}{
		{"SecondsPath", s.SecondsPath, &s.secondsPath},
		{"TimestampPath", s.TimestampPath, &s.timestampPath},
		{"TimeoutSecondsPath", s.TimeoutSecondsPath, &s.timeoutPath},
		{"HeartbeatSecondsPath", s.HeartbeatSecondsPath, &s.heartbeatPath},
		{"ErrorPath", s.ErrorPath, &s.errorPath},
		{"CausePath", s.CausePath, &s.causePath},
		{"MaxConcurrencyPath", s.MaxConcurrencyPath, &s.maxConcurrencyPath},
		{"ToleratedFailureCountPath", s.ToleratedFailureCountPath, &s.toleratedCountPath},
		{"ToleratedFailurePercentagePath", s.ToleratedFailurePercentagePath, &s.toleratedPctPath},
	}
	for _, p := range paths {
		if p.text == "" {
			continue
		}
		if *p.dst, err = compileRefOrCall(p.text); err != nil {
			return fail(p.name, err)
		}
	}
	if s.ItemsPath.Set && !s.ItemsPath.Null {
		if s.itemsPath, err = compileRef(s.ItemsPath.Path); err != nil {
			return fail("ItemsPath", err)
		}
	}
	for i, r := range s.Choices {
		c, err := compileChoice(r, true)
		if err != nil {
			return fail(fmt.Sprintf("Choices/%d", i), err)
		}
		if c.next, err = m.target(s, fmt.Sprintf("Choices/%d/Next", i), r.Next); err != nil {
			return err
		}
		if r.Assign.Set {
			if c.assign, err = compilePayload(r.Assign.Value); err != nil {
				return fail(fmt.Sprintf("Choices/%d/Assign", i), err)
			}
		}
		s.choices = append(s.choices, c)
	}
	return nil
}

type fieldRef = any

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
