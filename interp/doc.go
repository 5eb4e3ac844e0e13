// Package interp is the ASL interpreter: a pure state machine that runs a
// compiled state machine definition (Program) one input at a time
// (Execution). It performs no I/O, reads no clock and draws no randomness
// of its own: Program.Start and Execution.Step take the current time and
// return history events and Commands (invoke a task, start or cancel a
// timer) for an engine to carry out, and every random value comes from
// Info.Rand.
//
// Each state type is implemented once (pass.go, fail.go, choice.go,
// wait.go, task.go, parallel.go, map.go); what depends on the state's query
// language goes through its evaluator (eval.go), compiled per state: one
// for JSONPath (jsonpath_eval.go) and one for JSONata (jsonata_eval.go).
// A thread (thread.go) runs one sequence of states; per-state scratch lives
// in its stateRun, which is reset whenever it enters a state.
//
// It must not import engine, the task or store backends, or anything
// above them (service, api, cmd/stepd …), nor validate beside it; like
// every pure package it reaches no net/http, os/exec, database/sql or AWS
// SDK package (internal/layer checks it).
package interp
