package interp

import (
	"fmt"
	"sync/atomic"

	"github.com/stepd/stepd/asl"
)

// Program is a state machine definition compiled for execution: paths,
// templates and intrinsic calls are parsed once. A Program is immutable (but for a sizing hint) and
// may be shared by any number of concurrent executions.
type Program struct {
	Def  *asl.StateMachine
	root *machine
	// tasks counts the Task states, nested ones included; each has an
	// index below it (state.task) for per-execution counters.
	tasks int
	// histLen is the length of the history of the execution that ended
	// last (at most maxHistHint): the next execution starts its event
	// list with that capacity instead of growing it by doubling. A sizing
	// hint only; nothing an execution does depends on it.
	histLen atomic.Int32
}

// maxHistHint bounds Program.histLen: an execution with a long history
// does not make every later one start with a large list.
const maxHistHint = 1 << 15

type machine struct {
	sm     *asl.StateMachine
	states map[string]*state
	start  *state
}

// state is one compiled state: its transitions, its children and the
// evaluator of its query language.
type state struct {
	*asl.State
	next *state
	ev   evaluator

	retry      []*asl.Retrier
	catch      []*catcher
	choiceNext []*state // per Choice rule
	deflt      *state

	branches  []*machine
	processor *machine

	enteredEvent, exitedEvent string // "PassStateEntered", ...
	// name and resource are Name and Resource as values for event
	// details, boxed once rather than for every event.
	name, resource any
	// A Task's resource, parsed once: what its events name, and its
	// integration pattern.
	rinfo    resourceInfo
	lambdaFn bool
	task     int // the index of a Task state in its Program
}

type catcher struct {
	*asl.Catcher
	next *state
}

// Compile compiles a parsed definition.
func Compile(sm *asl.StateMachine) (*Program, error) {
	m, err := compileMachine(sm)
	if err != nil {
		return nil, err
	}
	p := &Program{Def: sm, root: m}
	p.numberTasks(m)
	return p, nil
}

// numberTasks gives each Task state of m and its nested machines an index.
func (p *Program) numberTasks(m *machine) {
	for _, name := range m.sm.Names {
		s := m.states[name]
		if s.Type == "Task" {
			s.task = p.tasks
			p.tasks++
		}
		for _, b := range s.branches {
			p.numberTasks(b)
		}
		if s.processor != nil {
			p.numberTasks(s.processor)
		}
	}
}

// CompileError names the state and field that failed to compile.
type CompileError struct {
	Pointer string
	Err     error
}

func (e *CompileError) Error() string { return fmt.Sprintf("%s: %v", e.Pointer, e.Err) }
func (e *CompileError) Unwrap() error { return e.Err }

func compileMachine(sm *asl.StateMachine) (*machine, error) {
	m := &machine{sm: sm, states: make(map[string]*state, len(sm.States))}
	for _, name := range sm.Names {
		st := sm.States[name]
		s := &state{State: st, enteredEvent: st.Type + "StateEntered", exitedEvent: st.Type + "StateExited", name: st.Name, resource: st.Resource}
		if st.Type == "Task" {
			s.rinfo, s.lambdaFn = parseResource(st.Resource)
		}
		m.states[name] = s
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
		//lint:ignore ST1005 AWS's wording (asl reports the same)
		return nil, &CompileError{Pointer: s.Pointer + "/" + field, Err: fmt.Errorf("Missing 'Next' target: %s", name)}
	}
	return t, nil
}

func (m *machine) compileState(s *state) error {
	var err error
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
	if s.QueryLanguage == asl.JSONata {
		if s.ev, err = compileJSONata(s); err != nil {
			return err
		}
	} else if s.ev, err = compileJSONPath(s); err != nil {
		return err
	}
	for i, r := range s.Choices {
		next, err := m.target(s, fmt.Sprintf("Choices/%d/Next", i), r.Next)
		if err != nil {
			return err
		}
		s.choiceNext = append(s.choiceNext, next)
	}
	return nil
}
