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
