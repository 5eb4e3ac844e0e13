package engine

import "github.com/stepd/stepd/interp"

// Queued reports how many events (task results, inputs from outside) wait
// in d's queue for its loop to take them.
func Queued(d *Driver) int { return len(d.events) }

// SetWaitingTasks makes f the hook waitTasks calls as it begins to wait,
// and returns what restores the previous one. Tests that set it must not
// run in parallel with others that run drivers.
func SetWaitingTasks(f func()) (restore func()) {
	old := waitingTasks
	waitingTasks = f
	return func() { waitingTasks = old }
}

// The journal codec, for the external tests.
type Record = record

// DecodeInput is decodeInput.
func DecodeInput(b []byte) (Record, error) { return decodeInput(b) }

// EncodeInput is encodeRecord without what the meter reported.
func EncodeInput(b []byte, in *interp.Input, rand []uint64) []byte {
	return encodeRecord(b, in, rand, nil, nil, nil)
}

// Moves reports how many calls made on d's goroutine the watchdog moved
// from (call.go).
func Moves(d *Driver) int64 { return d.moves.Load() }
