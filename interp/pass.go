package interp

// runPass runs a Pass state: its result (Result, Parameters or the input)
// goes through the state's output processing.
func (th *thread) runPass() {
	ev := th.cur.ev
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	result, f := ev.passResult(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	out, f := ev.output(th, result, false)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, th.cur.next)
}

// runSucceed runs a Succeed state: it ends its thread with its input.
func (th *thread) runSucceed() {
	ev := th.cur.ev
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	ev.inspectInput(th, in)
	out, f := ev.passOn(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, nil)
}
