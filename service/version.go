package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/internal/uuid"
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

var aliasName = regexp.MustCompile(aliasNamePattern)

// Tracing is a state machine's tracingConfiguration. stepd keeps and
// returns it; it sends no traces to X-Ray.
type Tracing struct {
	Enabled bool `json:"enabled"`
}

// Encryption is an encryptionConfiguration of a state machine or an
// activity. stepd accepts AWS_OWNED_KEY only: it has no KMS to encrypt
// with a customer's key.
type Encryption struct {
	Type        string `json:"type"`
	KmsKeyID    string `json:"kmsKeyId,omitempty"`
	ReusePeriod int    `json:"kmsDataKeyReusePeriodSeconds,omitempty"`
}

// Settings is what the service keeps of a state machine or an activity
// beyond the store's record of it (store.Versioned's settings).
type Settings struct {
	Tracing    *Tracing          `json:"tracing,omitempty"`
	Encryption *Encryption       `json:"encryption,omitempty"`
	Tags       map[string]string `json:"tags,omitempty"` // an activity's
}

func (st Settings) encode() string {
	if st.Tracing == nil && st.Encryption == nil && len(st.Tags) == 0 {
		return ""
	}
	b, _ := json.Marshal(st)
	return string(b)
}

func decodeSettings(text string) (Settings, error) {
	var st Settings
	if text == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(text), &st); err != nil {
		return st, fmt.Errorf("stored settings: %w", err)
	}
	return st, nil
}

// same reports whether two settings are equal, an absent tracing or
// encryption being the default (disabled; AWS_OWNED_KEY).
func (st Settings) same(o Settings) bool {
	return st.tracing() == o.tracing() && st.encryption() == o.encryption()
}

func (st Settings) tracing() Tracing {
	if st.Tracing == nil {
		return Tracing{}
	}
	return *st.Tracing
}

func (st Settings) encryption() Encryption {
	if st.Encryption == nil {
		return Encryption{Type: "AWS_OWNED_KEY"}
	}
	return *st.Encryption
}

// TracingOf returns a state machine's tracing configuration (disabled
// when none was given).
func (st Settings) TracingOf() Tracing { return st.tracing() }

// EncryptionOf returns an encryption configuration (AWS_OWNED_KEY when
// none was given).
func (st Settings) EncryptionOf() Encryption { return st.encryption() }

// CheckEncryption checks an encryptionConfiguration with AWS's codes;
// a customer managed KMS key is refused (stepd has no KMS).
func CheckEncryption(e *Encryption) error {
	if e == nil {
		return nil
	}
	switch e.Type {
	case "AWS_OWNED_KEY":
		if e.KmsKeyID != "" || e.ReusePeriod != 0 {
			return errorf("ValidationException", "kmsKeyId and kmsDataKeyReusePeriodSeconds may only be given with type CUSTOMER_MANAGED_KMS_KEY")
		}
	case "CUSTOMER_MANAGED_KMS_KEY":
		return errorf("InvalidEncryptionConfiguration", "encryptionConfiguration: type CUSTOMER_MANAGED_KMS_KEY is not supported by stepd, which has no KMS to encrypt with a customer's key; use AWS_OWNED_KEY")
	case "":
		return errorf("ValidationException", "1 validation error detected: Value null at 'encryptionConfiguration.type' failed to satisfy constraint: Member must not be null")
	default:
		return errorf("ValidationException", "1 validation error detected: Value '%s' at 'encryptionConfiguration.type' failed to satisfy constraint: Member must satisfy enum value set: [CUSTOMER_MANAGED_KMS_KEY, AWS_OWNED_KEY]", e.Type)
	}
	return nil
}

// Settings returns the settings of a state machine or an activity.
func (s *Service) Settings(ctx context.Context, resource string) (Settings, error) {
	vs := s.store
	text, err := vs.GetSettings(ctx, resource)
	if err != nil {
		return Settings{}, err
	}
	return decodeSettings(text)
}

func (s *Service) putSettings(ctx context.Context, resource string, st Settings) error {
	vs := s.store
	return vs.PutSettings(ctx, resource, st.encode())
}

func checkDescription(field, d string) error {
	if len(d) > maxDescription {
		return errorf("ValidationException", "1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", field, maxDescription)
	}
	return nil
}

// CreateStateMachinePublished creates a state machine (as
// CreateStateMachine) and, when in.Publish, publishes its first version.
func (s *Service) CreateStateMachinePublished(ctx context.Context, in StateMachineInput) (*store.StateMachine, *store.Version, error) {
	if in.VersionDescription != "" && !in.Publish {
		return nil, nil, errorf("ValidationException", "versionDescription may only be given when publish is true")
	}
	if err := checkDescription("versionDescription", in.VersionDescription); err != nil {
		return nil, nil, err
	}
	sm, err := s.CreateStateMachine(ctx, in)
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

// UpdateStateMachineWith changes a state machine and, when in.Publish,
// publishes a version of it. An update that changes nothing keeps the
// revision, so that publishing again is idempotent.
func (s *Service) UpdateStateMachineWith(ctx context.Context, in UpdateInput) (*store.StateMachine, *store.Version, error) {
	if _, _, _, ok := arn.Qualified(in.ARN); ok {
		return nil, nil, errorf("ValidationException", "UpdateStateMachine takes the state machine's ARN, not a version's or an alias's: '%s'", in.ARN)
	}
	sm, err := s.GetStateMachine(ctx, in.ARN)
	if err != nil {
		return nil, nil, err
	}
	if in.Definition == "" && in.RoleARN == "" && in.Tracing == nil && in.Encryption == nil && in.Logging == nil {
		return nil, nil, errorf("MissingRequiredParameter", "Either the definition, the role ARN, the LoggingConfiguration, the EncryptionConfiguration or the TracingConfiguration must be specified")
	}
	if in.VersionDescription != "" && !in.Publish {
		return nil, nil, errorf("ValidationException", "versionDescription may only be given when publish is true")
	}
	if err := checkDescription("versionDescription", in.VersionDescription); err != nil {
		return nil, nil, err
	}
	if err := CheckEncryption(in.Encryption); err != nil {
		return nil, nil, err
	}
	if in.Logging != nil {
		if err := in.Logging.check(); err != nil {
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
		in.Logging != nil && in.Logging.text() != sm.Logging
	if changed {
		if in.Definition != "" || in.RoleARN != "" || in.Logging != nil {
			if sm, err = s.UpdateStateMachineLogging(ctx, sm.ARN, in.Definition, in.RoleARN, in.Logging); err != nil {
				return nil, nil, err
			}
		} else {
			sm.Updated, sm.RevisionID = s.clock.Now(), uuid.New()
			if err := s.store.UpdateStateMachine(ctx, sm); err != nil {
				return nil, nil, err
			}
		}
		if err := s.putSettings(ctx, sm.ARN, next); err != nil {
			return nil, nil, err
		}
	}
	if !in.Publish {
		return sm, nil, nil
	}
	v, err := s.publish(ctx, sm, in.VersionDescription)
	return sm, v, err
}

// PublishVersion publishes a version of a state machine's current
// revision; publishing a revision that has a version already returns that
// version, as AWS does. revisionID, when given, must be the current one.
func (s *Service) PublishVersion(ctx context.Context, smARN, revisionID, description string) (*store.Version, error) {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, errorf("ValidationException", "PublishStateMachineVersion takes the state machine's ARN, not a version's or an alias's: '%s'", smARN)
	}
	if err := checkDescription("description", description); err != nil {
		return nil, err
	}
	sm, err := s.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, err
	}
	if revisionID != "" && revisionID != sm.RevisionID && !(revisionID == initialRevision && sm.Updated.Equal(sm.Created)) {
		return nil, errorf("ConflictException", "Failed to publish the State Machine version: the current revision id '%s' of state machine '%s' does not match the revision id '%s' given", sm.RevisionID, sm.ARN, revisionID)
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
		return nil, errorf("ServiceQuotaExceededException", "The maximum number of versions (%d) of state machine '%s' has been reached: delete versions with DeleteStateMachineVersion", MaxVersions, sm.ARN)
	case errors.Is(err, store.ErrNotFound):
		return nil, errorf("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", sm.ARN)
	}
	return got, err
}

// ListVersions lists a state machine's versions, newest first.
func (s *Service) ListVersions(ctx context.Context, smARN string, page store.Page) ([]*store.Version, string, error) {
	if err := checkARN(smARN, arn.StateMachine); err != nil {
		return nil, "", err
	}
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, "", errorf("ValidationException", "ListStateMachineVersions takes the state machine's ARN, not a version's or an alias's: '%s'", smARN)
	}
	vs := s.store
	list, next, err := vs.ListVersions(ctx, smARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// checkVersionARN checks that a names a version.
func checkVersionARN(a string) error {
	if err := checkARN(a, arn.StateMachine); err != nil {
		return err
	}
	if _, _, version, ok := arn.Qualified(a); !ok || !version {
		return errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s': not a state machine version's ARN", resourceOf(a))
	}
	return nil
}

// checkAliasARN checks that a names an alias.
func checkAliasARN(a string) error {
	if err := checkARN(a, arn.StateMachine); err != nil {
		return err
	}
	if _, _, version, ok := arn.Qualified(a); !ok || version {
		return errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s': not a state machine alias's ARN", resourceOf(a))
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
						users = append(users, a.ARN)
					}
				}
			}
		}
		return errorf("ConflictException", "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [%s]", strings.Join(users, ", "))
	}
	return err
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
		return nil, nil, Settings{}, errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s': describe an alias with DescribeStateMachineAlias", resourceOf(smARN))
	}
	sm, err := s.GetStateMachine(ctx, base)
	if err != nil {
		return nil, nil, Settings{}, err
	}
	v, err := s.version(ctx, smARN)
	if err != nil {
		return nil, nil, Settings{}, err
	}
	st, err := decodeSettings(v.Settings)
	return sm, v, st, err
}

func (s *Service) version(ctx context.Context, versionARN string) (*store.Version, error) {
	vs := s.store
	v, err := vs.GetVersion(ctx, versionARN)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", versionARN)
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
func (s *Service) resolve(ctx context.Context, smARN string, route bool) (*target, error) {
	base, _, version, ok := arn.Qualified(smARN)
	if !ok {
		sm, err := s.GetStateMachine(ctx, smARN)
		if err != nil {
			return nil, err
		}
		return &target{sm: sm}, nil
	}
	sm, err := s.GetStateMachine(ctx, base)
	if err != nil {
		return nil, err
	}
	t := &target{sm: sm}
	versionARN := smARN
	if !version {
		vs := s.store
		a, err := vs.GetAlias(ctx, smARN)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errorf("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", smARN)
		}
		if err != nil {
			return nil, err
		}
		t.alias = a
		versionARN = pickRoute(a.Routes, route)
	}
	if t.version, err = s.version(ctx, versionARN); err != nil {
		return nil, err
	}
	return t, nil
}

// pickRoute draws a route by weight.
func pickRoute(routes []store.Route, draw bool) string {
	if !draw || len(routes) == 1 {
		return routes[0].VersionARN
	}
	n := rand.IntN(100)
	for _, r := range routes {
		if n < r.Weight {
			return r.VersionARN
		}
		n -= r.Weight
	}
	return routes[len(routes)-1].VersionARN
}

// ExecutionRefs returns the version, alias and trace header of those of
// the executions that have them, by execution ARN.
func (s *Service) ExecutionRefs(ctx context.Context, list ...*store.Execution) (map[string]*store.ExecutionRef, error) {
	var std, exp []string
	for _, e := range list {
		if s.storeFor(e.ARN) == s.express {
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

// RouteInput is one version of an alias's routingConfiguration.
type RouteInput struct {
	VersionARN string
	Weight     *int
}

// checkRoutes checks a routingConfiguration and returns its routes and
// the state machine they belong to.
func checkRoutes(in []RouteInput) ([]store.Route, string, error) {
	if len(in) < 1 || len(in) > 2 {
		return nil, "", errorf("ValidationException", "1 validation error detected: Value at 'routingConfiguration' failed to satisfy constraint: Member must have length less than or equal to 2 and greater than or equal to 1")
	}
	var out []store.Route
	sum, smARN := 0, ""
	for i, r := range in {
		if r.VersionARN == "" {
			return nil, "", errorf("ValidationException", "1 validation error detected: Value null at 'routingConfiguration.%d.member.stateMachineVersionArn' failed to satisfy constraint: Member must not be null", i+1)
		}
		if r.Weight == nil {
			return nil, "", errorf("ValidationException", "1 validation error detected: Value null at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must not be null", i+1)
		}
		if *r.Weight < 0 || *r.Weight > 100 {
			return nil, "", errorf("ValidationException", "1 validation error detected: Value '%d' at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must have value between 0 and 100", *r.Weight, i+1)
		}
		if err := checkVersionARN(r.VersionARN); err != nil {
			return nil, "", err
		}
		base, _, _, _ := arn.Qualified(r.VersionARN)
		if smARN != "" && base != smARN {
			return nil, "", errorf("ValidationException", "Routing configuration must contain state machine version ARNs of the same state machine: '%s' and '%s'", smARN, base)
		}
		if slices.ContainsFunc(out, func(o store.Route) bool { return o.VersionARN == r.VersionARN }) {
			return nil, "", errorf("ValidationException", "Routing configuration must contain distinct state machine version ARNs: '%s' is given twice", r.VersionARN)
		}
		smARN = base
		sum += *r.Weight
		out = append(out, store.Route{VersionARN: r.VersionARN, Weight: *r.Weight})
	}
	if sum != 100 {
		return nil, "", errorf("ValidationException", "Sum of routing configuration weights must be equal to 100, got %d", sum)
	}
	return out, smARN, nil
}

// aliasError maps the store's errors of an alias write to AWS's.
func aliasError(err error, a string) error {
	switch {
	case errors.Is(err, store.ErrLimit):
		return errorf("ServiceQuotaExceededException", "The maximum number of aliases (%d) of a state machine has been reached", MaxAliases)
	case errors.Is(err, store.ErrNotFound):
		return errorf("ResourceNotFound", "Resource not found: %v", errors.Unwrap(err))
	}
	return err
}

// CreateAlias creates an alias of the state machine whose versions the
// routes name. Creating one that exists with the same description and
// routes returns it, as AWS does; with others, it is a conflict.
func (s *Service) CreateAlias(ctx context.Context, name, description string, routes []RouteInput) (*store.Alias, error) {
	if name == "" || len(name) > 80 || !aliasName.MatchString(name) {
		return nil, errorf("ValidationException", "1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: %s and have length between 1 and 80", name, `^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`)
	}
	if err := checkDescription("description", description); err != nil {
		return nil, err
	}
	rs, smARN, err := checkRoutes(routes)
	if err != nil {
		return nil, err
	}
	sm, err := s.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil, err
	}
	vs := s.store
	now := s.clock.Now()
	a := &store.Alias{ARN: s.scope().Alias(sm.Name, name), StateMachineARN: sm.ARN, Name: name, Description: description, Routes: rs, Created: now, Updated: now}
	if err := vs.CreateAlias(ctx, a, MaxAliases); errors.Is(err, store.ErrExists) {
		old, gerr := vs.GetAlias(ctx, a.ARN)
		if gerr == nil && old.Description == a.Description && slices.Equal(old.Routes, a.Routes) {
			return old, nil
		}
		return nil, errorf("ConflictException", "Failed to create alias because an alias with the same name and a different routing configuration or description already exists: '%s'", a.ARN)
	} else if err != nil {
		return nil, aliasError(err, a.ARN)
	}
	return a, nil
}

// GetAlias returns an alias.
func (s *Service) GetAlias(ctx context.Context, aliasARN string) (*store.Alias, error) {
	if err := checkAliasARN(aliasARN); err != nil {
		return nil, err
	}
	vs := s.store
	a, err := vs.GetAlias(ctx, aliasARN)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf("ResourceNotFound", "Resource not found: '%s'", aliasARN)
	}
	return a, err
}

// UpdateAlias changes an alias's description (when not nil) and routes
// (when given).
func (s *Service) UpdateAlias(ctx context.Context, aliasARN string, description *string, routes []RouteInput) (*store.Alias, error) {
	if description == nil && routes == nil {
		return nil, errorf("ValidationException", "Either the description or the RoutingConfiguration must be specified")
	}
	a, err := s.GetAlias(ctx, aliasARN)
	if err != nil {
		return nil, err
	}
	if description != nil {
		if err := checkDescription("description", *description); err != nil {
			return nil, err
		}
		a.Description = *description
	}
	if routes != nil {
		rs, smARN, err := checkRoutes(routes)
		if err != nil {
			return nil, err
		}
		if smARN != a.StateMachineARN {
			return nil, errorf("ValidationException", "Routing configuration must contain state machine version ARNs of the alias's state machine '%s', not of '%s'", a.StateMachineARN, smARN)
		}
		a.Routes = rs
	}
	a.Updated = s.clock.Now()
	vs := s.store
	if err := vs.UpdateAlias(ctx, a); err != nil {
		return nil, aliasError(err, a.ARN)
	}
	return a, nil
}

// DeleteAlias deletes an alias.
func (s *Service) DeleteAlias(ctx context.Context, aliasARN string) error {
	if err := checkAliasARN(aliasARN); err != nil {
		return err
	}
	vs := s.store
	if err := vs.DeleteAlias(ctx, aliasARN); errors.Is(err, store.ErrNotFound) {
		return errorf("ResourceNotFound", "Resource not found: '%s'", aliasARN)
	} else if err != nil {
		return err
	}
	return nil
}

// ListAliases lists a state machine's aliases by name.
func (s *Service) ListAliases(ctx context.Context, smARN string, page store.Page) ([]*store.Alias, string, error) {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, "", errorf("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: %s': ListStateMachineAliases takes the state machine's ARN", resourceOf(smARN))
	}
	if _, err := s.GetStateMachine(ctx, smARN); err != nil {
		return nil, "", err
	}
	vs := s.store
	list, next, err := vs.ListAliases(ctx, smARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}

// checkTraceHeader applies AWS's constraints on a trace header.
func checkTraceHeader(h string) error {
	if len(h) > maxTraceHeader {
		return errorf("ValidationException", "1 validation error detected: Value at 'traceHeader' failed to satisfy constraint: Member must have length less than or equal to %d", maxTraceHeader)
	}
	for _, c := range h {
		if c > 127 {
			return errorf("ValidationException", "1 validation error detected: Value at 'traceHeader' failed to satisfy constraint: Member must satisfy regular expression pattern: \\p{ASCII}*")
		}
	}
	return nil
}

// checkTags applies AWS's limits on a resource's tags.
func checkTags(tags map[string]string) error {
	if len(tags) > maxTags {
		return errorf("TooManyTags", "Too many tags: a resource may have at most %d tags", maxTags)
	}
	for k, v := range tags {
		if k == "" || len(k) > 128 || len(v) > 256 {
			return errorf("ValidationException", "1 validation error detected: tag key '%s' must have length between 1 and 128 and its value at most 256", k)
		}
	}
	return nil
}

// ActivityInput is CreateActivity's input.
type ActivityInput struct {
	Name       string
	Tags       map[string]string
	Encryption *Encryption
}

// CreateActivityWith registers an activity with its tags and encryption
// configuration; creating an existing one returns it unchanged, as AWS
// does (its idempotency is on the name alone).
func (s *Service) CreateActivityWith(ctx context.Context, in ActivityInput) (*store.Activity, error) {
	if err := checkName(in.Name); err != nil {
		return nil, err
	}
	if err := CheckEncryption(in.Encryption); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}
	a := &store.Activity{ARN: s.scope().Activity(in.Name), Name: in.Name, Created: s.clock.Now()}
	if err := s.store.CreateActivity(ctx, a); err != nil {
		if errors.Is(err, store.ErrExists) {
			return s.store.GetActivity(ctx, a.ARN)
		}
		return nil, err
	}
	if err := s.putSettings(ctx, a.ARN, Settings{Encryption: in.Encryption, Tags: in.Tags}); err != nil {
		return nil, err
	}
	return a, nil
}

// DescribeActivityWith returns an activity and its settings.
func (s *Service) DescribeActivityWith(ctx context.Context, activityARN string) (*store.Activity, Settings, error) {
	a, err := s.DescribeActivity(ctx, activityARN)
	if err != nil {
		return nil, Settings{}, err
	}
	st, err := s.Settings(ctx, a.ARN)
	return a, st, err
}

// isActivity reports whether a names an activity.
func isActivity(a string) bool {
	p, err := arn.Parse(a)
	return err == nil && p.Service == "states" && p.Type == arn.Activity
}

// activityTags changes (change not nil) and returns an activity's tags.
func (s *Service) activityTags(ctx context.Context, activityARN string, change func(map[string]string)) (map[string]string, error) {
	if _, err := s.store.GetActivity(ctx, activityARN); errors.Is(err, store.ErrNotFound) {
		return nil, errorf("ResourceNotFound", "Resource not found: '%s'", activityARN)
	} else if err != nil {
		return nil, err
	}
	st, err := s.Settings(ctx, activityARN)
	if err != nil || change == nil {
		return st.Tags, err
	}
	if st.Tags == nil {
		st.Tags = map[string]string{}
	}
	change(st.Tags)
	if err := checkTags(st.Tags); err != nil {
		return nil, err
	}
	return st.Tags, s.putSettings(ctx, activityARN, st)
}

// checkUnqualified refuses the ARN of a version or an alias where op
// takes a state machine's.
func checkUnqualified(op, smARN string) error {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return errorf("ValidationException", "%s takes the state machine's ARN, not a version's or an alias's: '%s'", op, smARN)
	}
	return nil
}

// forgetVersions removes the versions, aliases and settings of a deleted
// state machine.
func (s *Service) forgetVersions(ctx context.Context, smARN string) error {
	vs := s.store
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
func (s *Service) putRef(ctx context.Context, st store.Store, execARN string, t *target, traceHeader string) error {
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

// ExecutionSettings returns the settings of the state machine an
// execution runs, and its revision when it is known: the version's for an
// execution started from a version, else the state machine's current one
// when the execution runs its current definition and role.
func (s *Service) ExecutionSettings(ctx context.Context, e *store.Execution) (Settings, string, error) {
	refs, err := s.ExecutionRefs(ctx, e)
	if err != nil {
		return Settings{}, "", err
	}
	if r := refs[e.ARN]; r != nil && r.VersionARN != "" {
		vs := s.store
		if v, err := vs.GetVersion(ctx, r.VersionARN); err == nil {
			st, err := decodeSettings(v.Settings)
			return st, v.RevisionID, err
		} else if !errors.Is(err, store.ErrNotFound) {
			return Settings{}, "", err
		}
	}
	sm, err := s.store.GetStateMachine(ctx, e.StateMachineARN)
	if errors.Is(err, store.ErrNotFound) {
		return Settings{}, "", nil
	}
	if err != nil {
		return Settings{}, "", err
	}
	st, err := s.Settings(ctx, sm.ARN)
	if sm.Definition != e.Definition || sm.RoleARN != e.RoleARN {
		return st, "", err
	}
	return st, sm.RevisionID, err
}
