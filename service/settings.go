package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

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
			return fault.New(fault.ErrValidation, "kmsKeyId and kmsDataKeyReusePeriodSeconds may only be given with type CUSTOMER_MANAGED_KMS_KEY")
		}
	case "CUSTOMER_MANAGED_KMS_KEY":
		return fault.New(fault.ErrInvalidEncryption, "encryptionConfiguration: type CUSTOMER_MANAGED_KMS_KEY is not supported by stepd, which has no KMS to encrypt with a customer's key; use AWS_OWNED_KEY")
	case "":
		return fault.New(fault.ErrValidation, "1 validation error detected: Value null at 'encryptionConfiguration.type' failed to satisfy constraint: Member must not be null")
	default:
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'encryptionConfiguration.type' failed to satisfy constraint: Member must satisfy enum value set: [CUSTOMER_MANAGED_KMS_KEY, AWS_OWNED_KEY]", e.Type)
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

func (cat *catalog) putSettings(ctx context.Context, resource string, st Settings) error {
	return cat.store.PutSettings(ctx, resource, st.encode())
}

func checkDescription(field, d string) error {
	if len(d) > maxDescription {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", field, maxDescription)
	}
	return nil
}

// checkTraceHeader applies AWS's constraints on a trace header.
func checkTraceHeader(h string) error {
	if len(h) > maxTraceHeader {
		return fault.New(fault.ErrValidation, "1 validation error detected: Value at 'traceHeader' failed to satisfy constraint: Member must have length less than or equal to %d", maxTraceHeader)
	}
	for _, c := range h {
		if c > 127 {
			return fault.New(fault.ErrValidation, "1 validation error detected: Value at 'traceHeader' failed to satisfy constraint: Member must satisfy regular expression pattern: \\p{ASCII}*")
		}
	}
	return nil
}

// checkTags applies AWS's limits on a resource's tags.
func checkTags(tags map[string]string) error {
	if len(tags) > maxTags {
		return fault.New(fault.ErrTooManyTags, "Too many tags: a resource may have at most %d tags", maxTags)
	}
	for k, v := range tags {
		if k == "" || len(k) > 128 || len(v) > 256 {
			return fault.New(fault.ErrValidation, "1 validation error detected: tag key '%s' must have length between 1 and 128 and its value at most 256", k)
		}
	}
	return nil
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
