package service

import "github.com/stepd/stepd/store"

// The records the service answers with, the page its lists take and the
// store its Config takes, under the service's names, so that its callers
// (package api) speak to the service alone and need not import package
// store. They are type aliases of store's types, not types of their own:
// the service hands out the records as its store keeps them.
type (
	// Store keeps state machines, executions and the rest (Config.Store).
	Store = store.Store
	// Page asks for a page of a list: its token and size.
	Page = store.Page

	StateMachine = store.StateMachine
	Version      = store.Version
	Alias        = store.Alias
	Route        = store.Route
	Activity     = store.Activity

	Execution    = store.Execution
	ExecutionRef = store.ExecutionRef
	Redrive      = store.Redrive
	Event        = store.Event

	MapRun       = store.MapRun
	MapRunCounts = store.MapRunCounts
)
