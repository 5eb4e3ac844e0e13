// Package scheduler is stepd's EventBridge Scheduler: schedules (at(),
// rate() and cron() expressions in a time zone) kept in a store.Schedules
// and fired by Run, which starts a stepd state machine's execution or
// invokes a Lambda function of the resource registry.
//
// A firing is exactly once per due time for state machines: the execution
// is named after the schedule and its due time, so a firing that is run
// again (after a crash between starting the execution and recording the
// next due time, or by another node once a claim has ended) finds the
// execution it started. A Lambda function is invoked at least once; its
// input can carry <aws.scheduler.execution-id>, the same for every attempt
// of one due time, to recognise a repeat.
//
// It must not import api, which serves its API, nor metrics or notify
// beside it, nor the layers above (conformance, bench, cmd/stepd).
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // IANA time zones when the system has none

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// DefaultGroup is the schedule group every account has.
const DefaultGroup = "default"

// Error is an error of the Scheduler API: its HTTP status, code and
// message.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func validation(format string, args ...any) error {
	return &Error{Status: 400, Code: "ValidationException", Message: fmt.Sprintf(format, args...)}
}

func notFound(group, name string) error {
	return &Error{Status: 404, Code: "ResourceNotFoundException", Message: fmt.Sprintf("Schedule %s does not exist.", name)}
}

// Config configures a Scheduler.
type Config struct {
	Store   store.Schedules
	Service *service.Service // starts state machines' executions
	Invoker task.Invoker     // invokes Lambda functions (nil: none)
	Clock   engine.Clock     // default: the wall clock
	Region  string
	Account string
	Log     *slog.Logger
	// Poll is how often Run looks for due schedules (default 250ms of
	// real time, and at least once a second of Clock's time).
	Poll time.Duration
}

// Scheduler serves the Scheduler API's schedules and fires them.
type Scheduler struct {
	cfg  Config
	wake chan struct{}
}

// New returns a scheduler.
func New(cfg Config) *Scheduler {
	if cfg.Clock == nil {
		cfg.Clock = engine.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	scope := arn.Scope{Region: cfg.Region, Account: cfg.Account}.Or()
	cfg.Region, cfg.Account = scope.Region, scope.Account
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	return &Scheduler{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Schedule is a schedule in the Scheduler API's shape (its JSON is the
// API's), with the firing state stepd keeps beside it.
type Schedule struct {
	Arn                        string              `json:"Arn,omitempty"`
	Name                       string              `json:"Name,omitempty"`
	GroupName                  string              `json:"GroupName,omitempty"`
	ScheduleExpression         string              `json:"ScheduleExpression,omitempty"`
	ScheduleExpressionTimezone string              `json:"ScheduleExpressionTimezone,omitempty"`
	Description                string              `json:"Description,omitempty"`
	StartDate                  *Epoch              `json:"StartDate,omitempty"`
	EndDate                    *Epoch              `json:"EndDate,omitempty"`
	State                      string              `json:"State,omitempty"`
	FlexibleTimeWindow         *FlexibleTimeWindow `json:"FlexibleTimeWindow,omitempty"`
	ActionAfterCompletion      string              `json:"ActionAfterCompletion,omitempty"`
	Target                     *Target             `json:"Target,omitempty"`
	CreationDate               *Epoch              `json:"CreationDate,omitempty"`
	LastModificationDate       *Epoch              `json:"LastModificationDate,omitempty"`
	// KmsKeyArn and ClientToken are request fields: the first is refused,
	// the second makes CreateSchedule idempotent.
	KmsKeyArn   string `json:"KmsKeyArn,omitempty"`
	ClientToken string `json:"ClientToken,omitempty"`
}

// FlexibleTimeWindow is a schedule's window.
type FlexibleTimeWindow struct {
	Mode                   string `json:"Mode"`
	MaximumWindowInMinutes *int   `json:"MaximumWindowInMinutes,omitempty"`
}

// Target is what a schedule invokes. The fields of targets stepd does not
// implement are kept raw so that they can be refused by name.
type Target struct {
	Arn                         string          `json:"Arn"`
	RoleArn                     string          `json:"RoleArn"`
	Input                       *string         `json:"Input,omitempty"`
	RetryPolicy                 *RetryPolicy    `json:"RetryPolicy,omitempty"`
	DeadLetterConfig            json.RawMessage `json:"DeadLetterConfig,omitempty"`
	EcsParameters               json.RawMessage `json:"EcsParameters,omitempty"`
	EventBridgeParameters       json.RawMessage `json:"EventBridgeParameters,omitempty"`
	KinesisParameters           json.RawMessage `json:"KinesisParameters,omitempty"`
	SageMakerPipelineParameters json.RawMessage `json:"SageMakerPipelineParameters,omitempty"`
	SqsParameters               json.RawMessage `json:"SqsParameters,omitempty"`
}

// RetryPolicy bounds the retries of a failed invocation.
type RetryPolicy struct {
	MaximumEventAgeInSeconds *int `json:"MaximumEventAgeInSeconds,omitempty"`
	MaximumRetryAttempts     *int `json:"MaximumRetryAttempts,omitempty"`
}

// Epoch is a time in the API's JSON: seconds since the epoch.
type Epoch struct{ time.Time }

// MarshalJSON implements json.Marshaler.
func (e Epoch) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.3f", float64(e.UnixMilli())/1000)), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *Epoch) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a timestamp is a number of seconds since the epoch: %w", err)
	}
	if f < -62135596800 || f > 253402300799 {
		return fmt.Errorf("timestamp %v out of range", f)
	}
	e.Time = time.UnixMilli(int64(f * 1000)).UTC()
	return nil
}

func at(t time.Time) *Epoch { return &Epoch{t.UTC()} }

// record is what the store keeps of a schedule: the API's document and
// the firing state.
type record struct {
	Schedule
	// Due is the due time of the next firing (zero: none); the store's
	// Next is Due delayed by the flexible window, or the time of a retry.
	Due time.Time `json:"StepdDue,omitzero"`
	// Attempts counts the failed invocations of Due.
	Attempts int `json:"StepdAttempts,omitempty"`
}

var namePattern = regexp.MustCompile(`^[0-9a-zA-Z\-_.]{1,64}$`)
var rolePattern = regexp.MustCompile(`^arn:aws(-[a-z]+)?:iam::\d{12}:role/[\w+=,.@/-]+$`)
var tokenPattern = regexp.MustCompile(`^[a-zA-Z0-9\-_]{1,64}$`)

// group checks a schedule group's name: stepd has the default group only.
func group(name string) (string, error) {
	if name == "" {
		return DefaultGroup, nil
	}
	if !namePattern.MatchString(name) {
		return "", validation("1 validation error detected: Value '%s' at 'groupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+", name)
	}
	if name != DefaultGroup {
		return "", &Error{Status: 404, Code: "ResourceNotFoundException", Message: fmt.Sprintf("Schedule group %s does not exist.", name)}
	}
	return name, nil
}

// check validates a schedule of CreateSchedule or UpdateSchedule and
// returns its parsed expression.
func (s *Scheduler) check(sc *Schedule) (*Expr, error) {
	if !namePattern.MatchString(sc.Name) {
		return nil, validation("1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+ and have length between 1 and 64", sc.Name)
	}
	if sc.KmsKeyArn != "" {
		return nil, validation("KmsKeyArn: stepd does not encrypt schedules with customer managed keys; remove KmsKeyArn")
	}
	if sc.ClientToken != "" && !tokenPattern.MatchString(sc.ClientToken) {
		return nil, validation("1 validation error detected: Value '%s' at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9-_]+$", sc.ClientToken)
	}
	if len(sc.Description) > 512 {
		return nil, validation("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 512")
	}
	if sc.ScheduleExpression == "" || len(sc.ScheduleExpression) > 256 {
		return nil, validation("1 validation error detected: Value at 'scheduleExpression' failed to satisfy constraint: Member must have length between 1 and 256")
	}
	loc := time.UTC
	if tz := sc.ScheduleExpressionTimezone; tz != "" {
		var err error
		if len(tz) > 50 || strings.HasPrefix(tz, "Local") {
			return nil, validation("Invalid time zone: %s", tz)
		}
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, validation("Invalid time zone: %s", tz)
		}
	}
	e, err := ParseExpr(sc.ScheduleExpression, loc)
	if err != nil {
		return nil, validation("%v", err)
	}
	switch sc.State {
	case "":
		sc.State = "ENABLED"
	case "ENABLED", "DISABLED":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'state' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]", sc.State)
	}
	switch sc.ActionAfterCompletion {
	case "":
		sc.ActionAfterCompletion = "NONE"
	case "NONE", "DELETE":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'actionAfterCompletion' failed to satisfy constraint: Member must satisfy enum value set: [NONE, DELETE]", sc.ActionAfterCompletion)
	}
	if sc.StartDate != nil && sc.EndDate != nil && !sc.EndDate.After(sc.StartDate.Time) {
		return nil, validation("The EndDate must be after the StartDate.")
	}
	w := sc.FlexibleTimeWindow
	switch {
	case w == nil:
		return nil, validation("1 validation error detected: Value null at 'flexibleTimeWindow' failed to satisfy constraint: Member must not be null")
	case w.Mode == "OFF":
		if w.MaximumWindowInMinutes != nil {
			return nil, validation("MaximumWindowInMinutes must not be provided when Mode is OFF.")
		}
	case w.Mode == "FLEXIBLE":
		if w.MaximumWindowInMinutes == nil || *w.MaximumWindowInMinutes < 1 || *w.MaximumWindowInMinutes > 1440 {
			return nil, validation("MaximumWindowInMinutes must be between 1 and 1440 when Mode is FLEXIBLE.")
		}
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'flexibleTimeWindow.mode' failed to satisfy constraint: Member must satisfy enum value set: [OFF, FLEXIBLE]", w.Mode)
	}
	return e, s.checkTarget(sc.Target)
}

func (s *Scheduler) checkTarget(t *Target) error {
	if t == nil {
		return validation("1 validation error detected: Value null at 'target' failed to satisfy constraint: Member must not be null")
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"DeadLetterConfig", t.DeadLetterConfig}, {"EcsParameters", t.EcsParameters}, {"EventBridgeParameters", t.EventBridgeParameters},
		{"KinesisParameters", t.KinesisParameters}, {"SageMakerPipelineParameters", t.SageMakerPipelineParameters}, {"SqsParameters", t.SqsParameters}} {
		if len(f.raw) > 0 && string(f.raw) != "null" {
			return validation("Target.%s: stepd does not implement it; remove it", f.name)
		}
	}
	if !rolePattern.MatchString(t.RoleArn) {
		return validation("1 validation error detected: Value '%s' at 'target.roleArn' failed to satisfy constraint: Member must satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:iam::\\d{12}:role\\/[\\w+=,.@\\/-]+$", t.RoleArn)
	}
	if t.Input != nil && *t.Input == "" {
		return validation("1 validation error detected: Value at 'target.input' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if kind := targetKind(t.Arn); kind == "" {
		return validation("Target.Arn %q: stepd's scheduler invokes Step Functions state machines (arn:aws:states:…:stateMachine:NAME) and Lambda functions (arn:aws:lambda:…:function:NAME) only", t.Arn)
	} else if kind == "states" && t.Input != nil {
		if _, err := value.ParseString(*t.Input); err != nil {
			return validation("Target.Input of a state machine must be JSON: %v", err)
		}
	}
	if p := t.RetryPolicy; p != nil {
		if n := p.MaximumRetryAttempts; n != nil && (*n < 0 || *n > 185) {
			return validation("1 validation error detected: Value '%d' at 'target.retryPolicy.maximumRetryAttempts' failed to satisfy constraint: Member must have value between 0 and 185", *n)
		}
		if n := p.MaximumEventAgeInSeconds; n != nil && (*n < 60 || *n > 86400) {
			return validation("1 validation error detected: Value '%d' at 'target.retryPolicy.maximumEventAgeInSeconds' failed to satisfy constraint: Member must have value between 60 and 86400", *n)
		}
	}
	return nil
}

// targetKind is "states" for a state machine, "lambda" for a function,
// "" for anything else.
func targetKind(a string) string {
	p := strings.SplitN(a, ":", 7)
	switch {
	case len(p) == 7 && p[0] == "arn" && p[2] == "states" && p[5] == "stateMachine" && p[6] != "":
		return "states"
	case len(p) >= 7 && p[0] == "arn" && p[2] == "lambda" && p[5] == "function" && p[6] != "":
		return "lambda"
	}
	return ""
}

func (s *Scheduler) arn(group, name string) string {
	return fmt.Sprintf("arn:aws:scheduler:%s:%s:schedule/%s/%s", s.cfg.Region, s.cfg.Account, group, name)
}

// plan sets r's next due time from after and returns the store's Next.
func (s *Scheduler) plan(r *record, e *Expr, after time.Time, fired bool) time.Time {
	r.Due, r.Attempts = time.Time{}, 0
	if r.State != "ENABLED" {
		return time.Time{}
	}
	var due time.Time
	if e.OneTime() {
		if fired { // once fired, never again
			return time.Time{}
		}
		due = e.at // a time already past is due at once
	} else {
		anchor := r.CreationDate.Time
		if r.StartDate != nil {
			anchor = r.StartDate.Time
			if after.Before(anchor) {
				after = anchor.Add(-time.Nanosecond)
			}
		}
		due = e.Next(after, anchor)
		if due.IsZero() || r.EndDate != nil && due.After(r.EndDate.Time) {
			return time.Time{}
		}
	}
	r.Due = due
	if w := r.FlexibleTimeWindow; w != nil && w.Mode == "FLEXIBLE" && w.MaximumWindowInMinutes != nil {
		// The delay is drawn here, in the service, and stored, so a firing
		// run again keeps its time.
		return due.Add(rand.N(time.Duration(*w.MaximumWindowInMinutes) * time.Minute))
	}
	return due
}

func (s *Scheduler) expr(r *record) (*Expr, error) {
	loc := time.UTC
	if tz := r.ScheduleExpressionTimezone; tz != "" {
		var err error
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, err
		}
	}
	return ParseExpr(r.ScheduleExpression, loc)
}

func (s *Scheduler) save(r *record, e *Expr, after time.Time, fired bool) (*store.Schedule, error) {
	next := s.plan(r, e, after, fired)
	doc, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &store.Schedule{Group: r.GroupName, Name: r.Name, State: r.State, Doc: doc, Next: next}, nil
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Create is CreateSchedule; it returns the schedule's ARN.
func (s *Scheduler) Create(ctx context.Context, sc Schedule) (string, error) {
	g, err := group(sc.GroupName)
	if err != nil {
		return "", err
	}
	e, err := s.check(&sc)
	if err != nil {
		return "", err
	}
	now := s.cfg.Clock.Now()
	sc.GroupName, sc.Arn = g, s.arn(g, sc.Name)
	sc.CreationDate, sc.LastModificationDate = at(now), at(now)
	r := &record{Schedule: sc}
	st, err := s.save(r, e, now.Add(-time.Nanosecond), false)
	if err != nil {
		return "", err
	}
	if err := s.cfg.Store.CreateSchedule(ctx, st); errors.Is(err, store.ErrExists) {
		if sc.ClientToken != "" {
			if old, err := s.get(ctx, g, sc.Name); err == nil && old.ClientToken == sc.ClientToken {
				return old.Arn, nil // the same request again
			}
		}
		return "", &Error{Status: 409, Code: "ConflictException", Message: fmt.Sprintf("Schedule %s already exists.", sc.Name)}
	} else if err != nil {
		return "", err
	}
	s.poke()
	return sc.Arn, nil
}

func (s *Scheduler) get(ctx context.Context, g, name string) (*record, error) {
	st, err := s.cfg.Store.GetSchedule(ctx, g, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(g, name)
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(st.Doc, &r); err != nil {
		return nil, fmt.Errorf("schedule %s/%s: %w", g, name, err)
	}
	return &r, nil
}

// Get is GetSchedule.
func (s *Scheduler) Get(ctx context.Context, groupName, name string) (*Schedule, error) {
	g, err := group(groupName)
	if err != nil {
		return nil, err
	}
	r, err := s.get(ctx, g, name)
	if err != nil {
		return nil, err
	}
	r.ClientToken = ""
	return &r.Schedule, nil
}

// Update is UpdateSchedule: every field is replaced (those left out take
// their defaults), as AWS does; it returns the schedule's ARN.
func (s *Scheduler) Update(ctx context.Context, sc Schedule) (string, error) {
	g, err := group(sc.GroupName)
	if err != nil {
		return "", err
	}
	e, err := s.check(&sc)
	if err != nil {
		return "", err
	}
	for {
		st, err := s.cfg.Store.GetSchedule(ctx, g, sc.Name)
		if errors.Is(err, store.ErrNotFound) {
			return "", notFound(g, sc.Name)
		} else if err != nil {
			return "", err
		}
		var old record
		if err := json.Unmarshal(st.Doc, &old); err != nil {
			return "", fmt.Errorf("schedule %s/%s: %w", g, sc.Name, err)
		}
		now := s.cfg.Clock.Now()
		sc.GroupName, sc.Arn, sc.CreationDate, sc.LastModificationDate, sc.ClientToken = g, old.Arn, old.CreationDate, at(now), old.ClientToken
		r := &record{Schedule: sc}
		ns, err := s.save(r, e, now.Add(-time.Nanosecond), false)
		if err != nil {
			return "", err
		}
		ns.Version = st.Version
		if err := s.cfg.Store.PutSchedule(ctx, ns); errors.Is(err, store.ErrConflict) {
			continue // fired meanwhile: update the new version
		} else if errors.Is(err, store.ErrNotFound) {
			return "", notFound(g, sc.Name)
		} else if err != nil {
			return "", err
		}
		s.poke()
		return sc.Arn, nil
	}
}

// Delete is DeleteSchedule.
func (s *Scheduler) Delete(ctx context.Context, groupName, name string) error {
	g, err := group(groupName)
	if err != nil {
		return err
	}
	if err := s.cfg.Store.DeleteSchedule(ctx, g, name, 0); errors.Is(err, store.ErrNotFound) {
		return notFound(g, name)
	} else if err != nil {
		return err
	}
	return nil
}

// Summary is a schedule as ListSchedules shows it.
type Summary struct {
	Arn                  string `json:"Arn"`
	CreationDate         *Epoch `json:"CreationDate,omitempty"`
	GroupName            string `json:"GroupName"`
	LastModificationDate *Epoch `json:"LastModificationDate,omitempty"`
	Name                 string `json:"Name"`
	State                string `json:"State"`
	Target               struct {
		Arn string `json:"Arn"`
	} `json:"Target"`
}

// List is ListSchedules.
func (s *Scheduler) List(ctx context.Context, groupName, prefix, state string, page store.Page) ([]Summary, string, error) {
	g := ""
	if groupName != "" {
		var err error
		if g, err = group(groupName); err != nil {
			return nil, "", err
		}
	}
	if prefix != "" && !namePattern.MatchString(prefix) {
		return nil, "", validation("1 validation error detected: Value '%s' at 'namePrefix' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[0-9a-zA-Z-_.]+$", prefix)
	}
	if state != "" && state != "ENABLED" && state != "DISABLED" {
		return nil, "", validation("1 validation error detected: Value '%s' at 'state' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]", state)
	}
	if page.Limit < 0 || page.Limit > 100 {
		return nil, "", validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", page.Limit)
	}
	list, next, err := s.cfg.Store.ListSchedules(ctx, g, prefix, state, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", validation("Invalid NextToken.")
	} else if err != nil {
		return nil, "", err
	}
	out := make([]Summary, 0, len(list))
	for _, st := range list {
		var r record
		if err := json.Unmarshal(st.Doc, &r); err != nil {
			return nil, "", fmt.Errorf("schedule %s/%s: %w", st.Group, st.Name, err)
		}
		sum := Summary{Arn: r.Arn, CreationDate: r.CreationDate, GroupName: r.GroupName, LastModificationDate: r.LastModificationDate, Name: r.Name, State: r.State}
		sum.Target.Arn = r.Target.Arn
		out = append(out, sum)
	}
	return out, next, nil
}
