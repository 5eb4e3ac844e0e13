package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/history"
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
	sm, err := s.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, err
	}
	if in.Name == "" {
		in.Name = uuid.New()
	}
	if err := checkName("Name", in.Name); err != nil {
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
	arn := s.scope().Execution(sm.Name, in.Name)
	if express {
		arn = s.scope().Express(sm.Name, in.Name, uuid.New())
	}
	p, err := s.program(sm.Definition)
	if err != nil {
		return nil, errorf("InvalidDefinition", "%v", err)
	}
	e := &store.Execution{ARN: arn, Name: in.Name, StateMachineARN: sm.ARN, StateMachineName: sm.Name, Definition: sm.Definition,
		Type: sm.Type, RoleARN: sm.RoleARN, TestCase: testCase, Input: in.Input, Status: string(interp.Running)}
	r, err := s.newRunner(e, p)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	e.Started = now
	x, cmds := p.Start(r.info(now), inputVal, now)
	first := r.step(x, 0, now, nil)
	st := s.store
	if express {
		st = s.express
	}
	if err := st.CreateExecution(ctx, e, first); err != nil {
		if errors.Is(err, store.ErrExists) {
			old, gerr := st.GetExecution(ctx, arn)
			if gerr == nil && old.Input == in.Input && (old.Status == string(interp.Running) || in.Again) {
				return old, nil
			}
			return nil, errorf("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn)
		}
		return nil, err
	}
	r.store = st
	r.x = x
	r.seq = 1
	s.launch(r, cmds)
	return e, nil
}

// StartSyncExecution runs an Express execution to completion and returns
// it with its final history.
func (s *Service) StartSyncExecution(ctx context.Context, in StartInput) (*store.Execution, error) {
	sm, err := s.GetStateMachine(ctx, strings.SplitN(in.StateMachineARN, "#", 2)[0])
	if err != nil {
		return nil, err
	}
	if sm.Type != "EXPRESS" {
		return nil, errorf("StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")
	}
	e, err := s.StartExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := s.waitDone(ctx, e.ARN); err != nil {
		return nil, err
	}
	return s.express.GetExecution(ctx, e.ARN)
}

// runner drives one execution: it performs the interpreter's commands and
// commits every step before acting on it.
type runner struct {
	s        *Service
	e        *store.Execution
	p        *interp.Program
	x        *interp.Execution
	store    store.Store
	invoker  task.Invoker
	seq      int64
	lastSeen int // events already committed
	// buf holds the events' JSON of the step being committed; a Store
	// keeps none of it, so each step reuses it.
	buf       []byte
	stop      chan stopRequest
	done      chan struct{}
	results   chan result
	inflight  map[int64]context.CancelFunc
	timers    engine.Timers
	callbacks chan callback
	tk        tokens
}

type stopRequest struct{ err, cause string }

type result struct {
	id   int64
	res  task.Result
	kind interp.InputKind // TaskDone, or TaskSubmitted for a callback integration
}

func (s *Service) newRunner(e *store.Execution, p *interp.Program) (*runner, error) {
	inv := s.withNested(e, s.cfg.Invoker)
	if e.TestCase != "" && s.cfg.Mocks != nil {
		m, err := s.cfg.Mocks.Invoker(e.StateMachineName, e.TestCase)
		if err != nil {
			return nil, errorf("ValidationException", "%v", err)
		}
		inv = m
	}
	return &runner{s: s, e: e, p: p, invoker: inv, stop: make(chan stopRequest, 1), done: make(chan struct{}),
		results: make(chan result, 16), inflight: map[int64]context.CancelFunc{}, callbacks: make(chan callback)}, nil
}

func (r *runner) info(now time.Time) interp.Info {
	started := r.e.Started
	if started.IsZero() {
		started = now
	}
	return interp.Info{ExecutionArn: r.e.ARN, Name: r.e.Name, StateMachineArn: r.e.StateMachineARN,
		StateMachineName: r.e.StateMachineName, RoleArn: r.e.RoleARN, StartTime: started, TestCase: r.e.TestCase,
		Region: r.s.cfg.Region, Account: r.s.cfg.Account, MaxEvents: maxEvents(r.e.Type)}
}

func maxEvents(typ string) int {
	if typ == "EXPRESS" {
		return 0
	}
	return interp.MaxStandardEvents
}

// step builds the store step for the events produced since the last one.
func (r *runner) step(x *interp.Execution, seq int64, at time.Time, in *interp.Input) *store.Step {
	evs := x.History()[r.lastSeen:]
	r.lastSeen = len(x.History())
	st := &store.Step{ExecutionARN: r.e.ARN, Seq: seq, At: at, Status: string(x.Status())}
	if in != nil {
		st.Input = encodeInput(in)
	}
	// One buffer, the runner's, holds every event of the step; each
	// event's JSON is a slice of it.
	buf := r.buf[:0]
	st.Events = make([]store.Event, 0, len(evs))
	for _, ev := range evs {
		start := len(buf)
		buf = ev.AppendJSON(buf, true)
		st.Events = append(st.Events, store.Event{ID: ev.ID, Type: ev.Type, JSON: buf[start:len(buf):len(buf)]})
	}
	r.buf = buf
	if x.Status() != interp.Running {
		st.Stopped = at
		if x.Status() == interp.Succeeded {
			st.Output = value.String(x.Output())
		}
		if f := x.Failure(); f != nil {
			st.Error, st.Cause = f.Error, f.Cause
		}
	}
	return st
}

func (s *Service) launch(r *runner, cmds []interp.Command) {
	s.register(r)
	s.start(r, cmds)
}

// register makes r the execution's runner in this process: callbacks,
// stops and waits on the execution find it from now on.
func (s *Service) register(r *runner) {
	s.mu.Lock()
	s.running[r.e.ARN] = r
	s.mu.Unlock()
}

// start runs a registered runner, beginning with cmds.
func (s *Service) start(r *runner, cmds []interp.Command) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.running, r.e.ARN)
			s.mu.Unlock()
			close(r.done)
		}()
		r.loop(s.ctx, cmds)
	}()
}

func (r *runner) loop(ctx context.Context, cmds []interp.Command) {
	r.apply(ctx, cmds)
	defer func() {
		for _, cancel := range r.inflight {
			cancel()
		}
	}()
	for r.x.Status() == interp.Running {
		var due <-chan time.Time
		if _, at, ok := r.timers.Next(); ok {
			due = r.s.clock.After(at.Sub(r.s.clock.Now()))
		}
		var in interp.Input
		var reply chan error
		select {
		case <-ctx.Done():
			return // service closing: the execution resumes on restart
		case sr := <-r.stop:
			in = interp.Input{Kind: interp.Stop, Error: sr.err, Cause: sr.cause}
		case d := <-r.results:
			if cancel, ok := r.inflight[d.id]; ok {
				cancel()
				delete(r.inflight, d.id)
			}
			kind := d.kind
			if kind == 0 {
				kind = interp.TaskDone
			}
			in = interp.Input{Kind: kind, ID: d.id, Result: d.res}
		case cb := <-r.callbacks:
			id, ok := r.tk.get(cb.token)
			if !ok {
				if r.x.Issued(cb.token) {
					// Its task completed, timed out or was cancelled.
					cb.reply <- errTaskClosed()
				} else {
					cb.reply <- errorf("TaskDoesNotExist", "Task Does Not Exist: no task is waiting for this token")
				}
				continue
			}
			in, reply = cb.in, cb.reply
			in.ID = id
		case <-due:
			id, _ := r.timers.Pop()
			in = interp.Input{Kind: interp.TimerFired, ID: id}
		}
		now := r.s.clock.Now()
		if in.Kind == interp.TaskDone {
			r.tk.remove(in.ID)
		}
		cmds := r.x.Step(now, in)
		st := r.step(r.x, r.seq, now, &in)
		err := r.store.AppendStep(ctx, st)
		if reply != nil {
			reply <- err
		}
		if err != nil {
			r.s.log.Error("cannot commit a step; the execution stops here and resumes on restart", "execution", r.e.ARN, "err", err)
			return
		}
		r.seq++
		r.apply(ctx, cmds)
	}
}

func (r *runner) apply(ctx context.Context, cmds []interp.Command) {
	for _, c := range cmds {
		switch c.Kind {
		case interp.Invoke:
			req := c.Request
			if req.TaskToken != "" {
				r.tk.add(req.TaskToken, c.ID)
				if strings.Contains(req.Resource, ":activity:") {
					r.enqueueActivity(c.ID, req)
					continue
				}
			}
			kind := interp.TaskDone
			if req.TaskToken != "" && r.e.TestCase == "" {
				// A callback integration: its response only submits the
				// task; the token completes it. (A mock answers for the
				// whole task, as in Step Functions Local.)
				kind = interp.TaskSubmitted
			}
			cctx, cancel := context.WithCancel(ctx)
			r.inflight[c.ID] = cancel
			go func(id int64, req *task.Request) {
				res := invoke(cctx, r.invoker, req)
				k := kind
				if res.Failed() {
					k = interp.TaskDone
				}
				select {
				case r.results <- result{id: id, res: res, kind: k}:
				case <-cctx.Done():
				}
			}(c.ID, req)
		case interp.CancelTask:
			r.tk.remove(c.ID)
			if cancel, ok := r.inflight[c.ID]; ok {
				cancel()
				delete(r.inflight, c.ID)
			}
		case interp.StartTimer:
			r.timers.Add(c.ID, c.At)
		case interp.CancelTimer:
			r.timers.Remove(c.ID)
		}
	}
}

// enqueueActivity offers an activity task to the activity's workers.
func (r *runner) enqueueActivity(id int64, req *task.Request) {
	if _, err := r.s.DescribeActivity(context.Background(), req.Resource); err != nil {
		go func() {
			r.results <- result{id: id, res: task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("activity %s does not exist", req.Resource)}}
		}()
		return
	}
	q := r.s.queue(req.Resource)
	at := activityTask{token: req.TaskToken, input: value.String(req.Input), runner: r}
	select {
	case q <- at:
	default:
		go func() { q <- at }()
	}
}

func invoke(ctx context.Context, inv task.Invoker, req *task.Request) (res task.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("the task handler panicked: %v", p)}
		}
	}()
	if inv == nil {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no task handler is configured for resource %s of state %s", req.Resource, req.StateName)}
	}
	return inv.Invoke(ctx, req)
}

// Resume continues every execution the store has as RUNNING, rebuilding
// each one by replaying its committed inputs through the interpreter, then
// re-dispatching its outstanding tasks and timers.
//
// Every execution is rebuilt and registered before any resumes, so that a
// parent's re-dispatched .sync task finds its child's runner and waits for
// it, whichever of the two the store lists first.
func (s *Service) Resume(ctx context.Context) (int, error) {
	open, err := s.store.RunningExecutions(ctx)
	if err != nil {
		return 0, err
	}
	type resumed struct {
		r       *runner
		pending []interp.Command
	}
	var all []resumed
	for _, e := range open {
		r, pending, err := s.rebuild(ctx, e)
		if err != nil {
			s.log.Error("cannot resume execution", "execution", e.ARN, "err", err)
			continue
		}
		s.register(r)
		all = append(all, resumed{r, pending})
	}
	for _, x := range all {
		s.start(x.r, x.pending)
	}
	return len(all), nil
}

// rebuild replays an execution's committed steps into a new runner and
// returns it with the operations to re-dispatch.
func (s *Service) rebuild(ctx context.Context, e *store.Execution) (*runner, []interp.Command, error) {
	p, err := s.program(e.Definition)
	if err != nil {
		return nil, nil, err
	}
	steps, err := s.store.Steps(ctx, e.ARN)
	if err != nil || len(steps) == 0 {
		return nil, nil, fmt.Errorf("no steps: %v", err)
	}
	r, err := s.newRunner(e, p)
	if err != nil {
		return nil, nil, err
	}
	input, err := value.ParseString(e.Input)
	if err != nil {
		return nil, nil, err
	}
	x, _ := p.Start(r.info(steps[0].At), input, steps[0].At)
	for _, st := range steps[1:] {
		in, err := decodeInput(st.Input)
		if err != nil {
			return nil, nil, fmt.Errorf("step %d: %w", st.Seq, err)
		}
		x.Step(st.At, in)
	}
	r.x, r.store, r.seq = x, s.store, int64(len(steps))
	r.lastSeen = len(x.History())
	if last := steps[len(steps)-1]; len(last.Events) > 0 && last.Events[len(last.Events)-1].ID != int64(len(x.History())) {
		s.log.Warn("replayed history differs in length from the committed one", "execution", e.ARN)
	}
	return r, x.Pending(), nil
}

// Wait blocks until the execution is no longer running in this process
// (or ctx ends) and returns it.
func (s *Service) Wait(ctx context.Context, arn string) (*store.Execution, error) {
	if err := s.waitDone(ctx, arn); err != nil {
		return nil, err
	}
	return s.DescribeExecution(ctx, arn)
}

// waitDone blocks until the execution of arn is not running in this
// process, or ctx ends.
func (s *Service) waitDone(ctx context.Context, arn string) error {
	s.mu.Lock()
	r := s.running[arn]
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
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
	s.mu.Lock()
	r := s.running[arn]
	s.mu.Unlock()
	if r == nil {
		return nil, errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	select {
	case r.stop <- stopRequest{err: errName, cause: cause}:
	default:
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
	}
	return s.DescribeExecution(ctx, arn)
}

func (s *Service) storeFor(arn string) store.Store {
	if strings.Contains(arn, ":express:") {
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
		return nil, errorf("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	return e, err
}

// ListExecutions lists a state machine's executions, newest first.
func (s *Service) ListExecutions(ctx context.Context, smARN, status string, page store.Page) ([]*store.Execution, string, error) {
	sm, err := s.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, "", err
	}
	switch status {
	case "", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE":
	default:
		return nil, "", errorf("ValidationException", "1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]", status)
	}
	st := s.store
	if sm.Type == "EXPRESS" {
		st = s.express
	}
	list, next, err := st.ListExecutions(ctx, smARN, status, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// History returns a page of an execution's history. The token is the id
// of the last event returned.
func (s *Service) History(ctx context.Context, arn string, token string, limit int, reverse bool) ([]store.Event, string, error) {
	if _, err := s.DescribeExecution(ctx, arn); err != nil {
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

// HistoryEvents converts stored events into JSON values, optionally
// without execution data (input and output).
func HistoryEvents(evs []store.Event, includeData bool) []any {
	out := make([]any, 0, len(evs))
	for _, ev := range evs {
		v, err := value.Parse(ev.JSON)
		if err != nil {
			continue
		}
		if !includeData {
			v = stripData(v.(*value.Object))
		}
		out = append(out, v)
	}
	return out
}

func stripData(ev *value.Object) *value.Object {
	out := value.NewObject(ev.Len())
	for k, v := range ev.All {
		if d, ok := v.(*value.Object); ok && strings.HasSuffix(k, "EventDetails") {
			nd := value.NewObject(d.Len())
			for dk, dv := range d.All {
				switch dk {
				case "input", "output", "parameters":
					continue
				}
				nd.Set(dk, dv)
			}
			v = nd
		}
		out.Set(k, v)
	}
	return out
}

var _ = history.Values

// encodeInput serialises an interpreter input for replay.
func encodeInput(in *interp.Input) []byte {
	b := make([]byte, 0, 64)
	b = append(b, `{"kind":`...)
	b = strconv.AppendInt(b, int64(in.Kind), 10)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, in.ID, 10)
	str := func(key, v string) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = value.AppendString(b, v)
	}
	switch in.Kind {
	case interp.TaskDone, interp.TaskSubmitted:
		if in.Result.Failed() {
			str("error", in.Result.Error)
			str("cause", in.Result.Cause)
		} else {
			b = append(b, `,"output":`...)
			b = value.Append(b, in.Result.Output)
		}
		if in.Result.Delay > 0 {
			b = append(b, `,"delayMs":`...)
			b = strconv.AppendInt(b, in.Result.Delay.Milliseconds(), 10)
		}
	case interp.Stop:
		str("error", in.Error)
		str("cause", in.Cause)
	case interp.TaskStarted:
		str("worker", in.Worker)
	}
	return append(b, '}')
}

func decodeInput(b []byte) (interp.Input, error) {
	var raw struct {
		Kind    interp.InputKind `json:"kind"`
		ID      int64            `json:"id"`
		Output  json.RawMessage  `json:"output"`
		Error   string           `json:"error"`
		Cause   string           `json:"cause"`
		DelayMs int64            `json:"delayMs"`
		Worker  string           `json:"worker"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return interp.Input{}, err
	}
	in := interp.Input{Kind: raw.Kind, ID: raw.ID}
	switch raw.Kind {
	case interp.TaskDone, interp.TaskSubmitted:
		in.Result = task.Result{Error: raw.Error, Cause: raw.Cause, Delay: time.Duration(raw.DelayMs) * time.Millisecond}
		if len(raw.Output) > 0 {
			v, err := value.Parse(raw.Output)
			if err != nil {
				return in, err
			}
			in.Result.Output = v
		}
	case interp.Stop:
		in.Error, in.Cause = raw.Error, raw.Cause
	case interp.TaskStarted:
		in.Worker = raw.Worker
	}
	return in, nil
}
