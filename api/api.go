// Package api serves the AWS Step Functions API over HTTP with the AWS JSON
// 1.0 protocol, so that the AWS CLI, boto3 and the AWS SDKs work against
// stepd unchanged: POST / with X-Amz-Target: AWSStepFunctions.<Operation>,
// a JSON body with lowerCamelCase members, timestamps as epoch seconds, and
// errors as {"__type": "<Code>", "message": "..."}.
//
// The handler does not route on the Host header, so SDK calls sent to a
// "sync-" prefixed host (StartSyncExecution, TestState) reach it as long as
// the client is pointed at stepd's address.
//
// The same handler serves the EventBridge Scheduler API (rest-json,
// scheduler.go) beside it, checks SigV4 signatures when given access keys
// (sigv4.go), and without them answers only requests addressed to a
// loopback or allowed host (guard.go).
//
// It must not import the layers above it: conformance, bench and
// cmd/stepd; nor package store: it speaks to the service alone, which
// names the records it answers with (service/types.go). The AWS error
// codes it answers the service's conditions with are in one table
// (errors.go).
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/service"
)

// maxBody bounds a request body: 256 KiB of input plus the envelope,
// and definitions up to 1 MiB.
const maxBody = 2 << 20

// Handler serves the API.
type Handler struct {
	svc *service.Service
	log *slog.Logger
	// Auth, when set with keys, requires SigV4-signed requests.
	Auth *Auth
	// AllowHosts names hosts besides the loopback ones that requests may be
	// addressed to when Auth has no keys ("*": any). Without keys, a request
	// whose Host is not loopback is refused (DNS rebinding).
	AllowHosts []string
	ops        map[string]func(ctx context.Context, body []byte) (any, error)
	// reads are the places of the operations in readOps, taken first come,
	// first served (see readOps).
	reads chan struct{}
	// requests counts the requests served (ReleaseWhenIdle watches it).
	requests atomic.Int64
	// Work, when set, counts the work done besides requests (the steps
	// executions commit): ReleaseWhenIdle waits until it too stands still,
	// since executions run on (a long evaluation, a Map) after the
	// requests that started them have been answered.
	Work func() int64

	// Observe, when set, is told of every API request: its operation
	// ("unknown" when it names none), its outcome ("OK" or the AWS error
	// code answered) and how long it took (package metrics counts them).
	Observe func(op, code string, took time.Duration)

	// Extensions are stepd's own operations, served like the API's (the
	// same signature or host checks, body limit and JSON answers), keyed
	// by their whole X-Amz-Target ("Stepd.CaseFromHistory"). The assembly
	// adds them: what they do may lie above this package.
	Extensions map[string]func(ctx context.Context, body []byte) (any, error)
}

// New returns a handler for svc.
func New(svc *service.Service, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	h := &Handler{svc: svc, log: log, reads: make(chan struct{}, 2*runtime.GOMAXPROCS(0))}
	h.ops = map[string]func(context.Context, []byte) (any, error){
		"CreateStateMachine":               h.createStateMachine,
		"DescribeStateMachine":             h.describeStateMachine,
		"UpdateStateMachine":               h.updateStateMachine,
		"DeleteStateMachine":               h.deleteStateMachine,
		"ListStateMachines":                h.listStateMachines,
		"ListStateMachineVersions":         h.listStateMachineVersions,
		"PublishStateMachineVersion":       h.publishStateMachineVersion,
		"DeleteStateMachineVersion":        h.deleteStateMachineVersion,
		"CreateStateMachineAlias":          h.createStateMachineAlias,
		"DescribeStateMachineAlias":        h.describeStateMachineAlias,
		"UpdateStateMachineAlias":          h.updateStateMachineAlias,
		"DeleteStateMachineAlias":          h.deleteStateMachineAlias,
		"ListStateMachineAliases":          h.listStateMachineAliases,
		"DescribeStateMachineForExecution": h.describeStateMachineForExecution,
		"StartExecution":                   h.startExecution,
		"StartSyncExecution":               h.startSyncExecution,
		"DescribeExecution":                h.describeExecution,
		"ListExecutions":                   h.listExecutions,
		"StopExecution":                    h.stopExecution,
		"GetExecutionHistory":              h.getExecutionHistory,
		"ValidateStateMachineDefinition":   h.validateDefinition,
		"TagResource":                      h.tagResource,
		"UntagResource":                    h.untagResource,
		"ListTagsForResource":              h.listTags,
		"CreateActivity":                   h.createActivity,
		"DescribeActivity":                 h.describeActivity,
		"DeleteActivity":                   h.deleteActivity,
		"ListActivities":                   h.listActivities,
		"GetActivityTask":                  h.getActivityTask,
		"SendTaskSuccess":                  h.sendTaskSuccess,
		"SendTaskFailure":                  h.sendTaskFailure,
		"SendTaskHeartbeat":                h.sendTaskHeartbeat,
		"TestState":                        h.testState,
		"DescribeMapRun":                   h.describeMapRun,
		"ListMapRuns":                      h.listMapRuns,
		"UpdateMapRun":                     h.updateMapRun,
		"RedriveExecution":                 h.redriveExecution,
	}
	return h
}

// readOps are the operations that only read, from memory or the database,
// and answer at once. At most two per core run at a time, the others queue
// in arrival order: under a load of many clients, reads that all ran at
// once kept the cores from the SQLite writer's goroutine, which every
// StartExecution, StopExecution and callback waits for, and those waited
// in Go's run queue behind them (BenchmarkAPILoad: StartExecution's p99 55-65
// ms with every read let in, 42-49 ms with four at a time). Operations that
// write, wait (GetActivityTask) or run user work (TestState) are not
// queued here.
var readOps = map[string]bool{
	"DescribeStateMachine": true, "ListStateMachines": true, "ListStateMachineVersions": true, "DescribeStateMachineAlias": true,
	"ListStateMachineAliases": true, "DescribeStateMachineForExecution": true, "DescribeExecution": true, "ListExecutions": true,
	"GetExecutionHistory": true, "ValidateStateMachineDefinition": true, "ListTagsForResource": true, "DescribeActivity": true,
	"ListActivities": true, "DescribeMapRun": true, "ListMapRuns": true,
}

// apiError is an error response.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func validation(format string, args ...any) error {
	return fault.New(fault.ErrValidation, format, args...)
}

// ServeHTTP implements http.Handler. Each request is logged at debug
// level and told to Observe.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	op, code := h.serve(w, r)
	took := time.Since(t0)
	if h.Observe != nil {
		h.Observe(op, code, took)
	}
	if h.log.Enabled(r.Context(), slog.LevelDebug) {
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "api request", slog.String("operation", op), slog.String("code", code),
			slog.Duration("took", took), slog.String("remote", r.RemoteAddr))
	}
}

// expressDetailsHeader, a stepd extension, lets a request describe an
// Express execution with DescribeExecution, which AWS refuses (it keeps no
// record of them but in CloudWatch Logs). stepd's console sends it.
const expressDetailsHeader = "X-Stepd-Express-Details"

type expressDetailsKey struct{}

// serve answers one request and returns its operation and outcome.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (op, code string) {
	h.requests.Add(1)
	op = "unknown"
	if r.Method != http.MethodPost {
		return op, writeError(w, &apiError{status: 404, code: "UnknownOperationException", message: "the Step Functions API takes POST requests"})
	}
	target := r.Header.Get("X-Amz-Target")
	name, ok := strings.CutPrefix(target, "AWSStepFunctions.")
	fn := h.ops[name]
	if ext := h.Extensions[target]; !ok && ext != nil && strings.HasPrefix(target, "Stepd.") {
		name, fn, ok = target, ext, true
	}
	if !ok || fn == nil {
		return op, writeError(w, &apiError{status: 400, code: "UnknownOperationException", message: fmt.Sprintf("unknown operation %q", target)})
	}
	op = name
	body, err := readBody(r)
	if err != nil {
		return op, writeError(w, &apiError{status: 400, code: "SerializationException", message: err.Error()})
	}
	if len(body) > maxBody {
		return op, writeError(w, &apiError{status: 413, code: "ValidationException", message: "request body too large"})
	}
	if h.Auth != nil && len(h.Auth.Keys) > 0 {
		if err := h.Auth.verify(r, body); err != nil {
			return op, writeError(w, err)
		}
	} else if !hostAllowed(r.Host, h.AllowHosts) {
		return op, writeError(w, hostError(r.Host))
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	if err := checkBytes(body); err != nil {
		return op, writeError(w, err)
	}
	if err := checkRefused(name, body); err != nil {
		return op, writeError(w, err)
	}
	ctx := r.Context()
	if r.Header.Get(expressDetailsHeader) != "" {
		ctx = service.WithExpressListing(context.WithValue(ctx, expressDetailsKey{}, true))
	}
	if readOps[name] {
		select {
		case h.reads <- struct{}{}:
			defer func() { <-h.reads }()
		case <-ctx.Done():
			return op, writeError(w, &apiError{status: 503, code: "ServiceUnavailable", message: "the request ended while it waited for its turn: " + ctx.Err().Error()})
		}
	}
	out, err := fn(ctx, body)
	if err != nil {
		return op, writeError(w, err)
	}
	hdr := w.Header()
	// The keys in canonical form, set without Header.Set's canonicalizing
	// (x-amzn-RequestId goes out as X-Amzn-Requestid either way).
	hdr["Content-Type"] = []string{"application/x-amz-json-1.0"}
	hdr["X-Amzn-Requestid"] = []string{uuid.New()}
	writeJSON(w, out)
	return op, "OK"
}

// readBody reads a request's body, up to maxBody+1 bytes: into a buffer of
// its length when the request declares one within maxBody (one allocation
// rather than io.ReadAll's growing buffer and the LimitReader), as
// io.ReadAll does otherwise.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, maxBody+1))
}

// encoders are the buffers answers are encoded in, kept between requests
// (an answer of a list is tens of kilobytes).
var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
	raw []byte // the answers that encode themselves
}

// writeJSON writes v as json.Marshal would encode it, through a buffer of
// encoders.
func writeJSON(w io.Writer, v any) {
	e := encoders.Get().(*encoder)
	e.buf.Reset()
	if a, ok := v.(appender); ok {
		// What json.Marshal would have answered (encode.go).
		e.raw = a.appendJSON(e.raw[:0])
		_, _ = w.Write(e.raw)
	} else {
		if err := e.enc.Encode(v); err != nil {
			// What json.Marshal would have answered: nothing.
			e.buf.Reset()
		}
		_, _ = w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	}
	if e.buf.Cap() <= 1<<20 && cap(e.raw) <= 1<<20 {
		encoders.Put(e)
	}
}

// writeError answers err in AWS's shape and returns its code.
func writeError(w http.ResponseWriter, err error) string {
	ae := answerOf(err)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", uuid.New())
	w.Header().Set("X-Amzn-Errortype", ae.code)
	w.WriteHeader(ae.status)
	b, _ := json.Marshal(map[string]string{"__type": ae.code, "message": clipMessage(ae.message)})
	_, _ = w.Write(b)
	return ae.code
}

// epoch renders a time as AWS JSON 1.0 does: seconds since the epoch.
func epoch(t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	f := float64(t.UnixMilli()) / 1000
	return &f
}

// tag is a Step Functions tag.
type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func tagMap(tags []tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	return m
}

// checkToken applies the model's bound on a nextToken's length (1,024;
// ListExecutions' 3,096).
func checkToken(token string, max int) error {
	if len(token) > max {
		return validation("1 validation error detected: Value '%s' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to %d", token, max)
	}
	return nil
}

func pageOf(token string, max int) (service.Page, error) {
	if max < 0 || max > 1000 {
		return service.Page{}, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000", max)
	}
	return service.Page{Token: token, Limit: max}, nil
}

// ReleaseWhenIdle returns the memory the process no longer uses to the
// operating system once the API has served no request (and Work has not
// moved) for idle after a burst, until ctx ends. Go's runtime returns freed memory
// only gradually, and stepd serve runs its collector with a high target,
// so without this a server keeps the peak of its last burst for minutes.
// A release costs one full collection, at most once per idle period.
func (h *Handler) ReleaseWhenIdle(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(idle / 4)
	defer t.Stop()
	h.releaseWhenIdle(ctx, idle, t.C, time.Now())
}

// releaseWhenIdle is ReleaseWhenIdle looking at the requests on each tick
// of tick, idle since start; a test sends the ticks (export_test.go).
func (h *Handler) releaseWhenIdle(ctx context.Context, idle time.Duration, tick <-chan time.Time, start time.Time) {
	done := func() int64 {
		n := h.requests.Load()
		if h.Work != nil {
			n += h.Work()
		}
		return n
	}
	last, since, released := done(), start, true
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick:
			switch n := done(); {
			case n != last:
				last, since, released = n, now, false
			case !released && now.Sub(since) >= idle:
				_ = h.svc.ReleaseMemory(ctx) // the store's caches first, then the Go heap
				debug.FreeOSMemory()
				released = true
			}
		}
	}
}
