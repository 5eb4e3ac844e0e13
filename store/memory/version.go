package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stepd/stepd/store"
)

// versions holds what store.Versioned keeps; its maps are made on first
// use, under Store.mu.
type versions struct {
	list     map[string][]*store.Version // by state machine ARN, oldest first
	last     map[string]int64            // the last number published, by state machine ARN
	aliases  map[string]*store.Alias     // by alias ARN
	refs     map[string]store.ExecutionRef
	settings map[string]string
}

// vs returns the maps, made on first use. s.mu is held.
func (s *Store) vs() *versions {
	if s.v.list == nil {
		s.v = versions{list: map[string][]*store.Version{}, last: map[string]int64{}, aliases: map[string]*store.Alias{},
			refs: map[string]store.ExecutionRef{}, settings: map[string]string{}}
	}
	return &s.v
}

func cloneAlias(a *store.Alias) *store.Alias {
	c := *a
	c.Routes = slices.Clone(a.Routes)
	return &c
}

// PublishVersion implements store.Versioned.
func (s *Store) PublishVersion(ctx context.Context, v *store.Version, limit int) (*store.Version, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.machines[v.StateMachineARN]; !ok {
		return nil, false, fmt.Errorf("state machine %s: %w", v.StateMachineARN, store.ErrNotFound)
	}
	vs := s.vs()
	list := vs.list[v.StateMachineARN]
	for _, old := range list {
		if old.RevisionID == v.RevisionID {
			c := *old
			return &c, false, nil
		}
	}
	if len(list) >= limit {
		return nil, false, fmt.Errorf("state machine %s: %d versions: %w", v.StateMachineARN, len(list), store.ErrLimit)
	}
	vs.last[v.StateMachineARN]++
	v.Number = vs.last[v.StateMachineARN]
	v.ARN = fmt.Sprintf("%s:%d", v.StateMachineARN, v.Number)
	c := *v
	vs.list[v.StateMachineARN] = append(list, &c)
	return v, true, nil
}

// version finds a version. s.mu is held.
func (s *Store) version(arn string) (int, *store.Version) {
	sm, _, ok := cutLast(arn)
	if !ok {
		return -1, nil
	}
	for i, v := range s.vs().list[sm] {
		if v.ARN == arn {
			return i, v
		}
	}
	return -1, nil
}

// cutLast splits a version's or alias's ARN into its state machine's ARN
// and its last part.
func cutLast(arn string) (sm, last string, ok bool) {
	i := strings.LastIndexByte(arn, ':')
	if i < 0 {
		return "", "", false
	}
	return arn[:i], arn[i+1:], true
}

// GetVersion implements store.Versioned.
func (s *Store) GetVersion(ctx context.Context, arn string) (*store.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, v := s.version(arn)
	if v == nil {
		return nil, fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
	}
	c := *v
	return &c, nil
}

// ListVersions implements store.Versioned.
func (s *Store) ListVersions(ctx context.Context, smARN string, p store.Page) ([]*store.Version, string, error) {
	s.mu.Lock()
	list := s.vs().list[smARN]
	out := make([]*store.Version, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		c := *list[i]
		out = append(out, &c)
	}
	s.mu.Unlock()
	return page(out, p)
}

// DeleteVersion implements store.Versioned.
func (s *Store) DeleteVersion(ctx context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, v := s.version(arn)
	if v == nil {
		return fmt.Errorf("version %s: %w", arn, store.ErrNotFound)
	}
	for _, a := range s.vs().aliases {
		for _, r := range a.Routes {
			if r.VersionARN == arn {
				return fmt.Errorf("version %s: alias %s routes to it: %w", arn, a.ARN, store.ErrInUse)
			}
		}
	}
	s.v.list[v.StateMachineARN] = slices.Delete(s.v.list[v.StateMachineARN], i, i+1)
	return nil
}

// routesExist checks that every version of a's routes exists. s.mu is held.
func (s *Store) routesExist(a *store.Alias) error {
	for _, r := range a.Routes {
		if _, v := s.version(r.VersionARN); v == nil {
			return fmt.Errorf("version %s: %w", r.VersionARN, store.ErrNotFound)
		}
	}
	return nil
}

// CreateAlias implements store.Versioned.
func (s *Store) CreateAlias(ctx context.Context, a *store.Alias, limit int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.vs()
	if _, ok := vs.aliases[a.ARN]; ok {
		return fmt.Errorf("alias %s: %w", a.ARN, store.ErrExists)
	}
	if err := s.routesExist(a); err != nil {
		return err
	}
	n := 0
	for _, old := range vs.aliases {
		if old.StateMachineARN == a.StateMachineARN {
			n++
		}
	}
	if n >= limit {
		return fmt.Errorf("state machine %s: %d aliases: %w", a.StateMachineARN, n, store.ErrLimit)
	}
	vs.aliases[a.ARN] = cloneAlias(a)
	return nil
}

// UpdateAlias implements store.Versioned.
func (s *Store) UpdateAlias(ctx context.Context, a *store.Alias) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.vs().aliases[a.ARN]
	if !ok {
		return fmt.Errorf("alias %s: %w", a.ARN, store.ErrNotFound)
	}
	if err := s.routesExist(a); err != nil {
		return err
	}
	c := cloneAlias(old)
	c.Description, c.Routes, c.Updated = a.Description, slices.Clone(a.Routes), a.Updated
	s.v.aliases[a.ARN] = c
	return nil
}

// GetAlias implements store.Versioned.
func (s *Store) GetAlias(ctx context.Context, arn string) (*store.Alias, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.vs().aliases[arn]
	if !ok {
		return nil, fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	return cloneAlias(a), nil
}

// ListAliases implements store.Versioned.
func (s *Store) ListAliases(ctx context.Context, smARN string, p store.Page) ([]*store.Alias, string, error) {
	s.mu.Lock()
	var out []*store.Alias
	for _, a := range s.vs().aliases {
		if a.StateMachineARN == smARN {
			out = append(out, cloneAlias(a))
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return page(out, p)
}

// DeleteAlias implements store.Versioned.
func (s *Store) DeleteAlias(ctx context.Context, arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.vs().aliases[arn]; !ok {
		return fmt.Errorf("alias %s: %w", arn, store.ErrNotFound)
	}
	delete(s.v.aliases, arn)
	return nil
}

// DeleteVersions implements store.Versioned.
func (s *Store) DeleteVersions(ctx context.Context, smARN string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	vs := s.vs()
	delete(vs.list, smARN)
	delete(vs.last, smARN)
	for arn, a := range vs.aliases {
		if a.StateMachineARN == smARN {
			delete(vs.aliases, arn)
		}
	}
	return nil
}

// PutExecutionRef implements store.Versioned. References of executions
// a bounded store has forgotten are dropped as they pile up.
func (s *Store) PutExecutionRef(ctx context.Context, r *store.ExecutionRef) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.execs[r.ExecutionARN]; ok {
		return nil
	}
	vs := s.vs()
	if len(vs.refs) > 2*len(s.execs)+1024 {
		for arn := range vs.refs {
			if _, ok := s.execs[arn]; !ok {
				delete(vs.refs, arn)
			}
		}
	}
	vs.refs[r.ExecutionARN] = *r
	return nil
}

// ExecutionRefs implements store.Versioned.
func (s *Store) ExecutionRefs(ctx context.Context, arns []string) (map[string]*store.ExecutionRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*store.ExecutionRef{}
	for _, arn := range arns {
		if r, ok := s.vs().refs[arn]; ok {
			if _, live := s.execs[arn]; live {
				out[arn] = &r
			}
		}
	}
	return out, nil
}

// ListExecutionsOf implements store.Versioned.
func (s *Store) ListExecutionsOf(ctx context.Context, ref, status string, p store.Page) ([]*store.Execution, string, error) {
	s.mu.Lock()
	vs := s.vs()
	var list []*store.Execution
	for i := len(s.order) - 1; i >= 0; i-- {
		x := s.order[i]
		if x.gone || (status != "" && x.e.Status != status) {
			continue
		}
		if r, ok := vs.refs[x.e.ARN]; !ok || (r.VersionARN != ref && r.AliasARN != ref) {
			continue
		}
		e := x.e
		list = append(list, &e)
	}
	s.mu.Unlock()
	return page(list, p)
}

// PutSettings implements store.Versioned.
func (s *Store) PutSettings(ctx context.Context, arn, settings string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if settings == "" {
		delete(s.vs().settings, arn)
	} else {
		s.vs().settings[arn] = settings
	}
	return nil
}

// GetSettings implements store.Versioned.
func (s *Store) GetSettings(ctx context.Context, arn string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vs().settings[arn], nil
}
