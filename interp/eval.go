package interp

import "time"

// evaluator is a state's query language: the one seam between the state
// types, each implemented once (pass.go, task.go, map.go, ...), and the two
// ways of evaluating a state's fields, JSONPath (jsonpath_eval.go) and
// JSONata (jsonata_eval.go). Compile picks and compiles one per state.
//
// Every method works on the thread's current state and run: it may record
// TestState inspection data and assigned variables, and returns failures
// with AWS's error names and cause texts. Each method evaluates only the
// fields its language has; a field the other language has is absent.
type evaluator interface {
	// input returns the state's effective input: the raw input after
	// InputPath (JSONPath) or the raw input itself (JSONata).
	input(th *thread) (any, *Failure)
	// inspectInput records the effective input for TestState.
	inspectInput(th *thread, in any)
	// parameters evaluates Parameters (JSONPath) or Arguments (JSONata)
	// over the effective input; without them the input is the result.
	parameters(th *thread, in any) (any, *Failure)
	// inspectParameters records the parameters for TestState.
	inspectParameters(th *thread, params any)
	// passResult is a Pass state's result: Result, or its parameters.
	passResult(th *thread, in any) (any, *Failure)
	// selectResult applies ResultSelector to a Task's, Parallel's or
	// Map's result.
	selectResult(th *thread, result any) (any, *Failure)
	// output finishes a state that produced result: Assign, then ResultPath
	// and OutputPath (JSONPath) or Output (JSONata, with $states.result
	// when hasResult). It returns the state output.
	output(th *thread, result any, hasResult bool) (any, *Failure)
	// passOn finishes a state that produces no result (Succeed, Choice,
	// Wait) from its effective input: Assign and OutputPath, or Assign and
	// Output.
	passOn(th *thread, in any) (any, *Failure)
	// choose evaluates a Choice state's rules over the effective input and
	// returns the next state and the state output (a matching rule's own
	// Output and Assign in JSONata).
	choose(th *thread, in any) (*state, any, *Failure)
	// waitUntil returns when a Wait state ends: Seconds, Timestamp,
	// SecondsPath or TimestampPath.
	waitUntil(th *thread, in any) (time.Time, *Failure)
	// failure returns a Fail state's error and cause (Error/ErrorPath,
	// Cause/CausePath), or the failure to evaluate them.
	failure(th *thread) *Failure
	// credentials evaluates a Task's Credentials over the effective input:
	// the role it assumes, "" without Credentials.
	credentials(th *thread, in any) (string, *Failure)
	// taskTimeouts returns a Task's TimeoutSeconds and HeartbeatSeconds
	// (0: none), from literals, paths or expressions.
	taskTimeouts(th *thread, in any) (timeout, heartbeat int64, f *Failure)
	// mapItems returns a Map state's items: ItemsPath or Items, or the
	// input (or TestState's ItemReader data).
	mapItems(th *thread, in any) ([]any, *Failure)
	// mapLimits evaluates what a Map state needs before MapStateStarted
	// (MaxConcurrency; in JSONata also the tolerated failures) and records
	// it for TestState.
	mapLimits(th *thread, c *container, in any) *Failure
	// mapTolerance evaluates what a Map state needs once started (in
	// JSONPath the tolerated failures, which may be paths).
	mapTolerance(th *thread, c *container, in any) *Failure
	// readerParams evaluates a Distributed Map's ItemReader: the
	// Parameters (or Arguments) of its S3 call and ReaderConfig's MaxItems
	// (0: all).
	readerParams(th *thread, in any) (params any, maxItems int, f *Failure)
	// writerParams evaluates a Distributed Map's ResultWriter Parameters
	// (or Arguments) over the Map's effective input.
	writerParams(th *thread, c *container) (any, *Failure)
	// mapBatcher evaluates a Distributed Map's ItemBatcher: its limits
	// and BatchInput.
	mapBatcher(th *thread, c *container, in any) (batching, *Failure)
	// itemInput returns the input of a Map iteration: ItemSelector (or
	// Parameters) over the Map's input, with the iteration's $$.Map.Item.
	itemInput(th *thread, c *container, ch *thread) (any, *Failure)
	// caught returns the output of a catcher that handles f (errOut is
	// {Error, Cause}): Assign and ResultPath, or Assign and Output.
	caught(th *thread, catcher int, errOut any) (any, *Failure)
}
