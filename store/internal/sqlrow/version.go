package sqlrow

import (
	"encoding/json"
	"fmt"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// VersionColumns are the columns of a version, in ScanVersion's order.
const VersionColumns = `arn, sm_arn, number, definition, role_arn, type, revision, description, settings, created`

// ScanVersion scans a version (VersionColumns).
func ScanVersion(row Scanner) (*store.Version, error) {
	var v store.Version
	var created int64
	if err := row.Scan(&v.ARN, &v.StateMachineARN, &v.Number, &v.Definition, &v.RoleARN, &v.Type, &v.RevisionID, &v.Description, &v.Settings, &created); err != nil {
		return nil, err
	}
	v.Created = codec.FromNanos(created)
	return &v, nil
}

// ScanVersionKeyed scans a version (VersionColumns), keyed by its number.
func ScanVersionKeyed(row Scanner) (Keyed[*store.Version], error) {
	v, err := ScanVersion(row)
	if err != nil {
		return Keyed[*store.Version]{}, err
	}
	return Keyed[*store.Version]{V: v, Key: v.Number}, nil
}

// VersionValues are the values of v's columns (VersionColumns), for an
// insert.
func VersionValues(v *store.Version) []any {
	return []any{v.ARN, v.StateMachineARN, v.Number, v.Definition, v.RoleARN, v.Type, v.RevisionID, v.Description, v.Settings, codec.Nanos(v.Created)}
}

// AliasColumns are the columns of an alias, in ScanAlias's order.
const AliasColumns = `arn, sm_arn, name, description, routes, created, updated`

// ScanAlias scans an alias (AliasColumns).
func ScanAlias(row Scanner) (*store.Alias, error) {
	var a store.Alias
	var routes string
	var created, updated int64
	if err := row.Scan(&a.ARN, &a.StateMachineARN, &a.Name, &a.Description, &routes, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(routes), &a.Routes); err != nil {
		return nil, fmt.Errorf("alias %s: routes: %w", a.ARN, err)
	}
	a.Created, a.Updated = codec.FromNanos(created), codec.FromNanos(updated)
	return &a, nil
}

// Routes is the stored form of an alias's routes (JSON).
func Routes(a *store.Alias) (string, error) {
	routes, err := json.Marshal(a.Routes)
	if err != nil {
		return "", fmt.Errorf("alias %s: routes: %w", a.ARN, err)
	}
	return string(routes), nil
}

// NotRouted checks that none of the aliases of rows (columns arn and
// routes) routes to version versionARN: store.ErrInUse when one does.
func NotRouted(rs Rows, versionARN string) error {
	for rs.Next() {
		var arn, text string
		if err := rs.Scan(&arn, &text); err != nil {
			return err
		}
		var routes []store.Route
		if err := json.Unmarshal([]byte(text), &routes); err != nil {
			return fmt.Errorf("alias %s: routes: %w", arn, err)
		}
		for _, r := range routes {
			if r.VersionARN == versionARN {
				return fmt.Errorf("version %s: alias %s routes to it: %w", versionARN, arn, store.ErrInUse)
			}
		}
	}
	return rs.Err()
}

// RefColumns are the columns of an execution's reference, in ScanRef's
// order.
const RefColumns = `exec_arn, version_arn, alias_arn, trace_header`

// ScanRef scans an execution's reference (RefColumns).
func ScanRef(row Scanner) (*store.ExecutionRef, error) {
	var r store.ExecutionRef
	return &r, row.Scan(&r.ExecutionARN, &r.VersionARN, &r.AliasARN, &r.TraceHeader)
}
