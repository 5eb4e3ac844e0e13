// Package notify delivers execution status changes as the EventBridge
// events AWS Step Functions sends ("Step Functions Execution Status
// Change", source aws.states) to the targets stepd serve is given: a
// webhook (an HTTP POST of the event) and/or a command (the event on its
// standard input).
//
// Delivery is at least once: the service queues each status change in its
// store's outbox (store.Outbox) before it commits the change, and a
// Dispatcher takes the queued notices, builds each event from the
// execution as stored, delivers it to every target, and removes the notice
// only once all of them took it. A failed delivery is tried again with
// exponential back-off (Backoff), to the targets that did not take it; a
// process that dies leaves its notices in
// the store for the next one. A notice whose execution ended otherwise (a
// restart ran it again) is dropped, and one still undelivered a day after
// it was queued is given up, with an error in the server's log. Nothing of
// this runs on an execution's path: the service only queues.
//
// It must not import service (it reads executions from the store),
// scheduler or api, nor the layers above (conformance, bench, cmd/stepd):
// package server (stepd serve) starts the dispatcher.
package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// DetailType and Source are the event's detail-type and source.
const (
	DetailType = "Step Functions Execution Status Change"
	Source     = "aws.states"
)

// maxPayload is EventBridge's limit on the escaped input and output an
// event carries (248 KB); beyond it AWS leaves them out.
const maxPayload = 248 * 1024

// EventID is the event's id: derived from the execution and the status, so
// that every delivery of one status change carries the same id and a
// receiver can drop duplicates (UUID layout, version 8: the bytes are the
// start of a SHA-256).
func EventID(executionARN, status string) string {
	h := sha256.Sum256([]byte(executionARN + "\x00" + status))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:16])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// Event returns the event of execution e's change to status (which may be
// older than e's status: a RUNNING notice delivered after the execution
// ended describes it as it started), in AWS's shape.
func Event(e *store.Execution, status, region, account string) []byte {
	running := status == "RUNNING"
	at := e.Stopped
	if running || at.IsZero() {
		at = e.Started
	}
	b := []byte(`{"version":"0","id":`)
	b = value.AppendString(b, EventID(e.ARN, status))
	b = append(b, `,"detail-type":`...)
	b = value.AppendString(b, DetailType)
	b = append(b, `,"source":`...)
	b = value.AppendString(b, Source)
	b = append(b, `,"account":`...)
	b = value.AppendString(b, account)
	b = append(b, `,"time":`...)
	b = value.AppendString(b, at.UTC().Format("2006-01-02T15:04:05Z"))
	b = append(b, `,"region":`...)
	b = value.AppendString(b, region)
	b = append(b, `,"resources":[`...)
	b = value.AppendString(b, e.ARN)
	b = append(b, `],"detail":{"executionArn":`...)
	b = value.AppendString(b, e.ARN)
	b = append(b, `,"stateMachineArn":`...)
	b = value.AppendString(b, e.StateMachineARN)
	b = append(b, `,"name":`...)
	b = value.AppendString(b, e.Name)
	b = append(b, `,"status":`...)
	b = value.AppendString(b, status)
	b = append(b, `,"startDate":`...)
	b = strconv.AppendInt(b, e.Started.UnixMilli(), 10)
	b = append(b, `,"stopDate":`...)
	if running || e.Stopped.IsZero() {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, e.Stopped.UnixMilli(), 10)
	}
	output, hasOutput := e.Output, !running && status == "SUCCEEDED"
	outLen := len(value.AppendString(nil, output))
	inLen := len(value.AppendString(nil, e.Input))
	outOK := outLen <= maxPayload
	inOK := inLen+outLen*boolInt(hasOutput && outOK) <= maxPayload
	b = append(b, `,"input":`...)
	if inOK {
		b = value.AppendString(b, e.Input)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"inputDetails":{"included":`...)
	b = strconv.AppendBool(b, inOK)
	b = append(b, `},"output":`...)
	switch {
	case hasOutput && outOK:
		b = value.AppendString(b, output)
		b = append(b, `,"outputDetails":{"included":true}`...)
	case hasOutput:
		b = append(b, `null,"outputDetails":{"included":false}`...)
	default:
		b = append(b, `null,"outputDetails":null`...)
	}
	b = append(b, `,"error":`...)
	b = nullable(b, e.Error, running)
	b = append(b, `,"cause":`...)
	b = nullable(b, e.Cause, running)
	return append(b, "}}"...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullable(b []byte, s string, running bool) []byte {
	if s == "" || running {
		return append(b, "null"...)
	}
	return value.AppendString(b, s)
}

// Target receives events.
type Target interface {
	// Deliver delivers one event; an error means it was not taken.
	Deliver(ctx context.Context, event []byte) error
	// String names the target in the server's log.
	String() string
}

// Webhook POSTs each event as application/json to URL; any 2xx answer
// takes it.
type Webhook struct {
	URL    string
	Client *http.Client // nil: a client with a 10-second timeout
}

var defaultClient = &http.Client{Timeout: 10 * time.Second}

// Deliver implements Target.
func (w *Webhook) Deliver(ctx context.Context, event []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(event))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c := w.Client
	if c == nil {
		c = defaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s answered %s", w.URL, resp.Status)
	}
	return nil
}

func (w *Webhook) String() string { return "webhook " + w.URL }

// Command runs a program for each event, with the event on its standard
// input; exit status 0 takes it. It is killed after Timeout (default 30 s).
type Command struct {
	Argv    []string
	Env     map[string]string
	Timeout time.Duration
}

// Deliver implements Target.
func (c *Command) Deliver(ctx context.Context, event []byte) error {
	if len(c.Argv) == 0 {
		return errors.New("no command")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(event)
	cmd.Env = os.Environ()
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := bytes.TrimSpace(stderr.Bytes()); len(msg) > 0 {
			return fmt.Errorf("%w: %.500s", err, msg)
		}
		return err
	}
	return nil
}

func (c *Command) String() string { return fmt.Sprintf("command %q", c.Argv) }

// Store is what a Dispatcher reads and writes: the outbox and the
// executions.
type Store interface {
	store.Outbox
	GetExecution(ctx context.Context, arn string) (*store.Execution, error)
}

// Dispatcher delivers the notices of a store's outbox to targets.
type Dispatcher struct {
	Store           Store
	Targets         []Target
	Region, Account string
	Log             *slog.Logger
	// Backoff is the wait before delivery attempt n+1 after n failed
	// ones (n ≥ 1); nil means 1 s doubled each time, up to 5 minutes.
	Backoff func(n int) time.Duration
	// Poll is how often the outbox is read without a Kick (default 1 s).
	Poll time.Duration
	// GiveUp is how long after being queued a notice is dropped if still
	// not delivered (default 24 hours, as EventBridge retries).
	GiveUp time.Duration

	once sync.Once
	kick chan struct{}
	// took records, by notice, the targets that took its event, so that a
	// retry after another target failed does not deliver it to them again
	// (in memory: after a restart every target gets it again).
	mu   sync.Mutex
	took map[int64]map[int]bool
}

// hold is how long a notice taken stays hidden from other takers while it
// is delivered.
const hold = time.Minute

func (d *Dispatcher) init() {
	d.once.Do(func() { d.kick, d.took = make(chan struct{}, 1), map[int64]map[int]bool{} })
}

// Kick makes the dispatcher read the outbox now (the service calls it
// after queuing a notice); it never blocks.
func (d *Dispatcher) Kick() {
	d.init()
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) backoff(n int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(n)
	}
	b := time.Second << min(n-1, 20)
	return min(b, 5*time.Minute)
}

// Run delivers notices until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	poll := d.Poll
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for d.round(ctx) {
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.kick:
		}
	}
}

// batch is how many notices a round takes.
const batch = 64

// round delivers the notices due now, several at once; it reports whether
// it took a full batch (more may be due).
func (d *Dispatcher) round(ctx context.Context) bool {
	ns, err := d.Store.TakeNotices(ctx, time.Now(), hold, batch)
	if err != nil {
		if ctx.Err() == nil {
			d.log().Warn("events: reading the outbox", "err", err)
		}
		return false
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, n := range ns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d.deliver(ctx, n)
		})
	}
	wg.Wait()
	return len(ns) == batch
}

func (d *Dispatcher) log() *slog.Logger {
	if d.Log == nil {
		return slog.Default()
	}
	return d.Log
}

// deliver delivers one notice to every target, and removes it or sets it
// to be tried again.
func (d *Dispatcher) deliver(ctx context.Context, n *store.Notice) {
	giveUp := d.GiveUp
	if giveUp <= 0 {
		giveUp = 24 * time.Hour
	}
	retry := func(why error) {
		if time.Since(n.At) > giveUp {
			d.log().Error("events: giving up a status change not delivered", "execution", n.ExecutionARN, "status", n.Status,
				"attempts", n.Attempts+1, "err", why)
			d.done(ctx, n)
			return
		}
		if err := d.Store.RetryNotice(ctx, n.ID, time.Now().Add(d.backoff(n.Attempts+1))); err != nil && ctx.Err() == nil {
			d.log().Warn("events: recording a failed delivery", "execution", n.ExecutionARN, "err", err)
		}
	}
	e, err := d.Store.GetExecution(ctx, n.ExecutionARN)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Queued just before the execution was created, or for a start
		// that failed: wait a little, then drop it.
		if time.Since(n.At) < time.Minute {
			retry(err)
			return
		}
		d.done(ctx, n)
		return
	case err != nil:
		retry(err)
		return
	case n.Status != "RUNNING" && e.Status != n.Status:
		if e.Status == "RUNNING" {
			// Queued before its step was committed: not yet.
			retry(fmt.Errorf("the execution is still RUNNING"))
			return
		}
		// The execution ended otherwise (it ran again after a restart).
		d.done(ctx, n)
		return
	}
	ev := Event(e, n.Status, d.Region, d.Account)
	var errs []error
	for i, t := range d.Targets {
		d.mu.Lock()
		took := d.took[n.ID][i]
		d.mu.Unlock()
		if took {
			continue
		}
		if err := t.Deliver(ctx, ev); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
			continue
		}
		d.mu.Lock()
		if d.took[n.ID] == nil {
			d.took[n.ID] = map[int]bool{}
		}
		d.took[n.ID][i] = true
		d.mu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return // stopping: the notice is held, then taken again
		}
		d.log().Warn("events: delivery failed; will retry", "execution", n.ExecutionARN, "status", n.Status, "attempt", n.Attempts+1, "err", err)
		retry(err)
		return
	}
	d.done(ctx, n)
}

func (d *Dispatcher) done(ctx context.Context, n *store.Notice) {
	d.mu.Lock()
	delete(d.took, n.ID)
	d.mu.Unlock()
	if err := d.Store.DoneNotice(ctx, n.ID); err != nil && ctx.Err() == nil {
		d.log().Warn("events: removing a delivered notice", "execution", n.ExecutionARN, "err", err)
	}
}
