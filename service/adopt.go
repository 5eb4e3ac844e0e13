package service

import (
	"context"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/store"
)

// Adopt rebuilds and runs running executions that this process did not
// start: those a shared store's Claim has just handed to this node (see
// store.Shared), whose owner died or left. Like Resume, it replays each
// one's committed steps and registers every one before any runs. It
// returns how many it runs; an execution that cannot be rebuilt is logged
// and left.
func (s *Service) Adopt(ctx context.Context, execs []*store.Execution) int {
	type adopted struct {
		arn string
		d   *engine.Driver
	}
	var all []adopted
	for _, e := range execs {
		if s.driver(e.ARN) != nil {
			continue // running here already
		}
		steps, err := s.store.Steps(ctx, e.ARN)
		var d *engine.Driver
		if err == nil {
			d, err = s.rebuild(ctx, e, steps)
		}
		if err != nil {
			s.log.Error("cannot adopt execution", "execution", e.ARN, "err", err)
			continue
		}
		s.register(e.ARN, d)
		all = append(all, adopted{e.ARN, d})
	}
	for _, x := range all {
		s.start(x.arn, x.d)
	}
	return len(all)
}
