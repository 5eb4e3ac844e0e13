package sqlite

// Commits returns how many transactions s has committed.
func Commits(s *Store) int64 { return s.commits.Load() }
