package service

// Dormant reports how many resumed executions are dormant: registered but
// not rebuilt (see Resume).
func (s *Service) Dormant() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dormant)
}
