// Package service is the AWS Step Functions service as its API sees it:
// the catalog of state machines, versions, aliases and activities,
// executions as records (Standard ones durable in the configured store,
// Express ones in memory), Map Runs, redrives and TestState. It checks
// every request and hands what to run to its runner (package runner),
// which owns the live executions: drivers, resume and adoption, callbacks,
// activity queues and forwarding between nodes.
//
// Errors that a caller can tell apart are conditions of package fault
// (errors.Is(err, fault.ErrStateMachineNotFound)) with the message AWS
// answers with; the API layer answers them with AWS's codes.
//
// It must not import scheduler or api, which build on it, nor metrics or
// notify, which the server hooks in (Observer, the store's outbox), nor the
// layers above (server, conformance, bench, cmd/stepd), nor any task
// backend (the packages under task/: Config takes what it needs of them as
// functions, Mocks and MockResults); of package task itself it uses the
// Invoker.
package service

import (
	"context"
	"log/slog"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/runner"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/validate"
)

// Config configures a Service.
type Config struct {
	Region  string
	Account string
	// Store keeps Standard workflows; nil means in memory.
	Store store.Store
	// Shared is Store when several nodes share it (PostgreSQL): stops and
	// callbacks for executions another node runs are forwarded to it, and
	// activity tasks are offered to every node's workers. Nil: this
	// process owns every execution of Store.
	Shared store.Shared
	// Invoker serves Task states (mocks are added per execution from
	// Mocks when a test case is named).
	Invoker task.Invoker
	// Mocks, when set, gives the mocked Task states of a test case of a
	// state machine, used when StartExecution names
	// "stateMachineArn#TestCase": an AWS Step Functions Local mock
	// configuration's (task/mock's Config.Invoker).
	Mocks func(stateMachine, testCase string) (task.Invoker, error)
	// MockResults, when set, checks TestState's mocked Task results
	// against the output shapes of the AWS APIs the Task states call
	// (task/awsmodel's CheckResult); without it they are not checked.
	MockResults MockResultCheck
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

// Observer watches what the service commits, for metrics (see
// runner.Observer).
type Observer = runner.Observer

// DefaultKeepExpress is the default of Config.KeepExpress.
const DefaultKeepExpress = 1000

func keepExpress(n int) int {
	if n <= 0 {
		return DefaultKeepExpress
	}
	return n
}

// Service is the Step Functions service: the AWS-facing catalog of state
// machines, versions, aliases, activities, executions as records, Map
// Runs and redrives, and TestState. Its live executions run on its runner.
type Service struct {
	cfg     Config
	store   store.Store
	express store.Store // keeps Express executions (in memory)
	clock   engine.Clock
	log     *slog.Logger
	run     *runner.Runner
	cat     *catalog
}

// catalog reads and writes the service's records in its stores, for the
// operations (Service's methods) that share them: which store keeps an
// execution, a Map Run's child executions, the version or alias a request
// resolves to, settings and tags.
type catalog struct {
	store   store.Store
	express store.Store
	clock   engine.Clock
	scope   arn.Scope
	log     *slog.Logger
	svc     *Service // the operations that check their arguments (GetStateMachine)
	starts  smCache  // the state machines that starts resolved lately
}

// New creates a service. Call its runner's Resume to continue open
// executions.
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
	s := &Service{cfg: cfg, store: cfg.Store, express: memory.NewBounded(keepExpress(cfg.KeepExpress)), clock: cfg.Clock, log: cfg.Log}
	s.cat = &catalog{store: s.store, express: s.express, clock: s.clock, scope: s.scope(), log: s.log, svc: s}
	s.run = runner.New(runner.Config{Region: cfg.Region, Account: cfg.Account, Store: cfg.Store, Express: s.express, Shared: cfg.Shared,
		Invoker: s.invoker, Clock: cfg.Clock, Log: cfg.Log, Budget: cfg.Budget, Observer: cfg.Observer,
		ExecutionLogs: cfg.ExecutionLogs, StatusEvents: cfg.StatusEvents})
	return s
}

// Runner returns the runner of the service's live executions: what a
// server resumes at start (Resume), adopts from dead nodes (Adopt),
// receives from other nodes (Receive), counts and stops.
func (s *Service) Runner() *runner.Runner { return s.run }

// invoker is the runner's Config.Invoker: an execution's tasks go to the
// service's invoker, or to the mocks of its test case, and to this
// service's nested executions.
func (s *Service) invoker(e *store.Execution) (task.Invoker, bool, error) {
	inv := s.withNested(e, s.cfg.Invoker)
	if e.TestCase != "" && s.cfg.Mocks != nil {
		m, err := s.cfg.Mocks(e.StateMachineName, e.TestCase)
		if err != nil {
			return nil, false, fault.New(fault.ErrValidation, "%v", err)
		}
		inv = m
	}
	// A callback integration's response only submits the task; the token
	// completes it. (A mock answers for the whole task, as in Step
	// Functions Local.)
	return inv, e.TestCase == "", nil
}

// ReleaseMemory asks the store to free the memory its caches hold, when
// it can (the SQLite store's page caches), for a server gone idle.
func (s *Service) ReleaseMemory(ctx context.Context) error {
	return s.store.ReleaseMemory(ctx)
}

// Close stops the drivers; executions stay RUNNING in the store and resume
// on the next start.
func (s *Service) Close() { s.run.Close() }

// scope is the region and account of the service's ARNs.
func (s *Service) scope() arn.Scope { return arn.Scope{Region: s.cfg.Region, Account: s.cfg.Account} }

// checkName applies AWS's naming rules to the name of a state machine,
// execution or activity, with AWS's codes and messages.
func checkName(name string) error {
	if e := validate.CheckName("name", name); e != nil {
		return memberError(e)
	}
	return nil
}

// checkDefinitionLength applies AWS's 1 MiB limit to a definition.
func checkDefinitionLength(def string) error {
	if e := validate.CheckDefinitionLength("definition", def); e != nil {
		return memberError(e)
	}
	return nil
}

// program compiles (once) and returns the program for a definition.
func (s *Service) program(def string) (*interp.Program, error) { return s.run.Program(def) }

func checkRole(arn string) error {
	if arn == "" {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null")
	}
	if !strings.HasPrefix(arn, "arn:") {
		return invalidPrefix(arn)
	}
	if strings.Count(arn, ":") < 5 {
		return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}

// checkARN checks an ARN's shape and resource type.
func checkARN(s, resource string) error {
	typ, _, ok := arn.StatesNames(s) // Parse, without its allocations
	if !ok && !strings.HasPrefix(s, "arn:") {
		return invalidPrefix(s)
	}
	if !ok || typ != resource && !(resource == arn.Execution && typ == arn.Express) {
		return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(s))
	}
	return nil
}

// invalidPrefix is AWS's answer to an ARN that does not start with
// "arn:" (recorded: DescribeStateMachine, ListExecutions,
// DescribeExecution and GetExecutionHistory of "not_a_valid_arn").
func invalidPrefix(s string) error {
	return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Invalid ARN prefix: %s'", s)
}

func resourceOf(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) > 5 {
		return parts[5]
	}
	return arn
}
