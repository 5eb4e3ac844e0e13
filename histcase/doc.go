// Package histcase turns a recorded execution history into a stepd test
// case, so that a failure seen in production can be replayed, fixed and
// tested: the definition and the execution's input, inline mocks in AWS
// Step Functions Local's format that give each Task state its recorded
// responses in order (successes as Return, failures as Throw, timeouts as
// a Delay past the timeout), and the recorded status, output, error and
// cause as what is expected.
//
// Read takes histories as AWS's GetExecutionHistory returns them (any page
// size, pages concatenated or in an array, either order), as stepd serve
// and stepd run return them, and the corpus's case files; Build replays the
// execution on stepd's engine with the recorded responses, which tells the
// order the case's mocks are asked in, and lists what the case cannot
// reproduce exactly (random values, times, a stopped execution, a
// Distributed Map whose children's histories are missing) with what was
// done about it.
//
// It sits in the tools layer beside conformance, whose case format it
// writes and whose runner checks the case; it must not import cmd/stepd
// or bench.
package histcase
