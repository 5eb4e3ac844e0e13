// Package memory is an in-memory store.Store, for Express workflows, tests
// and `stepd serve --data ""`. Nothing survives the process.
//
// It imports only store and store/internal/codec, and must not import the
// other backends, the engine or anything above (the service imports it).
package memory

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/stepd/stepd/store"
)

// Store is an in-memory store. The zero value is not usable; call New.
type Store struct {
	mu        sync.RWMutex
	machines  map[string]*store.StateMachine
	execs     map[string]*execution
	order     []*execution // creation order
	acts      map[string]*store.Activity
	secret    []byte
	schedules // store.Schedules (schedule.go)

	// keep bounds the finished executions kept (0: all); finished holds
	// them oldest first from head, and dropped counts the evicted ones
	// still in order.
	keep     int
	finished []*execution
	head     int
	dropped  int

	v       versions // versions, aliases, execution references, settings (version.go)
	notices          // the outbox, store.Outbox (outbox.go)
	runs    mapRuns  // Map Runs, child executions, redrives (maprun.go)
}

type execution struct {
	e     store.Execution
	steps []*store.Step
	seq   int  // creation sequence, for ordering
	gone  bool // evicted (see NewBounded)
}

// New returns an empty store.
func New() *Store {
	return &Store{machines: map[string]*store.StateMachine{}, execs: map[string]*execution{}, acts: map[string]*store.Activity{}}
}

// NewBounded returns an empty store that keeps at most keep finished
// executions: once an execution ends, the oldest finished one beyond the
// limit is forgotten with its history. Running executions are always
// kept. The service keeps Express executions in one, so that a server
// under a sustained Express load does not grow (AWS keeps no Express
// history at all).
func NewBounded(keep int) *Store {
	s := New()
	s.keep = max(keep, 1)
	return s
}

var _ store.Store = (*Store)(nil)

// ended records that x has finished and forgets the oldest finished
// executions beyond the limit. s.mu is held.
func (s *Store) ended(x *execution) {
	if s.keep == 0 {
		return
	}
	s.finished = append(s.finished, x)
	for len(s.finished)-s.head > s.keep {
		old := s.finished[s.head]
		s.finished[s.head] = nil
		s.head++
		if old.gone { // deleted already (DeleteEnded)
			continue
		}
		delete(s.execs, old.e.ARN)
		old.gone, old.steps = true, nil
		s.dropped++
	}
	if s.head > 1024 && s.head > len(s.finished)/2 {
		s.finished = append([]*execution(nil), s.finished[s.head:]...)
		s.head = 0
	}
	if s.dropped > 1024 && s.dropped > len(s.order)/2 {
		kept := make([]*execution, 0, len(s.order)-s.dropped)
		for _, x := range s.order {
			if !x.gone {
				kept = append(kept, x)
			}
		}
		s.order, s.dropped = kept, 0
	}
}

func cloneSM(sm *store.StateMachine) *store.StateMachine {
	c := *sm
	if sm.Tags != nil {
		c.Tags = make(map[string]string, len(sm.Tags))
		for k, v := range sm.Tags {
			c.Tags[k] = v
		}
	}
	return &c
}

// CreateStateMachine implements store.Store.
func (s *Store) CreateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.machines[sm.ARN]; ok {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrExists)
	}
	s.machines[sm.ARN] = cloneSM(sm)
	return nil
}

// UpdateStateMachine implements store.Store.
func (s *Store) UpdateStateMachine(ctx context.Context, sm *store.StateMachine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.machines[sm.ARN]; !ok {
		return fmt.Errorf("state machine %s: %w", sm.ARN, store.ErrNotFound)
	}
	s.machines[sm.ARN] = cloneSM(sm)
	return nil
}

// GetStateMachine implements store.Store.
func (s *Store) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sm, ok := s.machines[arn]
	if !ok {
		return nil, fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	return cloneSM(sm), nil
}

// DeleteStateMachine implements store.Store.
func (s *Store) DeleteStateMachine(ctx context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.machines[arn]; !ok {
		return fmt.Errorf("state machine %s: %w", arn, store.ErrNotFound)
	}
	delete(s.machines, arn)
	return nil
}

// page cuts a list at an offset token.
func page[T any](list []T, p store.Page) ([]T, string, error) {
	off := 0
	if p.Token != "" {
		n, err := strconv.Atoi(p.Token)
		if err != nil || n < 0 || n > len(list) {
			return nil, "", store.ErrBadToken
		}
		off = n
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	end := min(off+limit, len(list))
	next := ""
	if end < len(list) {
		next = strconv.Itoa(end)
	}
	return list[off:end], next, nil
}

// ListStateMachines implements store.Store.
func (s *Store) ListStateMachines(ctx context.Context, p store.Page) ([]*store.StateMachine, string, error) {
	s.mu.RLock()
	list := make([]*store.StateMachine, 0, len(s.machines))
	for _, sm := range s.machines {
		list = append(list, cloneSM(sm))
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return page(list, p)
}

// CreateExecution implements store.Store.
func (s *Store) CreateExecution(ctx context.Context, e *store.Execution, first *store.Step) error {
	return s.CreateExecutionWith(ctx, e, first, nil)
}

// CreateExecutionWith implements store.EagerCreator: the creation is
// written under the store's lock, which takes the step next holds with it.
func (s *Store) CreateExecutionWith(ctx context.Context, e *store.Execution, first *store.Step, next *store.NextStep) error {
	if first == nil && next != nil {
		return fmt.Errorf("execution %s: a next step offered without a first", e.ARN)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.execs[e.ARN]; ok {
		return fmt.Errorf("execution %s: %w", e.ARN, store.ErrExists)
	}
	steps := []*store.Step{first}
	if first == nil {
		steps = nil
	} else if next != nil {
		st, err := next.TakeFor(e.ARN, first.Seq+1)
		if err != nil {
			return err
		}
		if st != nil {
			steps = append(steps, st)
		}
	}
	x := &execution{e: *e, seq: len(s.order)}
	for _, st := range steps {
		c := st.Clone()
		x.steps = append(x.steps, c)
		apply(&x.e, c)
	}
	s.execs[e.ARN] = x
	s.order = append(s.order, x)
	if x.e.Status != "" && x.e.Status != "RUNNING" {
		s.ended(x)
	}
	return nil
}

// Eager implements store.EagerCreator: a creation waits for nothing here,
// so the service creates executions without their next step.
func (s *Store) Eager() bool { return false }

func apply(e *store.Execution, st *store.Step) {
	if st.Status != "" {
		e.Status = st.Status
	}
	e.Output, e.Error, e.Cause, e.Stopped = st.Output, st.Error, st.Cause, st.Stopped
}

// GetExecution implements store.Store.
func (s *Store) GetExecution(ctx context.Context, arn string) (*store.Execution, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x, ok := s.execs[arn]
	if !ok {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	e := x.e
	return &e, nil
}

// ListExecutions implements store.Store.
func (s *Store) ListExecutions(ctx context.Context, smARN, status string, p store.Page) ([]*store.Execution, string, error) {
	s.mu.RLock()
	var list []*store.Execution
	for i := len(s.order) - 1; i >= 0; i-- {
		x := s.order[i]
		if x.gone || x.e.StateMachineARN != smARN || (status != "" && x.e.Status != status) {
			continue
		}
		e := x.e
		list = append(list, &e)
	}
	s.mu.RUnlock()
	return page(list, p)
}

// AppendStep implements store.Store.
func (s *Store) AppendStep(ctx context.Context, st *store.Step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.execs[st.ExecutionARN]
	if !ok {
		return fmt.Errorf("execution %s: %w", st.ExecutionARN, store.ErrNotFound)
	}
	if want := int64(len(x.steps)); st.Seq != want {
		return fmt.Errorf("execution %s: step %d, want %d: %w", st.ExecutionARN, st.Seq, want, store.ErrConflict)
	}
	c := st.Clone()
	x.steps = append(x.steps, c)
	running := x.e.Status == "RUNNING"
	apply(&x.e, c)
	if running && x.e.Status != "RUNNING" {
		s.ended(x)
	}
	return nil
}

// Steps implements store.Store.
func (s *Store) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x, ok := s.execs[arn]
	if !ok {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	return slices.Clone(x.steps), nil
}

// Events implements store.Store.
func (s *Store) Events(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]store.Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x, ok := s.execs[arn]
	if !ok {
		return nil, fmt.Errorf("execution %s: %w", arn, store.ErrNotFound)
	}
	var all []store.Event
	for _, st := range x.steps {
		all = append(all, st.Events...)
	}
	if limit <= 0 {
		limit = 100
	}
	var out []store.Event
	if reverse {
		for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
			if after == 0 || all[i].ID < after {
				out = append(out, all[i])
			}
		}
		return out, nil
	}
	for _, ev := range all {
		if ev.ID > after && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

// RunningExecutions implements store.Store.
func (s *Store) RunningExecutions(ctx context.Context) ([]*store.Execution, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*store.Execution
	for _, x := range s.order {
		if x.e.Status == "RUNNING" {
			e := x.e
			out = append(out, &e)
		}
	}
	return out, nil
}

// ScanRunning implements store.RunningScanner: what it hands fn is read
// under the lock, in one pass, and handed over once the lock is released
// (fn may call the store). The steps are the stored ones, which the store
// never changes.
func (s *Store) ScanRunning(ctx context.Context, fn func(*store.Execution, []*store.Step) error) error {
	type running struct {
		e     store.Execution
		steps []*store.Step
	}
	var list []running
	s.mu.RLock()
	for _, x := range s.order {
		if x.e.Status != "RUNNING" {
			continue
		}
		steps := x.steps
		if n := len(steps); n > 0 && !steps[n-1].Wake.IsZero() {
			steps = steps[n-1:]
		}
		list = append(list, running{x.e, slices.Clone(steps)})
	}
	s.mu.RUnlock()
	for i := range list {
		if err := fn(&list[i].e, list[i].steps); err != nil {
			return err
		}
	}
	return nil
}

// CreateActivity implements store.Store.
func (s *Store) CreateActivity(ctx context.Context, a *store.Activity) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.acts[a.ARN]; ok {
		return fmt.Errorf("activity %s: %w", a.ARN, store.ErrExists)
	}
	c := *a
	s.acts[a.ARN] = &c
	return nil
}

// GetActivity implements store.Store.
func (s *Store) GetActivity(ctx context.Context, arn string) (*store.Activity, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.acts[arn]
	if !ok {
		return nil, fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	c := *a
	return &c, nil
}

// DeleteActivity implements store.Store.
func (s *Store) DeleteActivity(ctx context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.acts[arn]; !ok {
		return fmt.Errorf("activity %s: %w", arn, store.ErrNotFound)
	}
	delete(s.acts, arn)
	return nil
}

// ListActivities implements store.Store.
func (s *Store) ListActivities(ctx context.Context, p store.Page) ([]*store.Activity, string, error) {
	s.mu.RLock()
	list := make([]*store.Activity, 0, len(s.acts))
	for _, a := range s.acts {
		c := *a
		list = append(list, &c)
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return page(list, p)
}

// ReleaseMemory implements store.Store: there is no cache to free.
func (s *Store) ReleaseMemory(ctx context.Context) error { return nil }

// Close implements store.Store.
func (s *Store) Close() error { return nil }

// Secret implements store.Store; the secret lives as long as the store.
func (s *Store) Secret(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secret == nil {
		b := make([]byte, store.SecretSize)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("memory store: making the secret: %w", err)
		}
		s.secret = b
	}
	return slices.Clone(s.secret), nil
}
