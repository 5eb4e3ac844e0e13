package engine

import (
	"context"
	"fmt"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/interp"
)

// Local runs executions in memory, for the CLI and tests.
type Local struct {
	Region  string // default us-east-1
	Account string // default 123456789012
	Options
}

// Execution describes one execution to run.
type Execution struct {
	StateMachineName string
	Name             string // execution name; a UUID when empty
	RoleArn          string
	TestCase         string
	Input            any
	// Express lifts the history limit of Standard workflows.
	Express bool
}

// Run compiles sm and runs one execution of it to completion.
func (l *Local) Run(ctx context.Context, sm *asl.StateMachine, e Execution) (*interp.Execution, error) {
	p, err := interp.Compile(sm)
	if err != nil {
		return nil, err
	}
	region, account := l.Region, l.Account
	if region == "" {
		region = "us-east-1"
	}
	if account == "" {
		account = "123456789012"
	}
	if e.Name == "" {
		e.Name = uuid.New()
	}
	if e.RoleArn == "" {
		e.RoleArn = fmt.Sprintf("arn:aws:iam::%s:role/stepd", account)
	}
	info := interp.Info{
		ExecutionArn:     fmt.Sprintf("arn:aws:states:%s:%s:execution:%s:%s", region, account, e.StateMachineName, e.Name),
		Name:             e.Name,
		StateMachineArn:  fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", region, account, e.StateMachineName),
		StateMachineName: e.StateMachineName,
		RoleArn:          e.RoleArn,
		TestCase:         e.TestCase,
		Region:           region,
		Account:          account,
	}
	if !e.Express {
		info.MaxEvents = interp.MaxStandardEvents
	}
	return Run(ctx, p, info, e.Input, l.Options), nil
}
