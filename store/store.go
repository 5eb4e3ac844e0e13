// Package store defines where stepd keeps state machines, executions and
// their histories, and the contract every backend meets.
//
// An execution is stored as the sequence of its committed steps. A step is
// one transition of the interpreter: the input that caused it (a task
// result, a timer firing, a stop request), the history events it produced,
// and the execution's summary afterwards. Replaying the inputs of the steps
// through the interpreter rebuilds an execution's state after a restart;
// the events are what GetExecutionHistory returns.
//
// Store (store.go) is the one contract every backend meets whole. Besides
// state machines, executions with their steps and events, activities and
// the secret task tokens are signed with, it holds parts named by
// interfaces of their own, which it embeds: Versioned (versions, aliases,
// what each execution started from, resources' settings; version.go),
// MapRunStore (Map Runs, their child executions, redrive records;
// maprun.go), Retainer (retention; retention.go), Outbox (status changes
// waiting to be delivered as events; outbox.go), Schedules (EventBridge
// Scheduler schedules; schedule.go), EagerCreator (an execution created
// with its next step) and RunningScanner (every running execution in one
// pass). Only Shared (several nodes sharing the store: leases, claims,
// messages to an execution's owner, activity tasks) is a separate
// interface, which the postgres backend alone implements.
//
// The backends are packages under it: memory (Express executions, tests,
// stepd serve --data ""), sqlite (the durable single-node store) and
// postgres (several nodes; postgres/pgtest gives tests a schema of their
// own); storetest is the suite every backend must pass; internal/codec
// (list tokens, packed events), internal/batch (a durable store's
// group-commit writer: the hand-off of a write, the writer's loop) and
// internal/sqlrow (the SQL backends' column lists, row scanners and column
// encoders) are what backends share.
//
// It imports nothing of stepd's but fault (the conditions every layer
// shares, for ErrUnavailable), and must not: the engine, the service and
// everything above them build on it, so it must not import them, nor the
// interpreter, nor any of its backends.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepd/stepd/fault"
)

// Errors a Store returns; backends wrap them with %w.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrConflict is a step whose Seq is not the next one: another writer
	// committed it, or a step was lost. Retrying the same step cannot help.
	ErrConflict = errors.New("step out of order")
	// ErrBadToken is a pagination token the store did not issue.
	ErrBadToken = errors.New("invalid pagination token")
	// ErrUnavailable is a store that cannot do the work now but may in a
	// moment: its database cannot be reached or is restarting, its disk
	// is full, or (a shared store) this node's lease lapsed and it is
	// taking a new one. The backend's error wraps it beside the cause it
	// names; it is the service's fault.ErrUnavailable, so that the API
	// answers it as a retryable ServiceUnavailable.
	ErrUnavailable = fault.ErrUnavailable
)

// StateMachine is a stored state machine.
type StateMachine struct {
	ARN        string
	Name       string
	Type       string // STANDARD or EXPRESS
	Definition string // JSON text as submitted
	RoleARN    string
	Created    time.Time
	Updated    time.Time
	RevisionID string
	Tags       map[string]string
	// Logging is the state machine's loggingConfiguration, the JSON text
	// the service keeps (empty: none, which is level OFF).
	Logging string
}

// Execution is a stored execution's summary.
type Execution struct {
	ARN              string
	Name             string
	StateMachineARN  string
	StateMachineName string
	Definition       string // the definition the execution runs (JSON text)
	Type             string // STANDARD or EXPRESS
	RoleARN          string
	TestCase         string // mock test case, if any
	Input            string // JSON text
	Status           string // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
	Output           string // JSON text; empty unless SUCCEEDED
	Error, Cause     string
	Started          time.Time
	Stopped          time.Time // zero while running
	// Sync marks an Express execution started by StartSyncExecution. Only
	// the memory store, which keeps the Express executions, keeps it.
	Sync bool
}

// Activity is a registered activity.
type Activity struct {
	ARN     string
	Name    string
	Created time.Time
}

// Event is one history event, kept as the JSON object GetExecutionHistory
// returns (with its timestamp).
type Event struct {
	ID   int64
	Type string
	JSON []byte
}

// Step is one committed transition of an execution.
type Step struct {
	ExecutionARN string
	Seq          int64     // 0 for the step that started the execution, then 1, 2, ...
	At           time.Time // the time passed to the interpreter
	Input        []byte    // the input and the random values drawn, encoded by the engine (journal.go); empty for a Seq 0 that drew none
	Events       []Event   // events produced by this step, ids ascending and contiguous
	// The execution's summary after this step.
	Status       string
	Output       string
	Error, Cause string
	Stopped      time.Time
	// Wake, when not zero, says that after this step the execution waits
	// only for timers, the first due at Wake: no task runs and no task
	// token or activity is outstanding. A restart need not rebuild such an
	// execution until then, or until an input for it arrives.
	Wake time.Time
}

// Page asks for one page of a list: Token is empty for the first page or a
// NextToken returned by a previous call; Limit is the page size (0 means the
// backend's default of 100).
type Page struct {
	Token string
	Limit int
}

// Store keeps state machines and executions. Every method is safe for
// concurrent use. A method that returns without error has made its change
// durable (for durable backends). A Store keeps no reference to the byte
// slices of a Step it is given (Input, the events' JSON) once the call
// returns: callers reuse their buffers.
type Store interface {
	// CreateStateMachine stores a new state machine; ErrExists when one
	// with the same ARN exists.
	CreateStateMachine(ctx context.Context, sm *StateMachine) error
	// UpdateStateMachine replaces a state machine's definition, role,
	// updated time, revision and tags; ErrNotFound when it does not exist.
	UpdateStateMachine(ctx context.Context, sm *StateMachine) error
	GetStateMachine(ctx context.Context, arn string) (*StateMachine, error)
	// DeleteStateMachine removes a state machine; its executions remain.
	DeleteStateMachine(ctx context.Context, arn string) error
	// ListStateMachines lists state machines ordered by name.
	ListStateMachines(ctx context.Context, page Page) (list []*StateMachine, next string, err error)

	// CreateExecution stores a new execution and its first step
	// atomically; ErrExists when the ARN exists.
	CreateExecution(ctx context.Context, e *Execution, first *Step) error
	GetExecution(ctx context.Context, arn string) (*Execution, error)
	// ListExecutions lists the executions of a state machine, newest
	// first; status filters when not empty. Listed executions are
	// summaries: their ARN, names, type, status and start and stop dates
	// are set, and a store may leave every other field empty (a list
	// never needs definitions, inputs or outputs).
	ListExecutions(ctx context.Context, stateMachineARN, status string, page Page) (list []*Execution, next string, err error)
	// AppendStep commits the next step of an execution: its Seq must be
	// one more than the last committed step's, and the execution's
	// summary is updated from it. Backends batch concurrent calls into
	// one transaction (group commit); the call returns once its step is
	// durable.
	AppendStep(ctx context.Context, s *Step) error
	// Steps returns an execution's steps in order.
	Steps(ctx context.Context, executionARN string) ([]*Step, error)
	// Events returns up to limit events of an execution after the event
	// with id after (or, reverse, before it; 0 means from the end),
	// in ascending id order (descending when reverse).
	Events(ctx context.Context, executionARN string, after int64, limit int, reverse bool) ([]Event, error)
	// RunningExecutions returns every execution whose status is RUNNING.
	RunningExecutions(ctx context.Context) ([]*Execution, error)

	// CreateActivity stores an activity; ErrExists when the ARN exists.
	CreateActivity(ctx context.Context, a *Activity) error
	GetActivity(ctx context.Context, arn string) (*Activity, error)
	// DeleteActivity removes an activity; ErrNotFound when missing.
	DeleteActivity(ctx context.Context, arn string) error
	// ListActivities lists activities ordered by name.
	ListActivities(ctx context.Context, page Page) (list []*Activity, next string, err error)

	// Secret returns the store's secret: SecretSize random bytes made on
	// first use and kept for good, the same for every caller and, in a
	// durable store, across restarts. Task tokens are signed with it, so
	// they cannot be forged and stay valid after a restart.
	Secret(ctx context.Context) ([]byte, error)

	// ReleaseMemory frees the memory the store's caches hold, for a server
	// gone idle (SQLite's page caches); a store with nothing to free does
	// nothing.
	ReleaseMemory(ctx context.Context) error

	// Close releases the store; pending commits finish first.
	Close() error

	Versioned
	MapRunStore
	Retainer
	Outbox
	Schedules
	EagerCreator
	RunningScanner
}

// Clone copies a step with its input and events, for a holder that must
// keep it while its maker reuses the bytes (see Store); the input and the
// events' JSON share one allocation.
func (st *Step) Clone() *Step {
	c := *st
	n := len(st.Input)
	for _, ev := range st.Events {
		n += len(ev.JSON)
	}
	buf := make([]byte, 0, n)
	if st.Input != nil {
		buf = append(buf, st.Input...)
		c.Input = buf[:len(buf):len(buf)]
	}
	c.Events = make([]Event, len(st.Events))
	for i, ev := range st.Events {
		at := len(buf)
		buf = append(buf, ev.JSON...)
		c.Events[i] = Event{ID: ev.ID, Type: ev.Type, JSON: buf[at:len(buf):len(buf)]}
	}
	return &c
}

// EagerCreator is the part of a Store that commits an execution's second
// step in the transaction that creates it, when the step is ready by the
// time the creation is written: the service answers StartExecution once
// the execution is created, and evaluates its first state meanwhile, so
// under load the two writes become one. Every backend implements it; Eager
// says whether the service should start executions so.
type EagerCreator interface {
	// CreateExecutionWith is CreateExecution, and also commits the step
	// next holds when the store writes the creation (next.Take), after
	// first and in the same transaction; a step offered later is the
	// caller's to append. With next, first must not be nil.
	CreateExecutionWith(ctx context.Context, e *Execution, first *Step, next *NextStep) error
	// Eager reports whether starting executions through
	// CreateExecutionWith pays: true where a creation waits for a writer
	// that commits many at once (SQLite's group commit and its fsync), so
	// that the next step is often ready in time. Where it is false the
	// service creates executions with CreateExecution and appends their
	// next step itself.
	Eager() bool
}

// NextStep is the step that follows an execution's first, offered while
// its creation waits to be written (EagerCreator).
type NextStep struct {
	mu     sync.Mutex
	step   *Step
	closed bool
}

// Offer hands s to the store; it is false when the store has already
// written the creation without a step (the caller appends s itself, once
// the creation has succeeded).
func (n *NextStep) Offer(s *Step) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.step = s
	return true
}

// Take closes the offer and returns the step offered, or nil; a later Take
// returns the same (a store may write the creation more than once, when a
// batch is rolled back and replayed).
func (n *NextStep) Take() *Step {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	return n.step
}

// TakeFor is Take for the creation of execution arn whose next step must
// have Seq seq: the step offered, if any, once checked to be that one
// (ErrConflict otherwise, and the creation must fail whole).
func (n *NextStep) TakeFor(arn string, seq int64) (*Step, error) {
	st := n.Take()
	if st != nil && (st.ExecutionARN != arn || st.Seq != seq) {
		return nil, fmt.Errorf("execution %s: step %d of %s offered with its creation, want step %d: %w", arn, st.Seq, st.ExecutionARN, seq, ErrConflict)
	}
	return st, nil
}

// RunningScanner is the part of a Store that reads every running
// execution with its steps in one pass, which is how a restart finds what
// to resume: much cheaper than RunningExecutions and then Steps for each
// one. Every backend implements it.
type RunningScanner interface {
	// ScanRunning calls fn for every RUNNING execution, in the order
	// RunningExecutions lists them, with its steps in order, from one
	// consistent view of the store; an execution whose last step has a
	// Wake comes with that step alone (it need not be rebuilt before then;
	// Steps reads the others). A step holds what replay reads: its Seq,
	// At, Input and Wake, and its events' IDs (Events has one entry per
	// event, without Type or JSON); the summary fields are left empty (a
	// backend may fill more). fn may keep what it is given. The scan stops
	// at fn's first error, which it returns.
	ScanRunning(ctx context.Context, fn func(e *Execution, steps []*Step) error) error
}

// Shared is a Store that several `stepd serve` nodes share (store/postgres).
// Each node owns the running executions it started or claimed, and holds a
// lease that it renews; a node whose lease has lapsed can commit nothing
// more (its writes fail with ErrConflict), and the running executions it
// owned are claimed by the others. Single-node stores (memory, SQLite) do
// not implement it: their one process owns every execution.
type Shared interface {
	Store
	// Claim makes this node the owner of every running execution whose
	// owner's lease has lapsed (or whose owner has left), and returns them
	// for the caller to resume by replay.
	Claim(ctx context.Context) ([]*Execution, error)
	// Lost is closed once this node has lost its lease: from then on it
	// can commit no step. The node then stops every execution it runs
	// and calls Rejoin; Lost returns a new channel after that.
	Lost() <-chan struct{}
	// Rejoin makes the node a member again after it lost its lease,
	// under a new identity, so that nothing the old one queued can
	// commit; the executions it ran are claimed again by whoever claims
	// next (this node's Claim included). It fails while the lease holds.
	Rejoin(ctx context.Context) error
	// Send queues msg for the owner of a running execution (ErrNotFound
	// when it is not running). The message outlives its owner: if the
	// owner dies first, the node that claims the execution receives it.
	Send(ctx context.Context, executionARN string, msg []byte) error
	// Ask is Send, then waits for the owner's reply: what fn returned
	// for the message (see Receive). When ctx ends first, the message
	// stays queued and Ask returns ctx's error.
	Ask(ctx context.Context, executionARN string, msg []byte) (reply []byte, err error)
	// Receive calls fn, until ctx ends, with each message sent to an
	// execution this node owns, in the order sent. It returns early with
	// an error when its connection fails or the lease is lost; the caller
	// calls it again (after Rejoin). A message is removed
	// once fn returns no error, and its reply goes to the node that
	// asked (Ask); when fn fails it is offered again later.
	Receive(ctx context.Context, fn func(ctx context.Context, executionARN string, msg []byte) (reply []byte, err error)) error
	// OfferTask queues an activity task for the workers polling any node.
	// Offering a token that is queued already changes nothing.
	OfferTask(ctx context.Context, t *ActivityTask) error
	// TakeTask takes the oldest task queued for an activity, once across
	// all nodes, and holds it for this node; nil when there is none. The
	// taker then drops the task (DropTask: a worker has it, or the task
	// has closed) or releases it (ReleaseTask). A task held by a node whose
	// lease lapses is taken again, so that a node that dies while it hands
	// a task to a worker loses none.
	TakeTask(ctx context.Context, activityARN string) (*ActivityTask, error)
	// DropTask removes a task that this node took.
	DropTask(ctx context.Context, token string) error
	// ReleaseTask queues again a task that this node took, for any taker.
	ReleaseTask(ctx context.Context, token string) error
	// Offered returns a channel that is closed once a task may have been
	// offered for the activity, on any node, after the call: a taker that
	// found none waits for it before it looks again. It may close without
	// a task (another taker may be first), and it may miss an offer while
	// the store cannot hear other nodes, so takers also look now and then.
	Offered(activityARN string) <-chan struct{}
}

// ActivityTask is an activity task waiting for a worker.
type ActivityTask struct {
	ActivityARN  string
	ExecutionARN string
	Token        string
	Input        string
}

// SecretSize is the length of a store's secret.
const SecretSize = 32
