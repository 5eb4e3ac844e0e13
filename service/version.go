package service

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

// AWS's limits on versions and aliases.
const (
	MaxVersions      = 1000 // versions of a state machine
	MaxAliases       = 100  // aliases of a state machine
	maxDescription   = 256  // a version's or alias's description
	maxTraceHeader   = 256
	maxTags          = 50
	initialRevision  = "INITIAL"
	aliasNamePattern = `^[a-zA-Z0-9_\-.]*[a-zA-Z_\-.][a-zA-Z0-9_\-.]*$`
)

// PublishVersion publishes a version of a state machine's current
// revision; publishing a revision that has a version already returns that
// version, as AWS does. revisionID, when given, must be the current one.
func (s *Service) PublishVersion(ctx context.Context, smARN, revisionID, description string) (*store.Version, error) {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, fault.New(fault.ErrValidation, "PublishStateMachineVersion takes the state machine's ARN, not a version's or an alias's: '%s'", smARN)
	}
	if err := checkDescription("description", description); err != nil {
		return nil, err
	}
	sm, err := s.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, err
	}
	if revisionID != "" && revisionID != sm.RevisionID && !(revisionID == initialRevision && sm.RevisionID == "") {
		current := sm.RevisionID
		if current == "" {
			current = initialRevision
		}
		return nil, fault.New(fault.ErrConflict, "Failed to publish the State Machine version for revision %s. The current State Machine revision is %s.", revisionID, current)
	}
	return s.publish(ctx, sm, description)
}

func (s *Service) publish(ctx context.Context, sm *store.StateMachine, description string) (*store.Version, error) {
	vs := s.store
	settings, err := vs.GetSettings(ctx, sm.ARN)
	if err != nil {
		return nil, err
	}
	v := &store.Version{StateMachineARN: sm.ARN, Definition: sm.Definition, RoleARN: sm.RoleARN, Type: sm.Type, RevisionID: sm.RevisionID,
		Description: description, Settings: settings, Created: s.clock.Now()}
	got, _, err := vs.PublishVersion(ctx, v, MaxVersions)
	switch {
	case errors.Is(err, store.ErrLimit):
		return nil, fault.New(fault.ErrQuota, "The maximum number of versions (%d) of state machine '%s' has been reached: delete versions with DeleteStateMachineVersion", MaxVersions, sm.ARN)
	case errors.Is(err, store.ErrNotFound):
		return nil, fault.New(fault.ErrStateMachineNotFound, "State Machine Does Not Exist: '%s'", sm.ARN)
	}
	return got, err
}

// ListVersions lists a state machine's versions, newest first.
func (s *Service) ListVersions(ctx context.Context, smARN string, page store.Page) ([]*store.Version, string, error) {
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, "", err
	}
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, "", fault.New(fault.ErrValidation, "ListStateMachineVersions takes the state machine's ARN, not a version's or an alias's: '%s'", smARN)
	}
	if _, err := s.GetStateMachine(ctx, smARN); err != nil {
		return nil, "", err // StateMachineDoesNotExist, in the model's error list
	}
	vs := s.store
	list, next, err := vs.ListVersions(ctx, smARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// checkVersionARN checks that a names a version.
func checkVersionARN(a string) error {
	if err := checkARN(a, arn.StateMachine); err != nil {
		return err
	}
	if _, _, version, ok := arn.Qualified(a); !ok || !version {
		return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(a))
	}
	return nil
}

// DeleteVersion deletes a version; deleting a missing one succeeds, as on
// AWS. A version an alias routes to cannot be deleted.
func (s *Service) DeleteVersion(ctx context.Context, versionARN string) error {
	if err := checkVersionARN(versionARN); err != nil {
		return err
	}
	vs := s.store
	err := vs.DeleteVersion(ctx, versionARN)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case errors.Is(err, store.ErrInUse):
		smARN, _, _, _ := arn.Qualified(versionARN)
		var users []string
		aliases, _, lerr := vs.ListAliases(ctx, smARN, store.Page{Limit: MaxAliases})
		if lerr == nil {
			for _, a := range aliases {
				for _, r := range a.Routes {
					if r.VersionARN == versionARN {
						users = append(users, a.Name) // names, as AWS lists them
					}
				}
			}
		}
		return fault.New(fault.ErrConflict, "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [%s]", strings.Join(users, ", "))
	}
	return err
}

func (cat *catalog) version(ctx context.Context, versionARN string) (*store.Version, error) {
	vs := cat.store
	v, err := vs.GetVersion(ctx, versionARN)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrStateMachineNotFound, "State Machine Does Not Exist: '%s'", versionARN)
	}
	return v, err
}

// target is what a StartExecution's state machine ARN names: the state
// machine, and the version (and alias) an execution of it runs.
type target struct {
	sm      *store.StateMachine
	version *store.Version
	alias   *store.Alias
}

// resolve finds what smARN names; an alias is routed to one of its
// versions by weight (route: a random draw of the service's own, never
// the interpreter's) or, without route, to its first.
func (cat *catalog) resolve(ctx context.Context, smARN string, route bool) (*target, error) {
	base, _, version, ok := arn.Qualified(smARN)
	if !ok {
		sm, err := cat.svc.GetStateMachine(ctx, smARN)
		if err != nil {
			return nil, err
		}
		return &target{sm: sm}, nil
	}
	return cat.resolveQualified(ctx, smARN, base, version, route)
}

// resolveStart is resolve for StartExecution and StartSyncExecution: a
// state machine's own ARN is resolved from the cache of starts (smCache)
// when it holds it. The target's state machine may be the cache's: the
// caller must not change it.
func (cat *catalog) resolveStart(ctx context.Context, smARN string, route bool) (*target, error) {
	base, _, version, ok := arn.Qualified(smARN)
	if ok {
		return cat.resolveQualified(ctx, smARN, base, version, route)
	}
	now := time.Now()
	sm, gen := cat.starts.get(smARN, now)
	if sm != nil {
		return &target{sm: sm}, nil
	}
	sm, err := cat.svc.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, err
	}
	cat.starts.put(sm, gen, now)
	return &target{sm: sm}, nil
}

// resolveQualified is resolve for the ARN of a version or alias of the
// state machine base.
func (cat *catalog) resolveQualified(ctx context.Context, smARN, base string, version, route bool) (*target, error) {
	sm, err := cat.svc.GetStateMachine(ctx, base)
	if err != nil {
		return nil, err
	}
	t := &target{sm: sm}
	versionARN := smARN
	if !version {
		vs := cat.store
		a, err := vs.GetAlias(ctx, smARN)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fault.New(fault.ErrStateMachineNotFound, "State Machine Does Not Exist: '%s'", smARN)
		}
		if err != nil {
			return nil, err
		}
		t.alias = a
		versionARN = pickRoute(a.Routes, route)
	}
	if t.version, err = cat.version(ctx, versionARN); err != nil {
		return nil, err
	}
	return t, nil
}

// ExecutionRefs returns the version, alias and trace header of those of
// the executions that have them, by execution ARN.
func (s *Service) ExecutionRefs(ctx context.Context, list ...*store.Execution) (map[string]*store.ExecutionRef, error) {
	var std, exp []string
	for _, e := range list {
		if s.cat.storeFor(e.ARN) == s.express {
			exp = append(exp, e.ARN)
		} else {
			std = append(std, e.ARN)
		}
	}
	out := map[string]*store.ExecutionRef{}
	for _, part := range []struct {
		st   store.Store
		arns []string
	}{{s.store, std}, {s.express, exp}} {
		if len(part.arns) == 0 {
			continue
		}
		vs := part.st
		refs, err := vs.ExecutionRefs(ctx, part.arns)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, refs)
	}
	return out, nil
}

// checkUnqualified refuses the ARN of a version or an alias where op
// takes a state machine's.
func checkUnqualified(op, smARN string) error {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return fault.New(fault.ErrValidation, "%s takes the state machine's ARN, not a version's or an alias's: '%s'", op, smARN)
	}
	return nil
}

// forgetVersions removes the versions, aliases and settings of a deleted
// state machine.
func (cat *catalog) forgetVersions(ctx context.Context, smARN string) error {
	vs := cat.store
	if err := vs.DeleteVersions(ctx, smARN); err != nil {
		return err
	}
	return vs.PutSettings(ctx, smARN, "")
}

// running returns the state machine as an execution of t runs it: with
// the definition and role of t's version, if any.
func (t *target) running() *store.StateMachine {
	if t.version == nil {
		return t.sm
	}
	sm := *t.sm
	sm.Definition, sm.RoleARN, sm.RevisionID = t.version.Definition, t.version.RoleARN, t.version.RevisionID
	return &sm
}

// putRef records, before the execution is created, the version and alias
// it starts from and its trace header; an execution of the state machine
// itself without a trace header has nothing to record.
func (cat *catalog) putRef(ctx context.Context, st store.Store, execARN string, t *target, traceHeader string) error {
	r := &store.ExecutionRef{ExecutionARN: execARN, TraceHeader: traceHeader}
	if t.version != nil {
		r.VersionARN = t.version.ARN
	}
	if t.alias != nil {
		r.AliasARN = t.alias.ARN
	}
	if *r == (store.ExecutionRef{ExecutionARN: execARN}) {
		return nil
	}
	vs := st
	return vs.PutExecutionRef(ctx, r)
}
