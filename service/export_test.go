package service

// Dormant reports how many resumed executions are dormant: registered but
// not rebuilt (see Resume).
func (s *Service) Dormant() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dormant)
}

// Registered reports whether an execution has a driver registered in this
// process.
func (s *Service) Registered(arn string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[arn] != nil
}

// OnEnded makes f called with an execution's ARN each time one of its
// drivers has ended (a refused start's too); call it before starting any.
func (s *Service) OnEnded(f func(arn string)) { s.endedHook = f }
