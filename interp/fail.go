package interp

// runFail runs a Fail state: it ends its thread with its error and cause,
// which no retrier or catcher of the state handles.
func (th *thread) runFail() {
	th.propagate(th.cur.ev.failure(th))
}
