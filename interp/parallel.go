package interp

// runParallel runs a Parallel state: its branches run with the state's
// parameters as input, and their outputs, in order, make its result.
func (th *thread) runParallel() {
	ev := th.cur.ev
	th.gen++
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	in, f = ev.parameters(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	th.startParallel(in)
}

// startParallel starts the branches of a Parallel state with input in.
func (th *thread) startParallel(in any) {
	st := th.cur
	th.x.emit(th, "ParallelStateStarted", "", nil)
	c := &container{owner: th, st: st, input: in, last: th.last}
	c.results = make([]any, len(st.branches))
	th.run.ctr = c
	for i, b := range st.branches {
		ch := &thread{x: th.x, m: b, parent: c, index: i, last: th.last, vars: th.vars, silent: th.silent, child: th.child, express: th.express}
		c.children = append(c.children, ch)
	}
	c.running = len(c.children)
	if th.mocked(c) {
		return
	}
	for _, ch := range c.children {
		if c.over {
			break
		}
		ch.begin(ch.m.start, in)
	}
	if len(st.branches) == 0 {
		c.succeed()
	}
}
