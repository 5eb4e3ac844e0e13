package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// StartExecution starts an execution. A Standard execution is committed
// to the store before this returns; starting one with the same name and
// input while it runs (or, with in.Again, at all) returns the same
// execution.
func (s *Service) StartExecution(ctx context.Context, in StartInput) (*store.Execution, error) {
	smARN, testCase, _ := strings.Cut(in.StateMachineARN, "#")
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, err
	}
	t, err := s.resolve(ctx, smARN, true)
	if err != nil {
		return nil, err
	}
	if err := checkTraceHeader(in.TraceHeader); err != nil {
		return nil, err
	}
	sm := t.running()
	if in.Name == "" {
		in.Name = uuid.New()
	}
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	inputVal, err := parseInput(in.Input)
	if err != nil {
		return nil, err
	}
	if in.Input == "" {
		in.Input = "{}"
	}
	if testCase != "" && s.cfg.Mocks == nil {
		return nil, errorf("ValidationException", "test case %q named, but no mock configuration is loaded (SFN_MOCK_CONFIG)", testCase)
	}
	express := sm.Type == "EXPRESS"
	execARN := s.scope().Execution(sm.Name, in.Name)
	if express {
		execARN = s.scope().Express(sm.Name, in.Name, uuid.New())
	}
	p, err := s.program(sm.Definition)
	if err != nil {
		return nil, errorf("InvalidDefinition", "%v", err)
	}
	e := &store.Execution{ARN: execARN, Name: in.Name, StateMachineARN: sm.ARN, StateMachineName: sm.Name, Definition: sm.Definition,
		Type: sm.Type, RoleARN: sm.RoleARN, TestCase: testCase, Input: in.Input, Status: string(interp.Running)}
	st := s.storeFor(execARN)
	logs := s.logSetup(sm.Logging)
	eagerly := !express && st.Eager()
	d, ej, err := s.newEagerDriver(e, p, st, logs, eagerly)
	if err != nil {
		return nil, err
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	e.Started = now
	info := s.info(e, now, key)
	// Step 0 holds ExecutionStarted alone: the start is committed and
	// answered before the first state is evaluated.
	info.Defer = true
	first := d.Start(info, inputVal, now)
	if err := s.putRef(ctx, st, e.ARN, t, in.TraceHeader); err != nil {
		return nil, err
	}
	if !express {
		if err := s.QueueStatus(ctx, execARN, e.Status); err != nil {
			return nil, err
		}
	}
	if ej != nil {
		// The first state is evaluated while the creation waits for the
		// writer (eager). Step 0's bytes are the driver's, which it reuses
		// for its next step: the creation gets a copy.
		first = first.Clone()
		s.start(execARN, d)
		err = st.CreateExecutionWith(ctx, e, first, ej.next)
	} else {
		err = st.CreateExecution(ctx, e, first)
	}
	if err != nil {
		if ej != nil {
			ej.created <- err
		}
		if errors.Is(err, store.ErrExists) {
			old, gerr := st.GetExecution(ctx, execARN)
			if gerr == nil && old.Input == in.Input && (old.Status == string(interp.Running) || in.Again) {
				return old, nil
			}
			return nil, errorf("ExecutionAlreadyExists", "Execution Already Exists: '%s'", execARN)
		}
		return nil, err
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.Started(e, first)
	}
	if logs != nil {
		s.writeLog(nil, execARN, logs, first)
	}
	if !express && s.cfg.StatusEvents != nil {
		s.cfg.StatusEvents()
	}
	s.register(execARN, d)
	if ej != nil {
		ej.created <- nil
	} else {
		s.start(execARN, d)
	}
	return e, nil
}

// StartSyncExecution runs an Express execution to completion and returns
// it with its final history.
func (s *Service) StartSyncExecution(ctx context.Context, in StartInput) (*store.Execution, error) {
	smARN := strings.SplitN(in.StateMachineARN, "#", 2)[0]
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, err
	}
	t, err := s.resolve(ctx, smARN, false)
	if err != nil {
		return nil, err
	}
	if t.sm.Type != "EXPRESS" {
		return nil, errorf("StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")
	}
	e, err := s.StartExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	d := s.driver(e.ARN)
	if err := s.waitDone(ctx, e.ARN); err != nil {
		return nil, err
	}
	done, err := s.express.GetExecution(ctx, e.ARN)
	if errors.Is(err, store.ErrNotFound) && d != nil {
		// The Express store already forgot it (it keeps a bounded number
		// of finished executions): the driver still has the outcome.
		return summary(e, d.Execution()), nil
	}
	return done, err
}

// summary is the execution e as the interpreter's x ended it.
func summary(e *store.Execution, x *interp.Execution) *store.Execution {
	out := *e
	out.Status = string(x.Status())
	if x.Status() == interp.Succeeded {
		out.Output = value.String(x.Output())
	}
	if f := x.Failure(); f != nil {
		out.Error, out.Cause = f.Error, f.Cause
	}
	if h := x.History(); len(h) > 0 {
		out.Stopped = h[len(h)-1].Timestamp
	}
	return &out
}

// newDriver returns the driver of execution e, committing to st: its
// tasks go to the service's invoker (or the mocks of its test case) and
// this service's nested executions, activities to their workers.
func (s *Service) newDriver(e *store.Execution, p *interp.Program, st store.Store, logs *logSetup) (*engine.Driver, error) {
	d, _, err := s.newEagerDriver(e, p, st, logs, false)
	return d, err
}

// newEagerDriver is newDriver; with eager, the driver's first step is
// offered to the creation of its execution (see eager), and the eager
// journal that does it is returned.
func (s *Service) newEagerDriver(e *store.Execution, p *interp.Program, st store.Store, logs *logSetup, eagerly bool) (*engine.Driver, *eager, error) {
	inv := s.withNested(e, s.cfg.Invoker)
	if e.TestCase != "" && s.cfg.Mocks != nil {
		m, err := s.cfg.Mocks.Invoker(e.StateMachineName, e.TestCase)
		if err != nil {
			return nil, nil, errorf("ValidationException", "%v", err)
		}
		inv = m
	}
	arn := e.ARN
	var journal engine.Journal = st
	var ej *eager
	if eagerly {
		ej = &eager{Journal: st, next: &store.NextStep{}, created: make(chan error, 1)}
		journal = ej
	}
	if s.cfg.StatusEvents != nil && st == s.store {
		journal = notifying{journal, s, arn}
	}
	if s.cfg.Observer != nil {
		journal = observed{journal, s.cfg.Observer}
	}
	if logs != nil {
		journal = &logged{Journal: journal, s: s, arn: arn, set: logs}
	}
	var d *engine.Driver
	journal = mapRunJournal{journal, s, st, &d}
	d = engine.New(p, engine.Config{Invoker: inv, Clock: s.clock, Journal: journal, Log: s.log, Budget: s.cfg.Budget, Timers: &s.timers,
		// An idle execution gives up its goroutine: thousands waiting in a
		// Wait or for a callback cost no stacks.
		Park: true, OnEnd: func() { s.logEnd(e, d); s.ended(arn, d) },
		// A callback integration's response only submits the task; the
		// token completes it. (A mock answers for the whole task, as in
		// Step Functions Local.)
		Submit:   e.TestCase == "",
		Activity: s.enqueueActivity})
	return d, ej, nil
}

// eager is the innermost journal of an execution whose store creates it
// eagerly (store.EagerCreator): StartExecution runs the driver while the
// creation waits to be written, and the driver's first step (the first
// state, deferred so that StartExecution need not wait for it) is offered
// to that creation, which commits it in its own transaction if it is ready
// in time. Either way the step is durable, and no command of it carried
// out, before the creation has succeeded and StartExecution has
// registered the driver (created); when the creation fails, the driver
// abandons the execution it never had.
type eager struct {
	engine.Journal
	next    *store.NextStep // the creation's (StartExecution reads it)
	created chan error      // StartExecution's outcome
	past    bool            // the first step has gone (the driver's)
	// failed is the creation's failure, for good: the driver must never
	// append to an execution of the same name that exists.
	failed error
}

func (j *eager) AppendStep(ctx context.Context, st *store.Step) error {
	if j.failed != nil {
		return j.failed
	}
	if j.past {
		return j.Journal.AppendStep(ctx, st)
	}
	j.past = true
	offered := j.next.Offer(st)
	select {
	case err := <-j.created:
		if err != nil {
			// The driver ends quietly rather than retry.
			j.failed = fmt.Errorf("%w: %v", engine.ErrNotCreated, err)
			return j.failed
		}
	case <-ctx.Done():
		j.failed = ctx.Err()
		return j.failed
	}
	if offered {
		return nil // committed with the creation
	}
	return j.Journal.AppendStep(ctx, st)
}

// logEnd logs the end of an execution at info level (one line each); an
// execution abandoned while it runs (the server stops) is not logged.
func (s *Service) logEnd(e *store.Execution, d *engine.Driver) {
	x := d.Execution()
	if x == nil || x.Status() == interp.Running || !s.log.Enabled(s.ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("execution", e.ARN), slog.String("stateMachine", e.StateMachineARN), slog.String("type", e.Type),
		slog.String("status", string(x.Status()))}
	if h := x.History(); len(h) > 0 && !e.Started.IsZero() {
		attrs = append(attrs, slog.Duration("duration", h[len(h)-1].Timestamp.Sub(e.Started)))
	}
	if f := x.Failure(); f != nil {
		attrs = append(attrs, slog.String("error", f.Error), slog.String("cause", f.Cause))
	}
	s.log.LogAttrs(s.ctx, slog.LevelInfo, "execution ended", attrs...)
}

func (s *Service) info(e *store.Execution, now time.Time, tokenKey []byte) interp.Info {
	started := e.Started
	if started.IsZero() {
		started = now
	}
	return interp.Info{ExecutionArn: e.ARN, Name: e.Name, StateMachineArn: e.StateMachineARN,
		StateMachineName: e.StateMachineName, RoleArn: e.RoleARN, StartTime: started, TestCase: e.TestCase,
		Region: s.cfg.Region, Account: s.cfg.Account, MaxEvents: maxEvents(e.Type), TokenKey: tokenKey, MapRuns: true}
}

func maxEvents(typ string) int {
	if typ == "EXPRESS" {
		return 0
	}
	return interp.MaxStandardEvents
}

// register makes d the execution's driver in this process: callbacks,
// stops and waits on the execution find it from now on.
func (s *Service) register(arn string, d *engine.Driver) {
	s.mu.Lock()
	s.running[arn] = d
	s.mu.Unlock()
}

// unregister forgets a registered driver that never ran.
func (s *Service) unregister(arn string) {
	s.mu.Lock()
	delete(s.running, arn)
	s.mu.Unlock()
}

// start runs a registered driver.
func (s *Service) start(arn string, d *engine.Driver) {
	s.wg.Add(1)
	go d.Run(s.ctx)
}

// ended forgets the driver of an execution that ended (or was abandoned):
// the driver's Config.OnEnd. A driver that was never registered (its
// execution's creation failed, as one of the same name exists) leaves the
// registered one alone.
func (s *Service) ended(arn string, d *engine.Driver) {
	s.mu.Lock()
	if s.running[arn] == d {
		delete(s.running, arn)
	}
	s.mu.Unlock()
	if s.endedHook != nil {
		s.endedHook(arn)
	}
	s.wg.Done()
}

// driver returns the execution's driver in this process, or nil; a
// dormant execution is woken (rebuilt and run) first.
func (s *Service) driver(arn string) *engine.Driver {
	s.mu.Lock()
	d, z := s.running[arn], s.dormant[arn]
	s.mu.Unlock()
	if d != nil || z == nil {
		return d
	}
	s.wakeUp(arn, z)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[arn]
}

// enqueueActivity offers an activity task to the activity's workers.
func (s *Service) enqueueActivity(d *engine.Driver, id int64, req *task.Request) {
	if _, err := s.DescribeActivity(context.Background(), req.Resource); err != nil {
		d.Post(id, task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("activity %s does not exist", req.Resource)})
		return
	}
	execution := d.Execution().Info().ExecutionArn
	if s.shared(execution) != nil {
		// Any node's workers may take it.
		go s.offerShared(s.shared(execution), &store.ActivityTask{ActivityARN: req.Resource, ExecutionARN: execution, Token: req.TaskToken, Input: value.String(req.Input)})
		return
	}
	q := s.queue(req.Resource)
	at := activityTask{token: req.TaskToken, input: value.String(req.Input), execution: execution, driver: d}
	select {
	case q <- at:
	default:
		go func() { q <- at }()
	}
}

// Resume continues every execution the store has as RUNNING, rebuilding
// each one by replaying its committed inputs through the interpreter, then
// re-dispatching its outstanding tasks and timers.
//
// An execution whose last step says it waits only for timers
// (store.Step.Wake) stays dormant: it is registered but not rebuilt until
// its first timer is due or an input for it arrives (a stop, a callback, a
// caller waiting for it), so that a restart with many executions parked in
// Waits neither replays nor holds them. Describe and History answer from
// the store meanwhile.
//
// Every execution is registered before any resumes, so that a parent's
// re-dispatched .sync task finds its child's driver and waits for it,
// whichever of the two the store lists first.
func (s *Service) Resume(ctx context.Context) (int, error) {
	type resumed struct {
		arn string
		d   *engine.Driver
	}
	type job struct {
		e     *store.Execution
		steps []*store.Step
	}
	// One scan of the store feeds a replayer per core.
	jobs := make(chan job, 256)
	var (
		mu      sync.Mutex
		all     []resumed
		wg      sync.WaitGroup
		dormant []string
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				var err error
				if j.steps == nil {
					// The scan gave only its last step (it waits for a
					// timer), but this clock cannot let it sleep.
					j.steps, err = s.store.Steps(ctx, j.e.ARN)
				}
				var d *engine.Driver
				if err == nil {
					d, err = s.rebuild(ctx, j.e, j.steps)
				}
				if err != nil {
					s.log.Error("cannot resume execution", "execution", j.e.ARN, "err", err)
					continue
				}
				s.register(j.e.ARN, d)
				mu.Lock()
				all = append(all, resumed{j.e.ARN, d})
				mu.Unlock()
			}
		})
	}
	_, realClock := s.clock.(engine.RealClock)
	defs := map[string]string{} // one copy of each definition's text
	err := s.store.ScanRunning(ctx, func(e *store.Execution, steps []*store.Step) error {
		if s.cfg.Observer != nil {
			s.cfg.Observer.Resumed(e)
		}
		if d, ok := defs[e.Definition]; ok {
			e.Definition = d
		} else {
			defs[e.Definition] = e.Definition
		}
		if n := len(steps); n > 0 && !steps[n-1].Wake.IsZero() {
			if !realClock {
				steps = nil // read them all
			} else {
				s.mu.Lock()
				s.dormant[e.ARN] = &sleeper{e: e, wake: steps[n-1].Wake}
				s.mu.Unlock()
				dormant = append(dormant, e.ARN)
				return nil
			}
		}
		select {
		case jobs <- job{e, steps}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	if err != nil {
		// Nothing runs: a later Resume starts afresh.
		for _, x := range all {
			s.unregister(x.arn)
		}
		s.mu.Lock()
		for _, arn := range dormant {
			delete(s.dormant, arn)
		}
		s.mu.Unlock()
		return 0, fmt.Errorf("reading the running executions: %w", err)
	}
	for _, x := range all {
		s.start(x.arn, x.d)
	}
	s.mu.Lock()
	for _, arn := range dormant {
		if z := s.dormant[arn]; z != nil {
			s.arm(arn, z, time.Until(z.wake))
		}
	}
	s.mu.Unlock()
	return len(all) + len(dormant), nil
}

// sleeper is a dormant execution (see Resume): its summary, when its first
// timer is due, and the timer that wakes it then.
type sleeper struct {
	e     *store.Execution
	wake  time.Time
	timer *time.Timer
	once  sync.Once
}

// arm sets z's timer to wake it after d. s.mu is held.
func (s *Service) arm(arn string, z *sleeper, d time.Duration) {
	z.timer = time.AfterFunc(d, func() { s.wakeUp(arn, z) })
}

// wakeUp rebuilds the dormant execution z by replaying its steps, and runs
// it; once only. A store that cannot be read is tried again a second later.
func (s *Service) wakeUp(arn string, z *sleeper) {
	z.once.Do(func() {
		s.mu.Lock()
		if z.timer != nil {
			z.timer.Stop()
		}
		s.mu.Unlock()
		steps, err := s.store.Steps(s.ctx, arn)
		if err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.ctx.Err() != nil || s.dormant[arn] != z {
				return
			}
			s.log.Error("cannot read a dormant execution's steps; retrying", "execution", arn, "err", err)
			again := &sleeper{e: z.e, wake: z.wake}
			s.dormant[arn] = again
			s.arm(arn, again, time.Second)
			return
		}
		d, err := s.rebuild(s.ctx, z.e, steps)
		s.mu.Lock()
		if s.dormant[arn] == z {
			delete(s.dormant, arn)
		}
		if err != nil || s.ctx.Err() != nil {
			s.mu.Unlock()
			if err != nil {
				s.log.Error("cannot resume execution", "execution", arn, "err", err)
			}
			return
		}
		s.running[arn] = d
		s.wg.Add(1)
		s.mu.Unlock()
		go d.Run(s.ctx)
	})
}

// rebuild replays an execution's committed steps into a new driver, which
// re-dispatches the outstanding operations when it runs.
func (s *Service) rebuild(ctx context.Context, e *store.Execution, steps []*store.Step) (*engine.Driver, error) {
	p, err := s.program(e.Definition)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return nil, errors.New("no steps")
	}
	logs := s.logSetupOf(ctx, e.StateMachineARN)
	d, err := s.newDriver(e, p, s.store, logs)
	if err != nil {
		return nil, err
	}
	input, err := value.ParseString(e.Input)
	if err != nil {
		return nil, err
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	info := s.info(e, steps[0].At, key)
	// An execution started before starts were deferred ran its first
	// states in step 0, which then holds more than ExecutionStarted.
	info.Defer = len(steps[0].Events) == 1
	if err := d.Replay(info, input, steps); err != nil {
		return nil, err
	}
	s.putMapRuns(ctx, s.store, d.Execution()) // what a crash may have kept from being stored
	if n, at := d.Execution().RedriveCount(); n > 0 {
		s.putRedrive(ctx, e.ARN, n, at)
	}
	return d, nil
}

// Wait blocks until the execution is no longer running in this process
// (or ctx ends) and returns it.
func (s *Service) Wait(ctx context.Context, arn string) (*store.Execution, error) {
	if err := s.waitDone(ctx, arn); err != nil {
		return nil, err
	}
	return s.waitElsewhere(ctx, arn)
}

// waitDone blocks until the execution of arn is not running in this
// process, or ctx ends.
func (s *Service) waitDone(ctx context.Context, arn string) error {
	d := s.driver(arn)
	if d == nil {
		return nil
	}
	select {
	case <-d.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StopExecution stops a running execution (status ABORTED).
func (s *Service) StopExecution(ctx context.Context, arn, errName, cause string) (*store.Execution, error) {
	e, err := s.DescribeExecution(ctx, arn)
	if err != nil {
		return nil, err
	}
	if e.Status != string(interp.Running) {
		return e, nil
	}
	d := s.driver(arn)
	if d == nil {
		if sh := s.shared(arn); sh != nil {
			return s.stopElsewhere(ctx, sh, arn, errName, cause)
		}
		return nil, errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	// The stop interrupts an evaluation running meanwhile; the answer
	// waits until the execution has ended (its end committed), so that
	// it carries the stop date.
	d.Stop(errName, cause)
	select {
	case <-d.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.DescribeExecution(ctx, arn)
}

// storeFor returns the store that keeps the execution of ARN s.
func (s *Service) storeFor(execution string) store.Store {
	if arn.TypeOf(execution) == arn.Express {
		return s.express
	}
	return s.store
}

// DescribeExecution returns an execution.
func (s *Service) DescribeExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if err := checkARN(arn, "execution"); err != nil {
		return nil, err
	}
	e, err := s.storeFor(arn).GetExecution(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		if c, ok := s.childExecution(ctx, arn); ok {
			return c, nil
		}
		return nil, errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	return e, err
}

// ListExecutions lists a state machine's executions, newest first.
func (s *Service) ListExecutions(ctx context.Context, smARN, status string, page store.Page) ([]*store.Execution, string, error) {
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, "", err
	}
	t, err := s.resolve(ctx, smARN, false)
	if err != nil {
		return nil, "", err
	}
	sm := t.sm
	switch status {
	case "", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE":
	default:
		return nil, "", errorf("ValidationException", "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", status)
	}
	st := s.store
	if sm.Type == "EXPRESS" {
		st = s.express
	}
	var list []*store.Execution
	var next string
	if t.version == nil {
		list, next, err = st.ListExecutions(ctx, smARN, status, page)
	} else {
		list, next, err = st.ListExecutionsOf(ctx, smARN, status, page)
	}
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// History returns a page of an execution's history. The token is the id
// of the last event returned.
func (s *Service) History(ctx context.Context, arn string, token string, limit int, reverse bool) ([]store.Event, string, error) {
	if err := checkARN(arn, "execution"); err != nil {
		return nil, "", err
	}
	var after int64
	if token != "" {
		if _, err := fmt.Sscanf(token, "%d", &after); err != nil || after <= 0 {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", token)
		}
	}
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	evs, err := s.storeFor(arn).Events(ctx, arn, after, limit+1, reverse)
	if errors.Is(err, store.ErrNotFound) {
		evs, err = s.childEvents(ctx, arn, after, limit+1, reverse)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(evs) > limit {
		evs = evs[:limit]
		next = fmt.Sprint(evs[len(evs)-1].ID)
	}
	return evs, next, nil
}
