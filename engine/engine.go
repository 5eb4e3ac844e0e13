// Package engine carries out the effects that the interpreter asks for:
// it invokes tasks, keeps timers on a clock, takes external inputs
// (stops, callbacks by task token, activity workers) and feeds them back,
// until the execution ends. The interpreter (package interp) decides; the
// engine acts. One Driver serves every kind of execution: `stepd run` and
// TestState (Run, no journal) and the service's Standard and Express
// executions (a store as the journal, resumed by Replay).
//
// Time comes from a Clock. With a virtual clock (the default for `stepd run`
// and `stepd test`) the engine jumps straight to the next due timer whenever
// no task is in flight, so Waits, retry back-offs and simulated task delays
// cost nothing while their order and timeouts stay exact.
//
// It must not import the server that builds on it (service, scheduler,
// api, metrics, notify) or anything above, nor the task and store backends
// beside it: tasks reach it through a task.Invoker, the store through a
// Journal.
package engine

import (
	"context"
	"time"

	// Every execution an engine drives reads Parquet objects.
	_ "github.com/stepd/stepd/internal/parquetrows"
	"github.com/stepd/stepd/interp"
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// After behaves like time.After.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// After waits for d.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Run executes p to completion and returns the finished execution.
// Cancelling ctx stops the execution (status ABORTED).
//
// Of cfg, Run uses Invoker, Clock, Budget and Log, and ignores the rest:
// Journal, Submit, Activity, Park, OnEnd and Timers serve drivers that
// others reach while they run (a server's), and Run's driver keeps no
// journal, takes no input from outside and returns only once the
// execution has ended.
func Run(ctx context.Context, p *interp.Program, info interp.Info, input any, cfg Config) *interp.Execution {
	now := info.StartTime
	if cfg.Clock != nil {
		now = cfg.Clock.Now()
		info.StartTime = now
	} else if now.IsZero() {
		now = time.Now()
		info.StartTime = now
	}
	d := New(p, Config{Invoker: cfg.Invoker, Clock: cfg.Clock, Budget: cfg.Budget, Log: cfg.Log})
	d.Start(info, input, now)
	d.Run(ctx)
	// Let withdrawn tasks stop the jobs they started before the caller
	// (a process about to exit) moves on; bounded, should one not return.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskDrain)
	d.waitTasks(wctx)
	cancel()
	return d.Execution()
}

// taskDrain bounds how long Run waits for withdrawn tasks to return.
const taskDrain = 30 * time.Second
