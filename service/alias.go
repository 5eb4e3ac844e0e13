package service

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

var aliasName = regexp.MustCompile(aliasNamePattern)

// checkAliasARN checks that a names an alias.
func checkAliasARN(a string) error {
	if err := checkARN(a, arn.StateMachine); err != nil {
		return err
	}
	if _, _, version, ok := arn.Qualified(a); !ok || version {
		return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(a))
	}
	return nil
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

// RouteInput is one version of an alias's routingConfiguration.
type RouteInput struct {
	VersionARN string
	Weight     *int
}

// checkRoutes checks a routingConfiguration and returns its routes and
// the state machine they belong to, with AWS's messages (recorded
// CreateStateMachineAlias answers).
func checkRoutes(in []RouteInput) ([]store.Route, string, error) {
	if len(in) < 1 || len(in) > 2 {
		items := make([]string, len(in))
		for i, r := range in {
			w := "null"
			if r.Weight != nil {
				w = strconv.Itoa(*r.Weight)
			}
			items[i] = fmt.Sprintf("RoutingConfigurationListItem(stateMachineVersionArn=%s, weight=%s)", r.VersionARN, w)
		}
		bound := "less than or equal to 2"
		if len(in) < 1 {
			bound = "greater than or equal to 1"
		}
		return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value '[%s]' at 'routingConfiguration' failed to satisfy constraint: Member must have length %s", strings.Join(items, ", "), bound)
	}
	arns := make([]string, len(in))
	weights := make([]string, len(in))
	for i, r := range in {
		arns[i] = r.VersionARN
		if r.Weight != nil {
			weights[i] = strconv.Itoa(*r.Weight)
		}
	}
	var out []store.Route
	sum, smARN := 0, ""
	for i, r := range in {
		if r.VersionARN == "" {
			return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value null at 'routingConfiguration.%d.member.stateMachineVersionArn' failed to satisfy constraint: Member must not be null", i+1)
		}
		if r.Weight == nil {
			return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value null at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must not be null", i+1)
		}
		if *r.Weight > 100 {
			return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value '%d' at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100", *r.Weight, i+1)
		}
		if *r.Weight < 0 {
			return nil, "", fault.New(fault.ErrValidation, "1 validation error detected: Value '%d' at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must have value greater than or equal to 0", *r.Weight, i+1)
		}
		if err := checkARN(r.VersionARN, arn.StateMachine); err != nil {
			return nil, "", err
		}
		if _, _, version, ok := arn.Qualified(r.VersionARN); !ok || !version {
			return nil, "", fault.New(fault.ErrValidation, "Routing configuration must contain state machine version ARNs. Received: [%s]", strings.Join(arns, ", "))
		}
	}
	for _, r := range in {
		base, _, _, _ := arn.Qualified(r.VersionARN)
		if smARN != "" && base != smARN {
			return nil, "", fault.New(fault.ErrValidation, "Routing configuration must contain state machine version ARNs of the same state machine. Received: [%s]", strings.Join(arns, ", "))
		}
		if slices.ContainsFunc(out, func(o store.Route) bool { return o.VersionARN == r.VersionARN }) {
			return nil, "", fault.New(fault.ErrValidation, "Routing configuration must contain distinct state machine version ARNs. Received: [%s]", strings.Join(arns, ", "))
		}
		smARN = base
		sum += *r.Weight
		out = append(out, store.Route{VersionARN: r.VersionARN, Weight: *r.Weight})
	}
	if sum != 100 {
		return nil, "", fault.New(fault.ErrValidation, "Sum of routing configuration weights must equal 100. Received: [%s]", strings.Join(weights, ", "))
	}
	return out, smARN, nil
}

// aliasNotFound is AWS's answer to an alias that does not exist (recorded
// UpdateStateMachineAlias answer).
func aliasNotFound() error {
	return fault.New(fault.ErrResourceNotFound, "Request references a resource that does not exist.")
}

// aliasError maps the store's errors of an alias write to AWS's.
func aliasError(err error) error {
	switch {
	case errors.Is(err, store.ErrLimit):
		return fault.New(fault.ErrQuota, "The maximum number of aliases (%d) of a state machine has been reached", MaxAliases)
	case errors.Is(err, store.ErrNotFound):
		return aliasNotFound()
	}
	return err
}

// CreateAlias creates an alias of the state machine whose versions the
// routes name. Creating one that exists with the same description and
// routes returns it, as AWS does; with others, it is a conflict.
func (s *Service) CreateAlias(ctx context.Context, name, description string, routes []RouteInput) (*store.Alias, error) {
	if name == "" || len(name) > 80 || !aliasName.MatchString(name) {
		return nil, aliasNameError(name)
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
	if err := s.cat.versionsExist(ctx, rs); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	a := &store.Alias{ARN: s.scope().Alias(sm.Name, name), StateMachineARN: sm.ARN, Name: name, Description: description, Routes: rs, Created: now, Updated: now}
	if err := vs.CreateAlias(ctx, a, MaxAliases); errors.Is(err, store.ErrExists) {
		old, gerr := vs.GetAlias(ctx, a.ARN)
		if gerr == nil && old.Description == a.Description && slices.Equal(old.Routes, a.Routes) {
			return old, nil
		}
		return nil, fault.New(fault.ErrConflict, "Failed to create alias because an alias with the same name and a different routing configuration already exists.")
	} else if err != nil {
		return nil, aliasError(err)
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
		return nil, aliasNotFound()
	}
	return a, err
}

// UpdateAlias changes an alias's description (when not nil) and routes
// (when given).
func (s *Service) UpdateAlias(ctx context.Context, aliasARN string, description *string, routes []RouteInput) (*store.Alias, error) {
	if description == nil && routes == nil {
		return nil, fault.New(fault.ErrValidation, "Either the description or the RoutingConfiguration must be specified")
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
			return nil, fault.New(fault.ErrValidation, "Routing configuration must contain state machine version ARNs of the alias's state machine '%s', not of '%s'", a.StateMachineARN, smARN)
		}
		if err := s.cat.versionsExist(ctx, rs); err != nil {
			return nil, err
		}
		a.Routes = rs
	}
	a.Updated = s.clock.Now()
	vs := s.store
	if err := vs.UpdateAlias(ctx, a); err != nil {
		return nil, aliasError(err)
	}
	return a, nil
}

// DeleteAlias deletes an alias; deleting one that does not exist
// succeeds, as on AWS (recorded case).
func (s *Service) DeleteAlias(ctx context.Context, aliasARN string) error {
	if err := checkAliasARN(aliasARN); err != nil {
		return err
	}
	vs := s.store
	if err := vs.DeleteAlias(ctx, aliasARN); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// versionsExist checks that the versions routes name exist: one that does
// not is ResourceNotFound, naming it.
func (cat *catalog) versionsExist(ctx context.Context, routes []store.Route) error {
	for _, r := range routes {
		_, err := cat.store.GetVersion(ctx, r.VersionARN)
		if errors.Is(err, store.ErrNotFound) {
			return fault.New(fault.ErrResourceNotFound, "Resource not found: '%s'", r.VersionARN)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// aliasNameError is AWS's answer to an alias name that breaks its length or
// its pattern (recorded CreateStateMachineAlias answers).
func aliasNameError(name string) error {
	if len(name) > 80 {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80", name)
	}
	if name == "" {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '' at 'name' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", name, `^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`)
}

// ListAliases lists a state machine's aliases by name.
func (s *Service) ListAliases(ctx context.Context, smARN string, page store.Page) ([]*store.Alias, string, error) {
	if _, _, _, ok := arn.Qualified(smARN); ok {
		return nil, "", fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: %s'", resourceOf(smARN))
	}
	if _, err := s.GetStateMachine(ctx, smARN); err != nil {
		return nil, "", err
	}
	vs := s.store
	list, next, err := vs.ListAliases(ctx, smARN, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}
