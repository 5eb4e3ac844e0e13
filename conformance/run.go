package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/task/registry"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// The account and region the corpus was recorded with.
const (
	Account = "111111111111"
	Region  = "us-east-1"
)

// RunExecution runs an execution case on a fresh in-memory engine with a
// virtual clock, serving Task states from the case's mocks.
func RunExecution(ctx context.Context, c *Case) (*Outcome, error) {
	var sm *asl.StateMachine
	var err error
	if c.Definition != nil {
		sm, err = asl.FromValue(c.Definition)
	} else {
		sm, err = asl.Parse([]byte(c.DefinitionString))
	}
	if err != nil {
		return nil, fmt.Errorf("invalid definition: %w", err)
	}
	var inv task.Invoker
	if c.MockConfig != nil {
		if inv, err = c.MockConfig.Invoker(c.StateMachineName, c.TestCase); err != nil {
			return nil, err
		}
	}
	if c.Mocks != nil {
		cfg, err := mock.FromValue(c.Mocks)
		if err != nil {
			return nil, fmt.Errorf("mocks: %w", err)
		}
		if inv, err = cfg.Invoker(c.StateMachineName, ""); err != nil {
			return nil, err
		}
	}
	if c.Config != "" {
		cfg, err := registry.ReadConfig(c.Config)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		reg, err := registry.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", c.Config, err)
		}
		// Mocks first, as in Step Functions Local; the registry serves
		// what they do not.
		r := &task.Router{Fallback: reg}
		if inv != nil {
			r.Handle("*", inv)
		}
		inv = r
	}
	smName, execName := c.StateMachineName, c.ExecutionName
	if smName == "" {
		smName = "stepd_test"
	}
	if execName == "" {
		execName = strings.NewReplacer(".", "_", " ", "_").Replace(c.Name)
	}
	l := &engine.Local{Region: Region, Account: Account, Config: engine.Config{Invoker: inv}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var branches []interp.Branch
	record := func(b interp.Branch) { branches = append(branches, b) }
	x, err := l.Run(ctx, sm, engine.Execution{StateMachineName: smName, Name: execName, RoleArn: c.RoleArn, Input: c.Input, Express: c.Type == "EXPRESS", Branch: record})
	if err != nil {
		return nil, err
	}
	o := OutcomeOf(x)
	o.Branches = branches
	return o, nil
}

// OutcomeOf summarises a finished execution.
func OutcomeOf(x *interp.Execution) *Outcome {
	o := &Outcome{Status: string(x.Status()), History: history.Values(x.History(), false)}
	if x.Status() == interp.Succeeded {
		o.Output = x.Output()
	}
	if f := x.Failure(); f != nil {
		o.Error, o.Cause = f.Error, f.Cause
	}
	return o
}

// Check runs an execution case on stepd's engine (RunExecution) and
// compares it.
func Check(ctx context.Context, c *Case) *Result { return CheckWith(ctx, c, RunExecution) }

// CheckDefinition runs an invalid-definition or validate-definition case
// through the validator and compares AWS's recorded answer.
func CheckDefinition(c *Case) *Result {
	start := time.Now()
	data := []byte(c.DefinitionString)
	if c.Definition != nil {
		data = []byte(value.String(c.Definition))
	}
	vr := validate.Definition(data, c.Type)
	r := &Result{Case: c}
	switch c.Kind {
	case "invalid-definition":
		var got *DefinitionError
		if !vr.OK() {
			got = &DefinitionError{Code: "InvalidDefinition", Message: validate.Message(vr.Diagnostics)}
		}
		r.OutcomeErr = CompareInvalidDefinition(c, got)
	case "validate-definition":
		r.OutcomeErr = CompareValidation(c, validate.Response(vr))
	default:
		r.Err = fmt.Errorf("case %s: kind %q is not a definition check", c.Name, c.Kind)
	}
	r.OutcomeOK = r.Err == nil && len(r.OutcomeErr) == 0
	r.Elapsed = time.Since(start)
	return r
}
