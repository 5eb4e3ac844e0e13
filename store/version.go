package store

import (
	"context"
	"errors"
	"time"
)

// Errors of the Versioned methods; backends wrap them with %w.
var (
	// ErrInUse is a version an alias routes executions to.
	ErrInUse = errors.New("in use")
	// ErrLimit is a state machine that has as many versions or aliases as
	// the caller allows.
	ErrLimit = errors.New("limit reached")
)

// Version is a published, immutable version of a state machine.
type Version struct {
	ARN             string // the state machine's ARN, ":" and Number
	StateMachineARN string
	Number          int64 // 1 for the first version; never reused
	Definition      string
	RoleARN         string
	Type            string
	RevisionID      string // the state machine's revision it was published from
	Description     string
	// Settings is the state machine's configuration when the version was
	// published, as the service encodes it (JSON text; may be empty).
	Settings string
	Created  time.Time
}

// Alias names one or two versions of a state machine between which the
// executions started on it are routed by weight.
type Alias struct {
	ARN             string // the state machine's ARN, ":" and Name
	StateMachineARN string
	Name            string
	Description     string
	Routes          []Route
	Created         time.Time
	Updated         time.Time
}

// Route is one version of an alias and the percentage of executions it
// gets.
type Route struct {
	VersionARN string
	Weight     int
}

// ExecutionRef is the version and alias an execution was started from
// (empty when it was started on the state machine itself) and the trace
// header it was started with.
type ExecutionRef struct {
	ExecutionARN string
	VersionARN   string
	AliasARN     string
	TraceHeader  string // StartExecution's traceHeader
}

// Versioned is the part of a Store that keeps versions and aliases of state
// machines, which executions they were started from, and each resource's
// settings (the configuration the Store's own records do not hold). Every
// backend implements it; durable ones keep all of it across restarts.
type Versioned interface {
	// PublishVersion publishes v (StateMachineARN, Definition, RoleARN,
	// Type, RevisionID, Description, Settings, Created set). When a version
	// of the state machine has v.RevisionID already, it returns that one
	// and false. Otherwise it sets v.Number to one more than any number the
	// state machine ever had and v.ARN, stores v and returns it and true;
	// ErrLimit when the state machine has limit versions, ErrNotFound when
	// the state machine does not exist.
	PublishVersion(ctx context.Context, v *Version, limit int) (*Version, bool, error)
	// GetVersion returns a version; ErrNotFound when missing.
	GetVersion(ctx context.Context, arn string) (*Version, error)
	// ListVersions lists the versions of a state machine, newest first.
	ListVersions(ctx context.Context, stateMachineARN string, page Page) ([]*Version, string, error)
	// DeleteVersion removes a version; ErrNotFound when missing, ErrInUse
	// when an alias routes to it.
	DeleteVersion(ctx context.Context, arn string) error

	// CreateAlias stores a new alias; ErrExists when its ARN exists,
	// ErrNotFound when a version it routes to does not exist, ErrLimit
	// when the state machine has limit aliases.
	CreateAlias(ctx context.Context, a *Alias, limit int) error
	// UpdateAlias replaces an alias's description, routes and update
	// time; ErrNotFound when the alias or a version it routes to does not
	// exist.
	UpdateAlias(ctx context.Context, a *Alias) error
	// GetAlias returns an alias; ErrNotFound when missing.
	GetAlias(ctx context.Context, arn string) (*Alias, error)
	// ListAliases lists the aliases of a state machine ordered by name.
	ListAliases(ctx context.Context, stateMachineARN string, page Page) ([]*Alias, string, error)
	// DeleteAlias removes an alias; ErrNotFound when missing.
	DeleteAlias(ctx context.Context, arn string) error
	// DeleteVersions removes every version and alias of a state machine
	// and forgets its numbering (the state machine was deleted).
	DeleteVersions(ctx context.Context, stateMachineARN string) error

	// PutExecutionRef records what an execution is started from, before
	// CreateExecution: it changes nothing when the execution exists
	// already, so a start that finds its execution leaves it as it was.
	PutExecutionRef(ctx context.Context, r *ExecutionRef) error
	// ExecutionRefs returns the references of those of the executions
	// that have one, by execution ARN.
	ExecutionRefs(ctx context.Context, executionARNs []string) (map[string]*ExecutionRef, error)
	// ListExecutionsOf lists, newest first, the executions started from
	// a version or an alias (by its ARN), as ListExecutions lists them.
	ListExecutionsOf(ctx context.Context, ref, status string, page Page) ([]*Execution, string, error)

	// PutSettings keeps the settings of a resource (a state machine or an
	// activity, by ARN) as the service encodes them; "" removes them.
	PutSettings(ctx context.Context, arn, settings string) error
	// GetSettings returns a resource's settings; "" when it has none.
	GetSettings(ctx context.Context, arn string) (string, error)
}
