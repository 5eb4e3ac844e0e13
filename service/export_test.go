package service

// Dormant reports how many resumed executions are dormant: registered but
// not rebuilt (see runner.Runner.Resume).
func (s *Service) Dormant() int {
	_, n := s.run.Counts()
	return n
}

// Registered reports whether an execution has a driver registered in this
// process.
func (s *Service) Registered(arn string) bool { return s.run.Registered(arn) }

// OnEnded makes f called with an execution's ARN each time one of its
// drivers has ended (a refused start's too); call it before starting any.
func (s *Service) OnEnded(f func(arn string)) { s.run.OnEnded(f) }
