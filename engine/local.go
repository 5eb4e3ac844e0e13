package engine

import (
	"context"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
)

// Local runs executions in memory, for the CLI and tests.
type Local struct {
	Region  string // default arn.DefaultRegion
	Account string // default arn.DefaultAccount
	// Config configures each run, as for Run (which ignores the fields
	// that serve a server's drivers).
	Config
}

// Execution describes one execution to run.
type Execution struct {
	StateMachineName string
	Name             string // execution name; a UUID when empty
	RoleArn          string
	TestCase         string
	Input            any
	// Express runs an Express workflow: no history limit, and an Express
	// execution ARN.
	Express bool
	// Branch, when set, is told of each Choice rule, retrier and catcher
	// taken (interp.Info.Branch).
	Branch func(interp.Branch)
}

// Run compiles sm and runs one execution of it to completion.
func (l *Local) Run(ctx context.Context, sm *asl.StateMachine, e Execution) (*interp.Execution, error) {
	p, err := interp.Compile(sm)
	if err != nil {
		return nil, err
	}
	scope := arn.Scope{Region: l.Region, Account: l.Account}.Or()
	if e.Name == "" {
		e.Name = uuid.New()
	}
	if e.RoleArn == "" {
		e.RoleArn = scope.Role("stepd")
	}
	info := interp.Info{
		ExecutionARN:     scope.Execution(e.StateMachineName, e.Name),
		Name:             e.Name,
		StateMachineARN:  scope.StateMachine(e.StateMachineName),
		StateMachineName: e.StateMachineName,
		RoleARN:          e.RoleArn,
		TestCase:         e.TestCase,
		Region:           scope.Region,
		Account:          scope.Account,
		Branch:           e.Branch,
	}
	if e.Express {
		// As on AWS: arn:…:express:STATE_MACHINE:NAME:ID.
		info.ExecutionARN = scope.Express(e.StateMachineName, e.Name, uuid.New())
	} else {
		info.MaxEvents = interp.MaxStandardEvents
	}
	return Run(ctx, p, info, e.Input, l.Config), nil
}
