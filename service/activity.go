package service

import (
	"context"
	"errors"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

// ActivityInput is CreateActivity's input.
type ActivityInput struct {
	Name       string
	Tags       map[string]string
	Encryption *Encryption
}

// CreateActivity registers an activity with its tags and encryption
// configuration; creating an existing one returns it unchanged, as AWS
// does (its idempotency is on the name alone).
func (s *Service) CreateActivity(ctx context.Context, in ActivityInput) (*store.Activity, error) {
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
	if err := s.cat.putSettings(ctx, a.ARN, Settings{Encryption: in.Encryption, Tags: in.Tags}); err != nil {
		return nil, err
	}
	return a, nil
}

// DescribeActivity returns an activity and its settings.
func (s *Service) DescribeActivity(ctx context.Context, activityARN string) (*store.Activity, Settings, error) {
	a, err := s.cat.activity(ctx, activityARN)
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
func (cat *catalog) activityTags(ctx context.Context, activityARN string, change func(map[string]string)) (map[string]string, error) {
	if _, err := cat.store.GetActivity(ctx, activityARN); errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrResourceNotFound, "Resource not found: '%s'", activityARN)
	} else if err != nil {
		return nil, err
	}
	st, err := cat.svc.Settings(ctx, activityARN)
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
	return st.Tags, cat.putSettings(ctx, activityARN, st)
}

// activity returns an activity.
func (cat *catalog) activity(ctx context.Context, arn string) (*store.Activity, error) {
	if err := checkARN(arn, "activity"); err != nil {
		return nil, err
	}
	a, err := cat.store.GetActivity(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.ErrActivityNotFound, "Activity Does Not Exist: '%s'", arn)
	}
	return a, err
}

// DeleteActivity removes an activity; deleting a missing one succeeds.
func (s *Service) DeleteActivity(ctx context.Context, arn string) error {
	if err := checkARN(arn, "activity"); err != nil {
		return err
	}
	if err := s.store.DeleteActivity(ctx, arn); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.cat.putSettings(ctx, arn, Settings{}) // its tags and encryption (version.go)
}

// ListActivities lists activities by name.
func (s *Service) ListActivities(ctx context.Context, page store.Page) ([]*store.Activity, string, error) {
	list, next, err := s.store.ListActivities(ctx, page)
	if errors.Is(err, store.ErrBadToken) {
		return nil, "", fault.New(fault.ErrBadToken, "Invalid Token: '%s'", page.Token)
	}
	return list, next, err
}
