// Package runner runs this process's live executions: the driver of every
// execution it runs, the dormant executions it resumed but has not rebuilt
// yet, the compiled programs, the key that signs task tokens and the
// timers. It starts executions the service has accepted, resumes them
// after a restart and adopts those a dead node leaves (Resume, Adopt),
// routes stops, callbacks by task token and Map Run updates to their
// drivers, queues activity tasks for their workers, and, on a shared
// store, forwards what is meant for an execution another node runs.
//
// Around each step a driver commits, the runner queues the notice of a
// final status in the store's outbox, tells the Observer (metrics), writes
// the execution's log records and stores its Map Runs (hooks.go): the
// engine's Committing and Committed hooks, one each.
//
// It builds on engine, interp and store. It must not import service (which
// builds on it: the service keeps the AWS-facing catalog, validates each
// request and hands the runner what to run), api, scheduler, metrics or
// notify, nor any task backend: the invoker of each execution comes from
// its Config.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
)

// Config configures a Runner.
type Config struct {
	// Region and Account are those of the executions' ARNs.
	Region  string
	Account string
	// Store keeps Standard executions; Express keeps Express ones.
	Store   store.Store
	Express store.Store
	// Shared is Store when it is shared by several nodes (nil: this
	// process owns every execution of Store).
	Shared store.Shared
	// Invoker returns the invoker that serves the Task states of an
	// execution (the service's: the mocks of its test case, nested
	// executions, the configured backends), and whether a task's response
	// only submits a task that its token completes (see engine.Config's
	// Submit).
	Invoker func(e *store.Execution) (inv task.Invoker, submit bool, err error)
	Clock   engine.Clock
	Log     *slog.Logger
	// Budget bounds each evaluation of every execution.
	Budget engine.Budget
	// Observer, when set, is told of every execution started or resumed
	// and every step committed (package metrics implements it).
	Observer Observer
	// ExecutionLogs, when set, receives the execution logs that state
	// machines' logging configurations ask for.
	ExecutionLogs *execlog.Destination
	// StatusEvents, when set, makes the runner queue the notice of every
	// final status of a Standard execution in the store's outbox before
	// the step that ends it is committed, and call StatusEvents once it is
	// (package notify delivers them).
	StatusEvents func()
}

// Observer watches what the runner commits, for metrics: it is called on
// the committing goroutine, once per execution created and once per step
// kept, so it must be cheap and must not keep the step's buffers.
type Observer interface {
	// Started: execution e was created with its first step.
	Started(e *store.Execution, first *store.Step)
	// Resumed: the running execution e was found at start (Resume).
	Resumed(e *store.Execution)
	// Committed: step s was kept (err nil) or refused (err) after took.
	Committed(s *store.Step, took time.Duration, err error)
}

// Runner runs the live executions of this process.
type Runner struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	queues   map[string]chan activityTask // activity task queues, by activity ARN
	programs map[string]*interp.Program   // by definition text
	running  map[string]*engine.Driver    // by execution ARN
	dormant  map[string]*sleeper          // resumed executions not yet rebuilt, by ARN (see Resume)
	key      []byte                       // signs task tokens: the store's secret, once read
	ctx      context.Context              // the runner's life: Close ends it
	cancel   context.CancelFunc
	ep       *epoch                    // the drivers run since New or the last Abandon
	epochOf  map[*engine.Driver]*epoch // the epoch of each driver that runs
	timers   atomic.Int64              // timers queued by this runner's drivers
	logMemo  sync.Map                  // state machine ARN → its logging configuration, recently read (logs.go)

	polls    chan struct{} // closed by EndPolls: waiting GetActivityTask calls return
	endPolls sync.Once

	// onEnded, when set, is called with the execution's ARN once a
	// driver's end has been recorded (ended); see OnEnded.
	onEnded func(arn string)
}

// New creates a runner. Store, Express and Invoker must be set; Clock
// defaults to the real clock and Log to slog's default. Call Resume to
// continue the executions the store has as running.
func New(cfg Config) *Runner {
	if cfg.Clock == nil {
		cfg.Clock = engine.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, log: cfg.Log, programs: map[string]*interp.Program{}, running: map[string]*engine.Driver{},
		dormant: map[string]*sleeper{}, ctx: ctx, cancel: cancel, ep: newEpoch(ctx), epochOf: map[*engine.Driver]*epoch{},
		polls: make(chan struct{})}
}

// An epoch is a span of the runner's drivers: those run since the runner
// was made or since it last abandoned its executions (Abandon). Its
// context ends when they must stop.
type epoch struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // a driver run in the epoch that has not ended
}

func newEpoch(parent context.Context) *epoch {
	ctx, cancel := context.WithCancel(parent)
	return &epoch{ctx: ctx, cancel: cancel}
}

// runLocked runs driver d in the current epoch. r.mu is held.
func (r *Runner) runLocked(d *engine.Driver) {
	ep := r.ep
	ep.wg.Add(1)
	r.epochOf[d] = ep
	go d.Run(ep.ctx)
}

// Abandon stops every execution this process runs, without a word to the
// store, and forgets the dormant ones: a node of a shared store that lost
// its lease calls it, since the executions it ran may belong to other
// nodes now (those still its own are claimed again after it rejoins).
// It returns once every driver has stopped, and how many there were;
// drivers started after it is called run on.
func (r *Runner) Abandon() int {
	r.mu.Lock()
	old := r.ep
	r.ep = newEpoch(r.ctx)
	n := len(r.running) + len(r.dormant)
	r.forgetDormantLocked()
	r.mu.Unlock()
	old.cancel()
	old.wg.Wait()
	return n
}

// forgetDormantLocked stops the timers of the dormant executions and
// forgets them. r.mu is held.
func (r *Runner) forgetDormantLocked() {
	for arn, z := range r.dormant {
		if z.timer != nil {
			z.timer.Stop()
		}
		z.awoken()
		delete(r.dormant, arn)
	}
}

// OnEnded makes f called with an execution's ARN each time one of its
// drivers has ended (a refused start's too). Call it before any driver
// runs.
func (r *Runner) OnEnded(f func(arn string)) { r.onEnded = f }

// PendingTimers returns how many timers (Waits, retry intervals, task
// timeouts and heartbeats) the running executions have queued.
func (r *Runner) PendingTimers() int64 { return r.timers.Load() }

// Counts returns how many executions this process runs now and how many
// resumed ones wait dormant (see Resume).
func (r *Runner) Counts() (running, dormant int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running), len(r.dormant)
}

// Registered reports whether an execution has a driver in this process.
func (r *Runner) Registered(arn string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[arn] != nil
}

// EndPolls makes the GetActivityTask long polls waiting now, and later
// ones, return at once without a task: a server that stops calls it
// first, so that its shutdown does not wait for them.
func (r *Runner) EndPolls() { r.endPolls.Do(func() { close(r.polls) }) }

// Close stops the drivers; executions stay RUNNING in the store and
// resume on the next start.
func (r *Runner) Close() {
	r.mu.Lock()
	r.cancel() // under mu: a dormant execution waking now sees it
	r.forgetDormantLocked()
	ep := r.ep
	r.mu.Unlock()
	ep.wg.Wait()
}

// Stopping reports whether Close has been called.
func (r *Runner) Stopping() bool { return r.ctx.Err() != nil }

// TokenKey returns the key that signs task tokens: the store's secret,
// read once. Tokens signed with it stay valid across restarts, and a
// token made by hand or by another server is refused.
func (r *Runner) TokenKey(ctx context.Context) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.key == nil {
		k, err := r.cfg.Store.Secret(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the store's secret, which signs task tokens: %w", err)
		}
		r.key = k
	}
	return r.key, nil
}

// Program compiles (once) and returns the program of a definition.
func (r *Runner) Program(def string) (*interp.Program, error) {
	r.mu.Lock()
	p := r.programs[def]
	r.mu.Unlock()
	if p != nil {
		return p, nil
	}
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		return nil, err
	}
	if p, err = interp.Compile(sm); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.programs[def] = p
	r.mu.Unlock()
	return p, nil
}
