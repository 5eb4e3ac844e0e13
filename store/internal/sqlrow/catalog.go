package sqlrow

import (
	"encoding/json"
	"fmt"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// SMColumns are the columns of a state machine, in ScanSM's order.
const SMColumns = `arn, name, type, definition, role_arn, created, updated, revision, tags, logging`

// ScanSM scans a state machine (SMColumns).
func ScanSM(row Scanner) (*store.StateMachine, error) {
	var sm store.StateMachine
	var created, updated int64
	var tags string
	if err := row.Scan(&sm.ARN, &sm.Name, &sm.Type, &sm.Definition, &sm.RoleARN, &created, &updated, &sm.RevisionID, &tags, &sm.Logging); err != nil {
		return nil, err
	}
	sm.Created, sm.Updated = codec.FromNanos(created), codec.FromNanos(updated)
	if err := json.Unmarshal([]byte(tags), &sm.Tags); err != nil {
		return nil, fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	return &sm, nil
}

// Tags is the stored form of a state machine's tags (JSON).
func Tags(sm *store.StateMachine) (string, error) {
	tags, err := json.Marshal(sm.Tags)
	if err != nil {
		return "", fmt.Errorf("state machine %s: tags: %w", sm.ARN, err)
	}
	return string(tags), nil
}

// ActivityColumns are the columns of an activity, in ScanActivity's
// order.
const ActivityColumns = `arn, name, created`

// ScanActivity scans an activity (ActivityColumns).
func ScanActivity(row Scanner) (*store.Activity, error) {
	var a store.Activity
	var created int64
	if err := row.Scan(&a.ARN, &a.Name, &created); err != nil {
		return nil, err
	}
	a.Created = codec.FromNanos(created)
	return &a, nil
}

// SMValues are the values of sm's columns (SMColumns), for an insert.
func SMValues(sm *store.StateMachine) ([]any, error) {
	tags, err := Tags(sm)
	if err != nil {
		return nil, err
	}
	return []any{sm.ARN, sm.Name, sm.Type, sm.Definition, sm.RoleARN, codec.Nanos(sm.Created), codec.Nanos(sm.Updated), sm.RevisionID, tags, sm.Logging}, nil
}
