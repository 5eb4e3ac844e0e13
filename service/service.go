// Package service implements the AWS Step Functions service on top of the
// interpreter and a store: state machines, Standard executions that are
// durable (each transition is committed before its effects are carried
// out, and open executions resume after a restart), and Express executions
// that run in memory.
//
// Errors are *Error values carrying the AWS error code (e.g.
// StateMachineDoesNotExist, ExecutionAlreadyExists, InvalidDefinition) so
// that the API layer can answer in AWS's shape.
//
// It also holds activities, versions and aliases, Map Runs and redrives,
// TestState, callbacks by task token, nested executions (.sync children),
// execution logs, the status changes queued for events, retention, and,
// on a shared store, the stops and callbacks forwarded to the node that
// owns an execution.
//
// It must not import scheduler or api, which build on it, nor metrics or
// notify, which cmd/stepd hooks in (Observer, the store's outbox), nor the
// layers above (conformance, bench, cmd/stepd).
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// Error is a service error with an AWS error code.
type Error struct {
	Code    string // e.g. "StateMachineDoesNotExist"
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Err }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Config configures a Service.
type Config struct {
	Region  string
	Account string
	// Store keeps Standard workflows; nil means in memory.
	Store store.Store
	// Invoker serves Task states (mocks are added per execution from
	// Mocks when a test case is named).
	Invoker task.Invoker
	// Mocks is an AWS Step Functions Local mock configuration, used when
	// StartExecution names "stateMachineArn#TestCase".
	Mocks *mock.Config
	// Clock defaults to the real clock.
	Clock engine.Clock
	Log   *slog.Logger
	// KeepExpress is how many finished Express executions stay in memory
	// for DescribeExecution and GetExecutionHistory (AWS keeps none); the
	// oldest are forgotten beyond it. 0 or less means DefaultKeepExpress.
	KeepExpress int
	// Budget bounds each evaluation of every execution (zero fields: the
	// defaults; see engine.Budget).
	Budget engine.Budget

	// Observer, when set, is told of every execution started and every
	// step committed (package metrics implements it).
	Observer Observer

	// ExecutionLogs, when set, receives the execution logs that state
	// machines' loggingConfiguration asks for (logging.go); without it
	// nothing is logged.
	ExecutionLogs *execlog.Destination

	// StatusEvents, when set, makes the service queue every status change
	// of its Standard executions in its store's outbox (a store.Outbox)
	// before committing it, and call StatusEvents once it is committed,
	// so that a dispatcher (package notify) delivers it (events.go).
	StatusEvents func()
}

// Observer watches what the service commits, for metrics: it is called on
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

// observed is a journal that tells an Observer of each step it commits.
type observed struct {
	engine.Journal
	obs Observer
}

func (o observed) AppendStep(ctx context.Context, s *store.Step) error {
	t0 := time.Now()
	err := o.Journal.AppendStep(ctx, s)
	o.obs.Committed(s, time.Since(t0), err)
	return err
}

// PendingTimers returns how many timers (Waits, retry intervals, task
// timeouts and heartbeats) the service's running executions have queued.
func (s *Service) PendingTimers() int64 { return s.timers.Load() }

// Counts returns how many executions this process runs now and how many
// resumed ones wait dormant (see Resume).
func (s *Service) Counts() (running, dormant int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running), len(s.dormant)
}

// DefaultKeepExpress is the default of Config.KeepExpress.
const DefaultKeepExpress = 1000

func keepExpress(n int) int {
	if n <= 0 {
		return DefaultKeepExpress
	}
	return n
}

// Service is the Step Functions service.
type Service struct {
	cfg     Config
	store   store.Store
	express store.Store // keeps Express executions (in memory)
	clock   engine.Clock
	log     *slog.Logger

	mu       sync.Mutex
	queues   map[string]chan activityTask // activity task queues, by activity ARN
	programs map[string]*interp.Program   // by definition text
	running  map[string]*engine.Driver    // by execution ARN
	dormant  map[string]*sleeper          // resumed executions not yet rebuilt, by ARN (see Resume)
	key      []byte                       // signs task tokens: the store's secret, once read
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	timers   atomic.Int64 // timers queued by this service's drivers
	logMemo  sync.Map     // state machine ARN → its logging configuration, recently read (logging.go)

	polls    chan struct{} // closed by EndPolls: waiting GetActivityTask calls return
	endPolls sync.Once

	// endedHook, when set, is called with the execution's ARN once a
	// driver's end has been recorded (ended): a test hook
	// (export_test.go), set before any driver runs.
	endedHook func(arn string)
}

// EndPolls makes the GetActivityTask long polls waiting now, and later
// ones, return at once without a task: a server that stops calls it
// first, so that its shutdown does not wait for them.
func (s *Service) EndPolls() { s.endPolls.Do(func() { close(s.polls) }) }

// New creates a service. Call Resume to continue open executions.
func New(cfg Config) *Service {
	scope := arn.Scope{Region: cfg.Region, Account: cfg.Account}.Or()
	cfg.Region, cfg.Account = scope.Region, scope.Account
	if cfg.Store == nil {
		cfg.Store = memory.New()
	}
	if cfg.Clock == nil {
		cfg.Clock = engine.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, store: cfg.Store, express: memory.NewBounded(keepExpress(cfg.KeepExpress)), clock: cfg.Clock, log: cfg.Log,
		programs: map[string]*interp.Program{}, running: map[string]*engine.Driver{}, dormant: map[string]*sleeper{}, ctx: ctx, cancel: cancel,
		polls: make(chan struct{})}
}

// tokenKey returns the key that signs task tokens: the store's secret,
// read once. Tokens signed with it stay valid across restarts, and a token
// made by hand or by another server is refused.
func (s *Service) tokenKey(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		k, err := s.store.Secret(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the store's secret, which signs task tokens: %w", err)
		}
		s.key = k
	}
	return s.key, nil
}

// Region returns the configured region.
func (s *Service) Region() string { return s.cfg.Region }

// ReleaseMemory asks the store to free the memory its caches hold, when
// it can (the SQLite store's page caches), for a server gone idle.
func (s *Service) ReleaseMemory(ctx context.Context) error {
	return s.store.ReleaseMemory(ctx)
}

// Close stops the drivers; executions stay RUNNING in the store and resume
// on the next start.
func (s *Service) Close() {
	s.mu.Lock()
	s.cancel() // under mu: a dormant execution waking now sees it
	for arn, z := range s.dormant {
		if z.timer != nil {
			z.timer.Stop()
		}
		delete(s.dormant, arn)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// scope is the region and account of the service's ARNs.
func (s *Service) scope() arn.Scope { return arn.Scope{Region: s.cfg.Region, Account: s.cfg.Account} }

// checkName applies AWS's naming rules to the name of a state machine,
// execution or activity, with AWS's codes and messages.
func checkName(name string) error {
	if e := validate.CheckName("name", name); e != nil {
		return errorf(e.Code, "%s", e.Message)
	}
	return nil
}

// checkDefinitionLength applies AWS's 1 MiB limit to a definition.
func checkDefinitionLength(def string) error {
	if e := validate.CheckDefinitionLength("definition", def); e != nil {
		return errorf(e.Code, "%s", e.Message)
	}
	return nil
}

// program compiles (once) and returns the program for a definition.
func (s *Service) program(def string) (*interp.Program, error) {
	s.mu.Lock()
	p := s.programs[def]
	s.mu.Unlock()
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
	s.mu.Lock()
	s.programs[def] = p
	s.mu.Unlock()
	return p, nil
}

// StateMachineInput is CreateStateMachine's input.
type StateMachineInput struct {
	Name, Definition, RoleARN, Type string
	Tags                            map[string]string
	Tracing                         *Tracing    // nil: disabled
	Encryption                      *Encryption // nil: AWS_OWNED_KEY
	// Publish and VersionDescription: see CreateStateMachinePublished.
	Publish            bool
	VersionDescription string
	Logging            *LoggingConfiguration // nil: level OFF
}

// CreateStateMachine validates and stores a state machine. Creating one
// with the same name and definition again returns the existing one, as AWS
// does.
func (s *Service) CreateStateMachine(ctx context.Context, in StateMachineInput) (*store.StateMachine, error) {
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	if err := checkDefinitionLength(in.Definition); err != nil {
		return nil, err
	}
	if in.Type == "" {
		in.Type = validate.Standard
	}
	if in.Type != validate.Standard && in.Type != validate.Express {
		return nil, errorf("ValidationException", "1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", in.Type)
	}
	if r := validate.Definition([]byte(in.Definition), in.Type); !r.OK() {
		return nil, errorf("InvalidDefinition", "%s", validate.Message(r.Diagnostics))
	}
	if err := checkRole(in.RoleARN); err != nil {
		return nil, err
	}
	if err := CheckEncryption(in.Encryption); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	settings := Settings{Tracing: in.Tracing, Encryption: in.Encryption}
	if in.Logging != nil {
		if err := in.Logging.check(); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	sm := &store.StateMachine{ARN: s.scope().StateMachine(in.Name), Name: in.Name, Type: in.Type, Definition: in.Definition,
		RoleARN: in.RoleARN, Created: now, Updated: now, RevisionID: uuid.New(), Tags: in.Tags, Logging: in.Logging.text()}
	if err := s.store.CreateStateMachine(ctx, sm); err != nil {
		if errors.Is(err, store.ErrExists) {
			old, gerr := s.store.GetStateMachine(ctx, sm.ARN)
			if gerr == nil && old.Definition == in.Definition && old.RoleARN == in.RoleARN && old.Type == in.Type && old.Logging == sm.Logging {
				if st, serr := s.Settings(ctx, old.ARN); serr == nil && st.same(settings) {
					return old, nil
				}
			}
			return nil, errorf("StateMachineAlreadyExists", "State Machine Already Exists: '%s'", sm.ARN)
		}
		return nil, err
	}
	if err := s.putSettings(ctx, sm.ARN, settings); err != nil {
		return nil, err
	}
	return sm, nil
}

func checkRole(arn string) error {
	if arn == "" {
		return errorf("ValidationException", "1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null")
	}
	if !strings.HasPrefix(arn, "arn:") || strings.Count(arn, ":") < 5 {
		return errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}

// checkARN checks an ARN's shape and resource type.
func checkARN(s, resource string) error {
	a, err := arn.Parse(s)
	if err != nil || a.Service != "states" || len(a.Names) == 0 || a.Type != resource && !(resource == arn.Execution && a.Type == arn.Express) {
		return errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(s))
	}
	return nil
}

func resourceOf(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) > 5 {
		return parts[5]
	}
	return arn
}

// GetStateMachine returns a state machine.
func (s *Service) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	if err := checkARN(arn, "stateMachine"); err != nil {
		return nil, err
	}
	sm, err := s.store.GetStateMachine(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", arn)
	}
	return sm, err
}

// UpdateStateMachine changes a state machine's definition or role.
func (s *Service) UpdateStateMachine(ctx context.Context, arn, definition, role string) (*store.StateMachine, error) {
	return s.UpdateStateMachineLogging(ctx, arn, definition, role, nil)
}

// UpdateStateMachineLogging changes a state machine's definition, role or
// logging configuration (nil: unchanged).
func (s *Service) UpdateStateMachineLogging(ctx context.Context, arn, definition, role string, logging *LoggingConfiguration) (*store.StateMachine, error) {
	sm, err := s.GetStateMachine(ctx, arn)
	if err != nil {
		return nil, err
	}
	if definition == "" && role == "" && logging == nil {
		return nil, errorf("MissingRequiredParameter", "Either the definition, the roleArn or the LoggingConfiguration must be specified")
	}
	if logging != nil {
		if err := logging.check(); err != nil {
			return nil, err
		}
		sm.Logging = logging.text()
	}
	if definition != "" {
		if err := checkDefinitionLength(definition); err != nil {
			return nil, err
		}
		if r := validate.Definition([]byte(definition), sm.Type); !r.OK() {
			return nil, errorf("InvalidDefinition", "%s", validate.Message(r.Diagnostics))
		}
		sm.Definition = definition
	}
	if role != "" {
		if err := checkRole(role); err != nil {
			return nil, err
		}
		sm.RoleARN = role
	}
	sm.Updated = s.clock.Now()
	sm.RevisionID = uuid.New()
	return sm, s.store.UpdateStateMachine(ctx, sm)
}

// DeleteStateMachine deletes a state machine; deleting a missing one
// succeeds, as on AWS.
func (s *Service) DeleteStateMachine(ctx context.Context, arn string) error {
	if err := checkARN(arn, "stateMachine"); err != nil {
		return err
	}
	if err := checkUnqualified("DeleteStateMachine", arn); err != nil {
		return err
	}
	err := s.store.DeleteStateMachine(ctx, arn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.forgetVersions(ctx, arn)
}

// ListStateMachines lists state machines.
func (s *Service) ListStateMachines(ctx context.Context, page store.Page) ([]*store.StateMachine, string, error) {
	list, next, err := s.store.ListStateMachines(ctx, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// Tag adds tags to a state machine.
func (s *Service) Tag(ctx context.Context, arn string, tags map[string]string) error {
	if isActivity(arn) {
		_, err := s.activityTags(ctx, arn, func(m map[string]string) { maps.Copy(m, tags) })
		return err
	}
	sm, err := s.taggable(ctx, arn)
	if err != nil {
		return err
	}
	if sm.Tags == nil {
		sm.Tags = map[string]string{}
	}
	for k, v := range tags {
		sm.Tags[k] = v
	}
	if err := checkTags(sm.Tags); err != nil {
		return err
	}
	return s.store.UpdateStateMachine(ctx, sm)
}

// Untag removes tags from a state machine.
func (s *Service) Untag(ctx context.Context, arn string, keys []string) error {
	if isActivity(arn) {
		_, err := s.activityTags(ctx, arn, func(m map[string]string) {
			for _, k := range keys {
				delete(m, k)
			}
		})
		return err
	}
	sm, err := s.taggable(ctx, arn)
	if err != nil {
		return err
	}
	for _, k := range keys {
		delete(sm.Tags, k)
	}
	return s.store.UpdateStateMachine(ctx, sm)
}

// Tags lists a state machine's tags.
func (s *Service) Tags(ctx context.Context, arn string) (map[string]string, error) {
	if isActivity(arn) {
		return s.activityTags(ctx, arn, nil)
	}
	sm, err := s.taggable(ctx, arn)
	if err != nil {
		return nil, err
	}
	return sm.Tags, nil
}

func (s *Service) taggable(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := s.store.GetStateMachine(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf("ResourceNotFound", "Resource not found: '%s'", arn)
	}
	return sm, err
}

// maxPayload is AWS's limit on execution input and output.
const maxPayload = validate.MaxPayload

// StartInput is StartExecution's input.
type StartInput struct {
	StateMachineARN string // may end in #TestCase (Step Functions Local mocks)
	Name            string
	Input           string
	TraceHeader     string // kept and returned by DescribeExecution (stepd sends no traces)
	// Again marks a start that may have happened before (a parent's
	// nested start run again after a restart): an execution with the same
	// name and input is returned even when it has ended.
	Again bool
}

// parseInput checks an execution input.
func parseInput(text string) (any, error) {
	if text == "" {
		text = "{}"
	}
	if e := validate.CheckInputSize(text); e != nil {
		return nil, errorf(e.Code, "%s", e.Message)
	}
	v, err := value.ParseString(text)
	if err != nil {
		return nil, errorf("InvalidExecutionInput", "Invalid State Machine Execution Input: '%v'", err)
	}
	return v, nil
}
