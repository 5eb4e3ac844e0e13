package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// maxNested bounds how deep stepd run nests executions of a template's
// state machines, so that a state machine that starts itself ends (each
// level's failure carries the one below it, escaped: its text doubles).
const maxNested = 10

// nestedMachine is one state machine of the template stepd run was given.
type nestedMachine struct {
	sm      *asl.StateMachine
	name    string
	express bool
	role    string
}

// nestedRun serves arn:aws:states:::states:startExecution for stepd run of
// a template, as stepd serve does: a request that starts one of the
// template's state machines (request-response, .sync or .sync:2) runs that
// state machine's execution in process, with the same handlers, and
// answers as the service would; every other request goes to inv. A
// request-response start runs the child to its end before it answers:
// stepd run has nothing that outlives the parent.
type nestedRun struct {
	machines map[string]*nestedMachine // by state machine name
	scope    arn.Scope
	local    engine.Local // its Invoker is this nestedRun
	inv      task.Invoker
}

type depthKey struct{}

// templateMachines returns the nestedRun of a template's state machines
// ds for the runs of l, with inv for the rest; a state machine that does
// not validate is not served, and w is told so.
func templateMachines(ds []*loadedDef, l *engine.Local, inv task.Invoker, w io.Writer) *nestedRun {
	n := &nestedRun{machines: map[string]*nestedMachine{}, scope: arn.Scope{Region: l.Region, Account: l.Account}.Or(), inv: inv}
	for _, d := range ds {
		vr := validate.Definition(d.text, d.sm.Type)
		if !vr.OK() || len(d.placeholders().Errors()) > 0 {
			fmt.Fprintf(w, "stepd run: warning: %s does not validate: states:startExecution of %s is not served\n", d.source, d.sm.Name)
			continue
		}
		n.machines[d.sm.Name] = &nestedMachine{sm: vr.Machine, name: d.sm.Name, express: d.sm.Type == "EXPRESS", role: d.sm.RoleARN}
	}
	n.local = *l
	n.local.Invoker = n
	return n
}

// machine returns the template's state machine that req starts, nil when
// req starts none of them.
func (n *nestedRun) machine(req *task.Request) *nestedMachine {
	if !service.IsNested(req) || req.Pattern == task.WaitForTaskToken {
		return nil
	}
	smARN, _, _, fail := service.NestedRequest(req)
	if fail != nil {
		return nil
	}
	a, err := arn.Parse(smARN)
	if err != nil || a.Type != arn.StateMachine || len(a.Names) == 0 || a.Region != n.scope.Region || a.Account != n.scope.Account {
		return nil
	}
	return n.machines[a.Names[0]] // a version or alias ARN runs the same definition
}

func (n *nestedRun) Invoke(ctx context.Context, req *task.Request) task.Result {
	m := n.machine(req)
	if m == nil {
		return n.inv.Invoke(ctx, req)
	}
	depth, _ := ctx.Value(depthKey{}).(int)
	if depth >= maxNested {
		return task.Result{Error: "States.TaskFailed", Cause: fmt.Sprintf("stepd run nests at most %d executions of the template's state machines", maxNested)}
	}
	_, name, input, _ := service.NestedRequest(req)
	if name != "" {
		if e := validate.CheckName("name", name); e != nil {
			return task.Result{Error: "StepFunctions.InvalidNameException", Cause: e.Message}
		}
	}
	x, err := n.local.Run(context.WithValue(ctx, depthKey{}, depth+1), m.sm,
		engine.Execution{StateMachineName: m.name, Name: name, RoleArn: m.role, Input: input, Express: m.express})
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	return service.NestedResult(childRecord(x, input), req.Pattern)
}

// Immediate: a nested execution does not answer at once; the rest as inv.
func (n *nestedRun) Immediate(req *task.Request) bool {
	return n.machine(req) == nil && task.IsImmediate(n.inv, req)
}

// Waits: a nested execution waits; the rest as inv.
func (n *nestedRun) Waits(req *task.Request) bool {
	return n.machine(req) != nil || task.HowAnswers(n.inv, req) == task.Waits
}

// childRecord is the child execution x as the service keeps it.
func childRecord(x *interp.Execution, input any) *store.Execution {
	info := x.Info()
	e := &store.Execution{ARN: info.ExecutionARN, Name: info.Name, StateMachineARN: info.StateMachineARN,
		Input: value.String(input), Status: string(x.Status()), Started: info.StartTime}
	if x.Status() == interp.Succeeded {
		e.Output = value.String(x.Output())
	}
	if f := x.Failure(); f != nil {
		e.Error, e.Cause = f.Error, f.Cause
	}
	if h := x.History(); len(h) > 0 {
		e.Started = h[0].Timestamp
		e.Stopped = h[len(h)-1].Timestamp
	}
	return e
}
