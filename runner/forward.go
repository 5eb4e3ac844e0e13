package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// forwarded is a stop or a callback that a node sends, through a shared
// store (store.Shared), to the node that owns the execution.
type forwarded struct {
	V      int    `json:"v"`
	Kind   string `json:"kind"` // stop, success, failure, heartbeat, started, updateMapRun
	Token  string `json:"token,omitempty"`
	Worker string `json:"worker,omitempty"` // started: the worker that took the task
	Output string `json:"output,omitempty"` // JSON text, for success (updateMapRun: the update's object)
	Error  string `json:"error,omitempty"`
	Cause  string `json:"cause,omitempty"`
}

// decodeForwarded reads a message that encodeForwarded wrote.
func decodeForwarded(b []byte) (forwarded, error) {
	var m forwarded
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("forwarded message: %w", err)
	}
	if dec.More() {
		return m, errors.New("forwarded message: text after the object")
	}
	if m.V != 1 {
		return m, fmt.Errorf("forwarded message: version %d, want 1", m.V)
	}
	switch m.Kind {
	case "stop":
	case "updateMapRun":
		if v, err := value.ParseString(m.Output); err != nil {
			return m, fmt.Errorf("forwarded message: update: %w", err)
		} else if _, ok := v.(*value.Object); !ok {
			return m, errors.New("forwarded message: update: not an object")
		}
	case "success":
		if _, err := value.ParseString(m.Output); err != nil {
			return m, fmt.Errorf("forwarded message: output: %w", err)
		}
		fallthrough
	case "failure", "heartbeat", "started":
		if m.Token == "" {
			return m, fmt.Errorf("forwarded message: %s without a token", m.Kind)
		}
	default:
		return m, fmt.Errorf("forwarded message: unknown kind %q", m.Kind)
	}
	return m, nil
}

func encodeForwarded(m forwarded) []byte {
	m.V = 1
	b, _ := json.Marshal(m) // strings only: cannot fail
	return b
}

// callbackMessage is the forwarded form of a callback's input.
func callbackMessage(token string, in interp.Input) forwarded {
	switch {
	case in.Kind == interp.TaskHeartbeat:
		return forwarded{Kind: "heartbeat", Token: token}
	case in.Result.Error != "":
		return forwarded{Kind: "failure", Token: token, Error: in.Result.Error, Cause: in.Result.Cause}
	}
	return forwarded{Kind: "success", Token: token, Output: value.String(in.Result.Output)}
}

// callbackInput is the input of a forwarded callback.
func callbackInput(m forwarded) interp.Input {
	switch m.Kind {
	case "heartbeat":
		return interp.Input{Kind: interp.TaskHeartbeat}
	case "started":
		return interp.Input{Kind: interp.TaskStarted, Worker: m.Worker}
	case "failure":
		return interp.Input{Kind: interp.TaskDone, Result: task.Result{Error: m.Error, Cause: m.Cause}}
	}
	v, _ := value.ParseString(m.Output) // checked by decodeForwarded
	return interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: v}}
}

// shared returns the shared store that holds a Standard execution run by
// another node, or nil (single-node stores, Express executions).
func (r *Runner) shared(execution string) store.Shared {
	if a, err := arn.Parse(execution); err == nil && a.Type == arn.Express {
		return nil
	}
	return r.cfg.Shared
}

// The owner's verdicts on a forwarded callback (the replies of receive).
const (
	verdictDelivered = ""
	verdictClosed    = "closed"  // the task completed, timed out or was cancelled
	verdictNoTask    = "no-task" // no task has this token
	verdictEnded     = "ended"   // the execution has ended
)

// forwardWait bounds how long a callback forwarded to another node waits
// for the owner's verdict: an owner that died must first be replaced
// (its lease, then a claim). A callback still unanswered then is answered
// as accepted; it stays queued, and the owner delivers it later.
const forwardWait = 20 * time.Second

// forward sends a callback for an execution this node does not run to its
// owner, and answers as the owner would have: it waits for the owner's
// verdict (up to forwardWait).
func (r *Runner) forward(ctx context.Context, sh store.Shared, execution string, m forwarded) error {
	asked, cancel := context.WithTimeout(ctx, forwardWait)
	defer cancel()
	reply, err := sh.Ask(asked, execution, encodeForwarded(m))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return r.noDriver(ctx, execution)
	case err != nil && ctx.Err() == nil && asked.Err() != nil:
		r.log.Warn("the owner of an execution has not answered a forwarded callback yet; it stays queued", "execution", execution, "kind", m.Kind)
		return nil
	case err != nil:
		return err
	}
	switch string(reply) {
	case verdictDelivered:
		return nil
	case verdictClosed:
		return errTaskClosed()
	case verdictNoTask:
		return fault.New(fault.ErrNoTask, "Task Does Not Exist: no task is waiting for this token")
	case verdictEnded:
		return r.noDriver(ctx, execution)
	}
	return fmt.Errorf("the owner of %s answered %q to a forwarded callback", execution, reply)
}

// stopElsewhere asks the owner of an execution that another node runs to
// stop it, and waits (up to 10 s) until it has ended.
func (r *Runner) stopElsewhere(ctx context.Context, sh store.Shared, execution, errName, cause string) error {
	if err := sh.Send(ctx, execution, encodeForwarded(forwarded{Kind: "stop", Error: errName, Cause: cause})); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, err := r.storeFor(execution).GetExecution(ctx, execution)
		if err != nil || e.Status != string(interp.Running) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Receive delivers, until ctx ends, the stops and callbacks that other
// nodes forward to the executions this node runs (a shared store only;
// with another store it returns at once).
func (r *Runner) Receive(ctx context.Context) error {
	if r.cfg.Shared == nil {
		return nil
	}
	return r.cfg.Shared.Receive(ctx, r.receive)
}

// receive delivers one forwarded message and returns the verdict for the
// node that forwarded it. A message for an execution this node owns but
// has not adopted yet fails, to be offered again; one that cannot be
// delivered any more (a closed task, an ended execution) gets the verdict
// that says why, and a bad message is logged and dropped.
func (r *Runner) receive(ctx context.Context, execution string, msg []byte) ([]byte, error) {
	m, err := decodeForwarded(msg)
	if err != nil {
		r.log.Error("dropping a forwarded message", "execution", execution, "err", err)
		return nil, nil
	}
	// The input goes to the execution's driver, or to its next one when
	// that one fell asleep first (withDriver).
	var delivered error
	d := r.withDriver(execution, func(d *engine.Driver) bool {
		switch m.Kind {
		case "stop":
			return d.Stop(m.Error, m.Cause)
		case "updateMapRun":
			v, _ := value.ParseString(m.Output) // checked by decodeForwarded
			return d.UpdateMapRun(v.(*value.Object))
		}
		delivered = d.Deliver(m.Token, callbackInput(m))
		return !errors.Is(delivered, engine.ErrSlept)
	})
	if d == nil {
		e, err := r.cfg.Store.GetExecution(ctx, execution)
		if err != nil {
			return nil, err
		}
		if e.Status == string(interp.Running) {
			return nil, fmt.Errorf("execution %s is not running here yet", execution)
		}
		return []byte(verdictEnded), nil
	}
	switch m.Kind {
	case "stop":
		return nil, nil
	case "updateMapRun":
		return []byte(verdictDelivered), nil
	}
	switch err := delivered; {
	case err == nil:
		return []byte(verdictDelivered), nil
	case errors.Is(err, engine.ErrEnded):
		return []byte(verdictEnded), nil
	case errors.Is(err, engine.ErrTaskClosed):
		return []byte(verdictClosed), nil
	case errors.Is(err, engine.ErrNoTask):
		return []byte(verdictNoTask), nil
	default:
		r.log.Info("a forwarded callback found no open task", "execution", execution, "kind", m.Kind, "err", err)
		return []byte(verdictClosed), nil
	}
}

// offerShared queues an activity task in the shared store, for the
// workers of every node, retrying while the store fails.
func (r *Runner) offerShared(sh store.Shared, t *store.ActivityTask) {
	r.retryTask("offering an activity task", t, func(ctx context.Context) error { return sh.OfferTask(ctx, t) })
}

// retryTask calls fn until it succeeds or the service stops, waiting
// longer between failures.
func (r *Runner) retryTask(what string, t *store.ActivityTask, fn func(ctx context.Context) error) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := fn(r.ctx)
		if err == nil || r.ctx.Err() != nil {
			return
		}
		r.log.Warn(what+"; retrying", "execution", t.ExecutionARN, "err", err)
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// takeShared waits up to wait for a task of the activity in the shared
// store, and tells its execution's owner that worker took it. A task whose
// execution has ended is skipped.
//
// The task stays in the store, held by this node, until the worker has it
// (or it has closed): a node that dies while it hands a task out (the
// owner may have recorded ActivityStarted already) leaves it to be taken
// again once its lease lapses, and the owner, asked again, records nothing
// new. The first worker may then have it too: one of the two answers is
// taken, and the other finds the task closed.
func (r *Runner) takeShared(ctx context.Context, sh store.Shared, activity, worker string, wait time.Duration) (token, input string, err error) {
	deadline := time.Now().Add(wait)
	for {
		offered := sh.Offered(activity)
		t, err := sh.TakeTask(ctx, activity)
		if err != nil {
			return "", "", err
		}
		if t != nil {
			release := func() {
				go r.retryTask("queueing an activity task again", t, func(ctx context.Context) error { return sh.ReleaseTask(ctx, t.Token) })
			}
			drop := func() {
				go r.retryTask("removing an activity task handed out", t, func(ctx context.Context) error { return sh.DropTask(ctx, t.Token) })
			}
			open, err := r.startShared(ctx, sh, t, worker)
			switch {
			case err != nil:
				// The worker's poll ended, or the store failed, while the
				// owner was asked: the task goes back to the queue.
				release()
				return "", "", err
			case !open:
				drop() // its task has closed, or its execution has ended
				continue
			}
			return r.handOut(ctx, t, release, drop)
		}
		if time.Now().After(deadline) {
			return "", "", nil
		}
		select {
		case <-ctx.Done():
			return "", "", nil
		case <-r.polls:
			return "", "", nil
		case <-offered:
		case <-time.After(min(activityPoll, time.Until(deadline))):
		}
	}
}

// startShared tells the owner of a task's execution that worker took it,
// and reports whether the task is still open. An owner that does not
// answer at once (it died and is being replaced) is not waited for: the
// task is taken as open, for the worker whose poll may end any moment,
// and the message stays queued for the owner's successor.
func (r *Runner) startShared(ctx context.Context, sh store.Shared, t *store.ActivityTask, worker string) (open bool, err error) {
	started := interp.Input{Kind: interp.TaskStarted, Worker: worker}
	var delivered error
	if d := r.withDriver(t.ExecutionARN, func(d *engine.Driver) bool {
		delivered = d.Deliver(t.Token, started)
		return !errors.Is(delivered, engine.ErrSlept)
	}); d != nil {
		return delivered == nil, nil
	}
	asked, cancel := context.WithTimeout(ctx, startedWait)
	defer cancel()
	reply, err := sh.Ask(asked, t.ExecutionARN, encodeForwarded(forwarded{Kind: "started", Token: t.Token, Worker: worker}))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil // its execution has ended
	case err != nil && ctx.Err() == nil && asked.Err() != nil:
		return true, nil // the owner has not answered: it is being replaced
	case err != nil:
		return false, err
	}
	return string(reply) == verdictDelivered, nil
}

// handOut returns a task that the execution's owner has marked started to
// the worker whose GetActivityTask took it, and forgets it (drop), unless
// that call has ended meanwhile (the worker's client gave up while the
// owner was asked, which under load may take a while): its answer would
// reach no one, and the task would wait for its timeout. It is queued
// again instead (release); the next worker to take it marks it started
// once more, which records nothing new, and gets it.
func (r *Runner) handOut(ctx context.Context, t *store.ActivityTask, release, drop func()) (token, input string, err error) {
	if ctx.Err() != nil {
		r.log.Info("an activity worker's poll ended as it got a task; the task is queued again", "execution", t.ExecutionARN)
		release()
		return "", "", nil
	}
	drop()
	return t.Token, t.Input, nil
}

// startedWait bounds how long a GetActivityTask that took a task waits for
// the owner's verdict on it (a live owner answers within milliseconds).
const startedWait = 2 * time.Second

// activityPoll is how often a waiting GetActivityTask looks for a task in
// a shared store without being woken: offers wake it (store.Shared's
// Offered), so this only bounds how late it finds one whose offer it did
// not hear.
const activityPoll = 5 * time.Second

// elsewherePoll is how often Wait reads an execution that another node of
// a shared store runs.
const elsewherePoll = 500 * time.Millisecond

// waitElsewhere returns the execution once it is not running, reading it
// from a shared store again while another node runs it (a .sync child
// claimed by another node); with a single-node store it reads it once.
func (r *Runner) waitElsewhere(ctx context.Context, execution string) (*store.Execution, error) {
	for {
		e, err := r.storeFor(execution).GetExecution(ctx, execution)
		if err != nil || e.Status != string(interp.Running) || r.shared(execution) == nil {
			return e, err
		}
		r.mu.Lock()
		_, running := r.running[execution]
		_, dormant := r.dormant[execution]
		r.mu.Unlock()
		if running || dormant {
			// Adopted here meanwhile.
			if err := r.waitDone(ctx, execution); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(elsewherePoll):
		}
	}
}

// UpdateMapRun delivers a Map Run update (UpdateMapRun's arguments) to the
// driver of its parent execution, here or, on a shared store, on the node
// that runs it, like a stop; ErrNotRunningHere when no node runs it.
func (r *Runner) UpdateMapRun(ctx context.Context, executionARN string, args *value.Object) error {
	if d := r.withDriver(executionARN, func(d *engine.Driver) bool { return d.UpdateMapRun(args) }); d != nil {
		return nil
	}
	sh := r.shared(executionARN)
	if sh == nil {
		return ErrNotRunningHere
	}
	msg := encodeForwarded(forwarded{Kind: "updateMapRun", Output: string(value.Append(nil, args))})
	if err := sh.Send(ctx, executionARN, msg); err != nil {
		return fmt.Errorf("forwarding UpdateMapRun to the node that runs %s: %w", executionARN, err)
	}
	return nil
}

// CheckToken returns ErrBadToken, as a callback would, when token is not
// one this server's key signed (malformed, made by hand, or signed by
// another server).
func (r *Runner) CheckToken(ctx context.Context, token string) error {
	key, err := r.TokenKey(ctx)
	if err != nil {
		return err
	}
	if _, _, ok := interp.VerifyToken(key, token); !ok {
		return fault.New(fault.ErrBadToken, "Invalid Token: 'Invalid token'")
	}
	return nil
}
