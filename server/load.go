package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
)

// A StateMachine is one that a server creates at start, or updates when it
// exists with another definition or role (so a restart picks up edited
// files).
type StateMachine struct {
	// Source is where it comes from (a file, or file#LogicalId for a
	// template's), for the log and errors.
	Source string
	// Input is what CreateStateMachine takes; its RoleARN must be set.
	Input service.StateMachineInput
}

// loadStateMachines creates the state machines, or updates those that
// exist with another definition or role; a type cannot change.
func loadStateMachines(ctx context.Context, svc *service.Service, sms []StateMachine, scope arn.Scope, log *slog.Logger) error {
	for _, d := range sms {
		in := d.Input
		sm, _, err := svc.CreateStateMachine(ctx, in)
		if errors.Is(err, fault.ErrStateMachineExists) {
			old, gerr := svc.GetStateMachine(ctx, scope.StateMachine(in.Name))
			if gerr != nil {
				return fmt.Errorf("%s: %w", d.Source, coded(gerr))
			}
			if old.Type != in.Type {
				return fmt.Errorf("%s: the state machine %s exists with type %s, and a type cannot change: delete it first", d.Source, in.Name, old.Type)
			}
			up := service.UpdateInput{ARN: old.ARN, Definition: in.Definition, RoleARN: in.RoleARN, Logging: in.Logging, Tracing: in.Tracing, Encryption: in.Encryption}
			if up.Logging == nil {
				up.Logging = &service.LoggingConfiguration{Level: "OFF"}
			}
			if up.Tracing == nil {
				up.Tracing = &service.Tracing{}
			}
			if sm, _, err = svc.UpdateStateMachine(ctx, up); err == nil {
				log.Info("updated a state machine from its file", "file", d.Source, "arn", sm.ARN)
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.Source, coded(err))
		}
		log.Info("loaded a state machine", "file", d.Source, "arn", sm.ARN, "type", sm.Type)
	}
	return nil
}

// coded puts the AWS error code of a service error before its message, as
// stepd's commands show it ("InvalidDefinition: Invalid State Machine
// Definition: ..."); other errors are left as they are.
func coded(err error) error {
	if code, _, ok := api.AWSError(err); ok {
		return fmt.Errorf("%s: %w", code, err)
	}
	return err
}
