package service

import (
	"context"
	"errors"
	"maps"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/validate"
)

// StateMachineInput is CreateStateMachine's input.
type StateMachineInput struct {
	Name, Definition, RoleARN, Type string
	Tags                            map[string]string
	Tracing                         *Tracing    // nil: disabled
	Encryption                      *Encryption // nil: AWS_OWNED_KEY
	// Publish and VersionDescription: see CreateStateMachinePublished.
	Publish            bool
	VersionDescription string
	Logging            *LoggingConfiguration // nil: level OFF
}

// createStateMachine validates and stores a state machine. Creating one
// with the same name and definition again returns the existing one, as AWS
// does.
func (s *Service) createStateMachine(ctx context.Context, in StateMachineInput) (*store.StateMachine, error) {
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	if err := checkDefinitionLength(in.Definition); err != nil {
		return nil, err
	}
	if in.Type == "" {
		in.Type = validate.Standard
	}
	if in.Type != validate.Standard && in.Type != validate.Express {
		return nil, fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", in.Type)
	}
	if r := validate.Definition([]byte(in.Definition), in.Type); !r.OK() {
		return nil, fault.New(fault.ErrInvalidDefinition, "%s", validate.Message(r.Diagnostics))
	}
	if err := checkRole(in.RoleARN); err != nil {
		return nil, err
	}
	if err := CheckEncryption(in.Encryption); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	settings := Settings{Tracing: in.Tracing, Encryption: in.Encryption}
	if in.Logging != nil {
		if err := checkLogging(in.Logging); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	// No revision until the first update: AWS answers no revisionId for a
	// state machine that was never updated (recorded cases).
	sm := &store.StateMachine{ARN: s.scope().StateMachine(in.Name), Name: in.Name, Type: in.Type, Definition: in.Definition,
		RoleARN: in.RoleARN, Created: now, Updated: now, Tags: in.Tags, Logging: loggingText(in.Logging)}
	if err := s.store.CreateStateMachine(ctx, sm); err != nil {
		if errors.Is(err, store.ErrExists) {
			old, gerr := s.store.GetStateMachine(ctx, sm.ARN)
			if gerr == nil && old.Definition == in.Definition && old.RoleARN == in.RoleARN && old.Type == in.Type && old.Logging == sm.Logging {
				if st, serr := s.Settings(ctx, old.ARN); serr == nil && st.same(settings) {
					return old, nil
				}
			}
			return nil, fault.New(fault.ErrStateMachineExists, "State Machine Already Exists: '%s'", sm.ARN)
		}
		return nil, err
	}
	if err := s.cat.putSettings(ctx, sm.ARN, settings); err != nil {
		return nil, err
	}
	return sm, nil
}

// GetStateMachine returns a state machine.
func (s *Service) GetStateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	if err := checkARN(arn, "stateMachine"); err != nil {
		return nil, err
	}
	sm, err := s.store.GetStateMachine(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrStateMachineNotFound, "State Machine Does Not Exist: '%s'", arn)
	}
	return sm, err
}

// updateDefinition changes a state machine's definition, role or
// logging configuration (nil: unchanged).
func (s *Service) updateDefinition(ctx context.Context, arn, definition, role string, logging *LoggingConfiguration) (*store.StateMachine, error) {
	sm, err := s.GetStateMachine(ctx, arn)
	if err != nil {
		return nil, err
	}
	if definition == "" && role == "" && logging == nil {
		return nil, fault.New(fault.ErrMissingParameter, "Either the definition, the roleArn or the LoggingConfiguration must be specified")
	}
	if logging != nil {
		if err := checkLogging(logging); err != nil {
			return nil, err
		}
		sm.Logging = loggingText(logging)
	}
	if definition != "" {
		if err := checkDefinitionLength(definition); err != nil {
			return nil, err
		}
		if r := validate.Definition([]byte(definition), sm.Type); !r.OK() {
			return nil, fault.New(fault.ErrInvalidDefinition, "%s", validate.Message(r.Diagnostics))
		}
		sm.Definition = definition
	}
	if role != "" {
		if err := checkRole(role); err != nil {
			return nil, err
		}
		sm.RoleARN = role
	}
	sm.Updated = s.clock.Now()
	sm.RevisionID = uuid.New()
	defer s.cat.starts.forget(arn)
	return sm, s.store.UpdateStateMachine(ctx, sm)
}

// DeleteStateMachine deletes a state machine; deleting a missing one
// succeeds, as on AWS.
func (s *Service) DeleteStateMachine(ctx context.Context, arn string) error {
	if err := checkARN(arn, "stateMachine"); err != nil {
		return err
	}
	if err := checkUnqualified("DeleteStateMachine", arn); err != nil {
		return err
	}
	err := s.store.DeleteStateMachine(ctx, arn)
	s.cat.starts.forget(arn)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.cat.forgetVersions(ctx, arn)
}

// ListStateMachines lists state machines.
func (s *Service) ListStateMachines(ctx context.Context, page store.Page) ([]*store.StateMachine, string, error) {
	list, next, err := s.store.ListStateMachines(ctx, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// Tag adds tags to a state machine.
func (s *Service) Tag(ctx context.Context, arn string, tags map[string]string) error {
	if isActivity(arn) {
		_, err := s.cat.activityTags(ctx, arn, func(m map[string]string) { maps.Copy(m, tags) })
		return err
	}
	sm, err := s.cat.taggable(ctx, arn)
	if err != nil {
		return err
	}
	if sm.Tags == nil {
		sm.Tags = map[string]string{}
	}
	for k, v := range tags {
		sm.Tags[k] = v
	}
	if err := checkTags(sm.Tags); err != nil {
		return err
	}
	defer s.cat.starts.forget(arn)
	return s.store.UpdateStateMachine(ctx, sm)
}

// Untag removes tags from a state machine.
func (s *Service) Untag(ctx context.Context, arn string, keys []string) error {
	if isActivity(arn) {
		_, err := s.cat.activityTags(ctx, arn, func(m map[string]string) {
			for _, k := range keys {
				delete(m, k)
			}
		})
		return err
	}
	sm, err := s.cat.taggable(ctx, arn)
	if err != nil {
		return err
	}
	for _, k := range keys {
		delete(sm.Tags, k)
	}
	defer s.cat.starts.forget(arn)
	return s.store.UpdateStateMachine(ctx, sm)
}

// Tags lists a state machine's tags.
func (s *Service) Tags(ctx context.Context, arn string) (map[string]string, error) {
	if isActivity(arn) {
		return s.cat.activityTags(ctx, arn, nil)
	}
	sm, err := s.cat.taggable(ctx, arn)
	if err != nil {
		return nil, err
	}
	return sm.Tags, nil
}

func (cat *catalog) taggable(ctx context.Context, arn string) (*store.StateMachine, error) {
	sm, err := cat.store.GetStateMachine(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrResourceNotFound, "Resource not found: '%s'", arn)
	}
	return sm, err
}

// CreateStateMachine creates a state machine and, when in.Publish,
// publishes its first version (nil otherwise).
func (s *Service) CreateStateMachine(ctx context.Context, in StateMachineInput) (*store.StateMachine, *store.Version, error) {
	if in.VersionDescription != "" && !in.Publish {
		return nil, nil, fault.New(fault.ErrValidation, "Version description can only be set when publish is true")
	}
	if err := checkDescription("versionDescription", in.VersionDescription); err != nil {
		return nil, nil, err
	}
	sm, err := s.createStateMachine(ctx, in)
	if err != nil || !in.Publish {
		return sm, nil, err
	}
	v, err := s.publish(ctx, sm, in.VersionDescription)
	return sm, v, err
}

// UpdateInput is UpdateStateMachine's input; empty or nil members are
// left as they are.
type UpdateInput struct {
	ARN, Definition, RoleARN string
	Tracing                  *Tracing
	Encryption               *Encryption
	Logging                  *LoggingConfiguration // nil: unchanged
	Publish                  bool
	VersionDescription       string
}

// UpdateStateMachine changes a state machine and, when in.Publish,
// publishes a version of it. An update that changes nothing keeps the
// revision, so that publishing again is idempotent.
func (s *Service) UpdateStateMachine(ctx context.Context, in UpdateInput) (*store.StateMachine, *store.Version, error) {
	if err := checkARN(in.ARN, arn.StateMachine); err != nil {
		return nil, nil, err
	}
	if _, _, _, ok := arn.Qualified(in.ARN); ok {
		// As AWS answers a version's ARN (recorded case): no state
		// machine has that ARN.
		return nil, nil, fault.New(fault.ErrStateMachineNotFound, "State Machine Does Not Exist: '%s'", in.ARN)
	}
	sm, err := s.GetStateMachine(ctx, in.ARN)
	if err != nil {
		return nil, nil, err
	}
	if in.Definition == "" && in.RoleARN == "" && in.Tracing == nil && in.Encryption == nil && in.Logging == nil {
		return nil, nil, fault.New(fault.ErrMissingParameter, "Either the definition, the role ARN, the LoggingConfiguration, or the TracingConfiguration must be specified")
	}
	if in.VersionDescription != "" && !in.Publish {
		return nil, nil, fault.New(fault.ErrValidation, "Version description can only be set when publish is true")
	}
	if err := checkDescription("versionDescription", in.VersionDescription); err != nil {
		return nil, nil, err
	}
	if err := CheckEncryption(in.Encryption); err != nil {
		return nil, nil, err
	}
	if in.Logging != nil {
		if err := checkLogging(in.Logging); err != nil {
			return nil, nil, err
		}
	}
	old, err := s.Settings(ctx, sm.ARN)
	if err != nil {
		return nil, nil, err
	}
	next := old
	if in.Tracing != nil {
		next.Tracing = in.Tracing
	}
	if in.Encryption != nil {
		next.Encryption = in.Encryption
	}
	changed := !next.same(old) || in.Definition != "" && in.Definition != sm.Definition || in.RoleARN != "" && in.RoleARN != sm.RoleARN ||
		in.Logging != nil && loggingText(in.Logging) != sm.Logging
	if changed {
		if in.Definition != "" || in.RoleARN != "" || in.Logging != nil {
			if sm, err = s.updateDefinition(ctx, sm.ARN, in.Definition, in.RoleARN, in.Logging); err != nil {
				return nil, nil, err
			}
		} else {
			sm.Updated, sm.RevisionID = s.clock.Now(), uuid.New()
			err := s.store.UpdateStateMachine(ctx, sm)
			s.cat.starts.forget(sm.ARN)
			if err != nil {
				return nil, nil, err
			}
		}
		if err := s.cat.putSettings(ctx, sm.ARN, next); err != nil {
			return nil, nil, err
		}
	}
	if !in.Publish {
		return sm, nil, nil
	}
	v, err := s.publish(ctx, sm, in.VersionDescription)
	return sm, v, err
}

// DescribeStateMachine returns a state machine, or a version of one.
func (s *Service) DescribeStateMachine(ctx context.Context, smARN string) (*store.StateMachine, *store.Version, Settings, error) {
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, nil, Settings{}, err
	}
	base, _, version, ok := arn.Qualified(smARN)
	if !ok {
		sm, err := s.GetStateMachine(ctx, smARN)
		if err != nil {
			return nil, nil, Settings{}, err
		}
		st, err := s.Settings(ctx, sm.ARN)
		return sm, nil, st, err
	}
	if !version {
		return nil, nil, Settings{}, fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(smARN))
	}
	sm, err := s.GetStateMachine(ctx, base)
	if err != nil {
		return nil, nil, Settings{}, err
	}
	v, err := s.cat.version(ctx, smARN)
	if err != nil {
		return nil, nil, Settings{}, err
	}
	st, err := decodeSettings(v.Settings)
	return sm, v, st, err
}
