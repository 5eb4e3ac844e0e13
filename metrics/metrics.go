// Package metrics exposes what stepd serve does as Prometheus metrics
// (the text format at GET /metrics): the AWS/States metrics that AWS Step
// Functions publishes to CloudWatch, named in Prometheus's style (the HELP
// text of each names the AWS metric) and labelled with AWS's dimensions,
// plus the engine's own (steps committed, store commit latency and group
// commit size, API requests by operation and code; gauges such as pending
// timers are added with Gauge).
//
// The AWS metrics are derived from the history events of the steps the
// service commits (service.Observer), so they count exactly what the
// execution histories show. The hot path costs a few atomic adds per step:
// the counters of a state machine are resolved once per execution and
// those of a resource once per process (sync.Map reads take no lock).
//
// It must not import service (it meets service.Observer without it),
// scheduler or api, nor the layers above (conformance, bench, cmd/stepd):
// package server (stepd serve) hooks it in.
package metrics

import (
	"bytes"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/store"
)

// Label names: AWS's CloudWatch dimensions, in Prometheus's style.
const (
	labelStateMachine = "state_machine_arn"
	labelActivity     = "activity_arn"
	labelLambda       = "lambda_function_arn"
	labelIntegration  = "service_integration_resource_arn"
)

// timeBuckets are the histograms' buckets in seconds: 1 ms to about 2.8 h.
var timeBuckets = prometheus.ExponentialBuckets(0.001, 4, 12)

// Metrics holds stepd's metrics and the registry that exposes them.
type Metrics struct {
	reg *prometheus.Registry

	execStarted, execSucceeded, execFailed, execAborted, execTimedOut, execThrottled *prometheus.CounterVec
	execTime                                                                         *prometheus.HistogramVec
	// redrives of Standard executions, and the outcomes of the redriven ones
	redriven, redrivenSucceeded, redrivenFailed, redrivenAborted, redrivenTimedOut *prometheus.CounterVec

	families [3]*family // by kind: activity, lambda, integration

	steps, commitErrors prometheus.Counter
	commitLatency       prometheus.Histogram
	batchSize           prometheus.Histogram
	batchLatency        prometheus.Histogram

	apiRequests *prometheus.CounterVec
	apiLatency  *prometheus.HistogramVec

	machines   sync.Map // state machine ARN -> *machine
	executions sync.Map // execution ARN -> *execution
}

// machine holds the counters of one state machine.
type machine struct {
	started, succeeded, failed, aborted, timedOut prometheus.Counter
	time                                          prometheus.Observer

	redriven, rSucceeded, rFailed, rAborted, rTimedOut prometheus.Counter
}

// execution is what the metrics keep of one execution while it runs:
// touched only by the goroutine that commits its steps (a driver commits
// one step at a time).
type execution struct {
	m       *machine
	started time.Time       // zero for one resumed after a restart
	calls   map[int64]*call // open task calls by the id of their latest event
	// redriven is set once the execution was redriven: its outcome is
	// counted by the Redriven… metrics too.
	redriven bool
}

// call is one task invocation between its Scheduled event and its end.
type call struct {
	res                  *resource
	scheduled, startedAt time.Time
}

// kinds of task calls, as AWS's metrics group them.
const (
	activityKind = iota
	lambdaKind
	integrationKind
)

// family is the metrics of one kind of task call.
type family struct {
	scheduled, started, succeeded, failed, timedOut, heartbeatTimedOut *prometheus.CounterVec
	runTime, scheduleTime, time                                        *prometheus.HistogramVec
	resources                                                          sync.Map // resource ARN -> *resource
	// byMembers finds a resource from the members of a Scheduled event
	// (resourceType, then resource) without making its ARN (resourceFor).
	mu        sync.RWMutex
	byMembers map[string]map[string]*resource
}

// resource holds the counters of one activity, Lambda function or service
// integration resource.
type resource struct {
	scheduled, started, succeeded, failed, timedOut, heartbeatTimedOut prometheus.Counter
	runTime, scheduleTime, time                                        prometheus.Observer
}

// New returns stepd's metrics, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, aws, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "stepd", Name: name, Help: "AWS/States " + aws + ": " + help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, aws, help string, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "stepd", Name: name, Help: "AWS/States " + aws + ": " + help, Buckets: timeBuckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.execStarted = counter("executions_started_total", "ExecutionsStarted", "executions started.", labelStateMachine)
	m.execSucceeded = counter("executions_succeeded_total", "ExecutionsSucceeded", "executions that succeeded.", labelStateMachine)
	m.execFailed = counter("executions_failed_total", "ExecutionsFailed", "executions that failed.", labelStateMachine)
	m.execAborted = counter("executions_aborted_total", "ExecutionsAborted", "executions stopped (ABORTED).", labelStateMachine)
	m.execTimedOut = counter("executions_timed_out_total", "ExecutionsTimedOut", "executions that timed out.", labelStateMachine)
	m.execThrottled = counter("execution_throttled_total", "ExecutionThrottled", "StartExecution calls throttled (stepd throttles none: always 0).", labelStateMachine)
	m.redriven = counter("executions_redriven_total", "ExecutionsRedriven", "executions redriven (RedriveExecution).", labelStateMachine)
	m.redrivenSucceeded = counter("redriven_executions_succeeded_total", "RedrivenExecutionsSucceeded", "redriven executions that succeeded.", labelStateMachine)
	m.redrivenFailed = counter("redriven_executions_failed_total", "RedrivenExecutionsFailed", "redriven executions that failed.", labelStateMachine)
	m.redrivenAborted = counter("redriven_executions_aborted_total", "RedrivenExecutionsAborted", "redriven executions stopped (ABORTED).", labelStateMachine)
	m.redrivenTimedOut = counter("redriven_executions_timed_out_total", "RedrivenExecutionsTimedOut", "redriven executions that timed out.", labelStateMachine)
	m.execTime = histogram("execution_time_seconds", "ExecutionTime", "seconds from an execution's start to its end.", labelStateMachine)

	for kind, f := range []struct{ prefix, aws, awsTime, label, what string }{
		{"activities", "Activities", "Activity", labelActivity, "activity tasks"},
		{"lambda_functions", "LambdaFunctions", "LambdaFunction", labelLambda, "Lambda function tasks (a Task whose Resource is the function's ARN)"},
		{"service_integrations", "ServiceIntegrations", "ServiceIntegration", labelIntegration, "service integration tasks"},
	} {
		single := f.prefix[:len(f.prefix)-1]
		if kind == activityKind {
			single = "activity"
		}
		fam := &family{
			scheduled: counter(f.prefix+"_scheduled_total", f.aws+"Scheduled", f.what+" scheduled.", f.label),
			started:   counter(f.prefix+"_started_total", f.aws+"Started", f.what+" started.", f.label),
			succeeded: counter(f.prefix+"_succeeded_total", f.aws+"Succeeded", f.what+" that succeeded.", f.label),
			failed:    counter(f.prefix+"_failed_total", f.aws+"Failed", f.what+" that failed.", f.label),
			timedOut:  counter(f.prefix+"_timed_out_total", f.aws+"TimedOut", f.what+" that timed out.", f.label),
			runTime:   histogram(single+"_run_time_seconds", f.awsTime+"RunTime", "seconds from the start of "+f.what+" to their end.", f.label),
			scheduleTime: histogram(single+"_schedule_time_seconds", f.awsTime+"ScheduleTime",
				"seconds "+f.what+" stayed scheduled before they started.", f.label),
			time: histogram(single+"_time_seconds", f.awsTime+"Time", "seconds from the scheduling of "+f.what+" to their end.", f.label),
		}
		if kind == activityKind {
			fam.heartbeatTimedOut = counter("activities_heartbeat_timed_out_total", "ActivitiesHeartbeatTimedOut", "activity tasks whose heartbeat timed out.", f.label)
		}
		m.families[kind] = fam
	}

	m.steps = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "stepd", Name: "transitions_total",
		Help: "Steps of executions committed: each is one input the interpreter took (a task result, a timer, a callback, a stop) and the transitions it made."})
	m.commitErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "stepd", Name: "store_commit_errors_total",
		Help: "Steps the store refused (stepd retries them with back-off)."})
	m.commitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "stepd", Name: "store_commit_seconds",
		Help: "Seconds an execution waited for the store to keep one step (group commit included).", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "stepd", Name: "store_batch_writes",
		Help: "Writes per transaction of the SQLite store's group commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 10)})
	m.batchLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "stepd", Name: "store_batch_seconds",
		Help: "Seconds per transaction of the SQLite store's group commit (fsync included).", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	m.apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "stepd", Name: "api_requests_total",
		Help: "API requests by operation and outcome (OK, or the AWS error code answered)."}, []string{"operation", "code"})
	m.apiLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "stepd", Name: "api_request_seconds",
		Help: "Seconds to answer API requests, by operation.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12)}, []string{"operation"})
	m.reg.MustRegister(m.steps, m.commitErrors, m.commitLatency, m.batchSize, m.batchLatency, m.apiRequests, m.apiLatency)
	return m
}

// Handler serves the metrics in Prometheus's text format (or in the
// format the scraper negotiates).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Register adds collectors (e.g. gauges that read a service) to the
// registry.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Gauge registers a gauge whose value fn reads at each scrape.
func (m *Metrics) Gauge(name, help string, fn func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "stepd", Name: name, Help: help}, fn))
}

// Counter registers a counter whose value fn reads at each scrape.
func (m *Metrics) Counter(name, help string, fn func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "stepd", Name: name, Help: help}, fn))
}

// Commit observes one transaction of the store's group commit (it is
// given to sqlite.Store.ObserveCommits).
func (m *Metrics) Commit(writes int, took time.Duration) {
	m.batchSize.Observe(float64(writes))
	m.batchLatency.Observe(took.Seconds())
}

// APIRequest observes one API request: its operation ("unknown" when it
// names none we serve), its outcome ("OK" or the error code) and how long
// it took.
func (m *Metrics) APIRequest(op, code string, took time.Duration) {
	m.apiRequests.WithLabelValues(op, code).Inc()
	m.apiLatency.WithLabelValues(op).Observe(took.Seconds())
}

// machine returns the counters of a state machine.
func (m *Metrics) machine(smARN string) *machine {
	if v, ok := m.machines.Load(smARN); ok {
		return v.(*machine)
	}
	mc := &machine{
		started:   m.execStarted.WithLabelValues(smARN),
		succeeded: m.execSucceeded.WithLabelValues(smARN),
		failed:    m.execFailed.WithLabelValues(smARN),
		aborted:   m.execAborted.WithLabelValues(smARN),
		timedOut:  m.execTimedOut.WithLabelValues(smARN),
		time:      m.execTime.WithLabelValues(smARN),

		redriven:   m.redriven.WithLabelValues(smARN),
		rSucceeded: m.redrivenSucceeded.WithLabelValues(smARN),
		rFailed:    m.redrivenFailed.WithLabelValues(smARN),
		rAborted:   m.redrivenAborted.WithLabelValues(smARN),
		rTimedOut:  m.redrivenTimedOut.WithLabelValues(smARN),
	}
	m.execThrottled.WithLabelValues(smARN) // shown, at 0
	v, _ := m.machines.LoadOrStore(smARN, mc)
	return v.(*machine)
}

// Started implements service.Observer.
func (m *Metrics) Started(e *store.Execution, first *store.Step) {
	x := &execution{m: m.machine(e.StateMachineARN), started: e.Started}
	x.m.started.Inc()
	m.executions.Store(e.ARN, x)
	m.step(x, first)
}

// Resumed implements service.Observer: an execution resumed after a
// restart keeps its start time, so its ExecutionTime is observed at its
// end.
func (m *Metrics) Resumed(e *store.Execution) {
	m.executions.Store(e.ARN, &execution{m: m.machine(e.StateMachineARN), started: e.Started})
}

// Committed implements service.Observer.
func (m *Metrics) Committed(s *store.Step, took time.Duration, err error) {
	m.commitLatency.Observe(took.Seconds())
	if err != nil {
		m.commitErrors.Inc()
		return
	}
	v, ok := m.executions.Load(s.ExecutionARN)
	if !ok {
		// Not seen starting nor resumed: its start is not known here.
		v, _ = m.executions.LoadOrStore(s.ExecutionARN, &execution{m: m.machine(machineOf(s.ExecutionARN))})
	}
	m.step(v.(*execution), s)
}

// machineOf is the state machine of an execution ARN.
func machineOf(execARN string) string {
	a, err := arn.Parse(execARN)
	if err != nil || len(a.Names) == 0 {
		return execARN
	}
	return a.Scope().StateMachine(a.Names[0])
}

// step counts a committed step's events and, when it ends the execution,
// its outcome.
func (m *Metrics) step(x *execution, s *store.Step) {
	m.steps.Inc()
	for i := range s.Events {
		if s.Events[i].Type == "ExecutionRedriven" {
			x.redriven = true
			x.m.redriven.Inc()
			continue
		}
		m.event(x, &s.Events[i], s.At)
	}
	if s.Status == "RUNNING" || s.Status == "" {
		return
	}
	switch s.Status {
	case "SUCCEEDED":
		x.m.succeeded.Inc()
		if x.redriven {
			x.m.rSucceeded.Inc()
		}
	case "FAILED":
		x.m.failed.Inc()
		if x.redriven {
			x.m.rFailed.Inc()
		}
	case "ABORTED":
		x.m.aborted.Inc()
		if x.redriven {
			x.m.rAborted.Inc()
		}
	case "TIMED_OUT":
		x.m.timedOut.Inc()
		if x.redriven {
			x.m.rTimedOut.Inc()
		}
	}
	if !x.started.IsZero() {
		x.m.time.Observe(s.At.Sub(x.started).Seconds())
	}
	m.executions.Delete(s.ExecutionARN)
}

// event follows a task call through its events.
func (m *Metrics) event(x *execution, ev *store.Event, at time.Time) {
	kind, phase := classify(ev.Type)
	if phase == "" {
		return
	}
	f := m.families[kind]
	if phase == "Scheduled" {
		res := f.resourceFor(kind, ev.JSON)
		res.scheduled.Inc()
		if x.calls == nil {
			x.calls = map[int64]*call{}
		}
		x.calls[ev.ID] = &call{res: res, scheduled: at}
		return
	}
	prev := previousID(ev.JSON)
	c, ok := x.calls[prev]
	if !ok {
		return // scheduled before a restart
	}
	delete(x.calls, prev)
	switch phase {
	case "Started":
		c.res.started.Inc()
		c.startedAt = at
		c.res.scheduleTime.Observe(at.Sub(c.scheduled).Seconds())
		x.calls[ev.ID] = c
		return
	case "Submitted":
		x.calls[ev.ID] = c
		return
	case "Succeeded":
		c.res.succeeded.Inc()
	case "Failed", "StartFailed", "ScheduleFailed", "SubmitFailed":
		c.res.failed.Inc()
	case "TimedOut":
		if kind == activityKind && bytes.Contains(ev.JSON, heartbeatError) {
			c.res.heartbeatTimedOut.Inc()
		} else {
			c.res.timedOut.Inc()
		}
	}
	if !c.startedAt.IsZero() {
		c.res.runTime.Observe(at.Sub(c.startedAt).Seconds())
	}
	c.res.time.Observe(at.Sub(c.scheduled).Seconds())
}

// classify returns the kind of task call an event type belongs to and its
// phase (Scheduled, Started, Succeeded…), or no phase.
func classify(typ string) (kind int, phase string) {
	for _, k := range []struct {
		prefix string
		kind   int
	}{{"Activity", activityKind}, {"LambdaFunction", lambdaKind}, {"Task", integrationKind}} {
		if rest, ok := cutPrefix(typ, k.prefix); ok {
			switch rest {
			case "Scheduled", "Started", "Submitted", "Succeeded", "Failed", "StartFailed", "ScheduleFailed", "SubmitFailed", "TimedOut":
				return k.kind, rest
			}
			return 0, ""
		}
	}
	return 0, ""
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

// resource returns the counters of one resource of the family.
func (f *family) resource(name string) *resource {
	if v, ok := f.resources.Load(name); ok {
		return v.(*resource)
	}
	r := &resource{
		scheduled: f.scheduled.WithLabelValues(name), started: f.started.WithLabelValues(name),
		succeeded: f.succeeded.WithLabelValues(name), failed: f.failed.WithLabelValues(name),
		timedOut: f.timedOut.WithLabelValues(name),
		runTime:  f.runTime.WithLabelValues(name), scheduleTime: f.scheduleTime.WithLabelValues(name), time: f.time.WithLabelValues(name),
	}
	if f.heartbeatTimedOut != nil {
		r.heartbeatTimedOut = f.heartbeatTimedOut.WithLabelValues(name)
	} else {
		r.heartbeatTimedOut = r.timedOut
	}
	v, _ := f.resources.LoadOrStore(name, r)
	return v.(*resource)
}

// resourceFor returns the counters of the resource a Scheduled event
// names (resourceOf), found from the event's members without allocating
// once the resource has been seen.
func (f *family) resourceFor(kind int, event []byte) *resource {
	typ, res := member(event, resourceTypeKey), member(event, resourceKey)
	if kind != integrationKind {
		typ = nil
	}
	f.mu.RLock()
	r := f.byMembers[string(typ)][string(res)]
	f.mu.RUnlock()
	if r != nil {
		return r
	}
	r = f.resource(resourceOf(kind, event))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byMembers == nil {
		f.byMembers = map[string]map[string]*resource{}
	}
	m := f.byMembers[string(typ)]
	if m == nil {
		m = map[string]*resource{}
		f.byMembers[string(typ)] = m
	}
	m[string(res)] = r
	return r
}

// resourceOf is the resource a Scheduled event names: an activity's or a
// Lambda function's ARN, or a service integration's resource ARN
// (arn:aws:states:::lambda:invoke).
func resourceOf(kind int, event []byte) string {
	res := stringMember(event, resourceKey)
	if kind == integrationKind {
		return "arn:aws:states:::" + stringMember(event, resourceTypeKey) + ":" + res
	}
	return res
}

// The members resourceOf reads, as they appear in an event's JSON.
var (
	resourceKey     = []byte(`"resource":"`)
	resourceTypeKey = []byte(`"resourceType":"`)
	previousKey     = []byte(`"previousEventId":`)
	heartbeatError  = []byte(`"States.HeartbeatTimeout"`)
)

// stringMember returns the value of the first string member whose key (as
// `"name":"`) appears in an event's JSON. Strings nested in the details
// (inputs, parameters) are escaped, so they never match.
func stringMember(event, key []byte) string {
	return string(member(event, key))
}

// member is stringMember's value as a part of event, nil if none.
func member(event, key []byte) []byte {
	i := bytes.Index(event, key)
	if i < 0 {
		return nil
	}
	rest := event[i+len(key):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return nil
}

// previousID returns an event's previousEventId.
func previousID(event []byte) int64 {
	i := bytes.Index(event, previousKey)
	if i < 0 {
		return -1
	}
	rest := event[i+len(previousKey):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j > 18 {
		return -1
	}
	var n int64
	for _, c := range rest[:j] {
		n = n*10 + int64(c-'0')
	}
	return n
}
