package interp

import (
	"strings"
	"time"
)

// runWait runs a Wait state: it asks for a timer and leaves when it fires.
func (th *thread) runWait() {
	ev := th.cur.ev
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	due, f := ev.waitUntil(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	th.run.effInput = in
	th.x.timer(th, opWait, due)
}

// waitDone leaves a Wait state whose timer fired.
func (th *thread) waitDone() {
	out, f := th.cur.ev.passOn(th, th.run.effInput)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, th.cur.next)
}

// parseTimestamp parses an ASL timestamp: RFC 3339 with an uppercase T and
// a Z or numeric offset.
func parseTimestamp(s string) (time.Time, bool) {
	if strings.ContainsAny(s, "tz ") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
