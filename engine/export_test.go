package engine

// Queued reports how many events (task results, inputs from outside) wait
// in d's queue for its loop to take them.
func Queued(d *Driver) int { return len(d.events) }

// SetWaitingTasks makes f the hook WaitTasks calls as it begins to wait,
// and returns what restores the previous one. Tests that set it must not
// run in parallel with others that run drivers.
func SetWaitingTasks(f func()) (restore func()) {
	old := waitingTasks
	waitingTasks = f
	return func() { waitingTasks = old }
}
