// Package arn builds and parses the Amazon Resource Names stepd hands out:
// state machines, executions (Standard and Express), activities, Map Runs
// and IAM roles, with the region and account stepd uses when none is
// configured. It imports nothing of stepd's and must not, so that every
// layer may use it.
package arn

import (
	"errors"
	"fmt"
	"strings"
)

// The region and account of ARNs when none is configured.
const (
	DefaultRegion  = "us-east-1"
	DefaultAccount = "123456789012"
)

// The resource types of Step Functions ARNs.
const (
	StateMachine = "stateMachine"
	Execution    = "execution"
	Express      = "express" // an Express execution
	Activity     = "activity"
	MapRun       = "mapRun"
)

// Scope is the region and account ARNs are built in.
type Scope struct {
	Region, Account string
}

// Default is the scope of stepd's defaults.
var Default = Scope{Region: DefaultRegion, Account: DefaultAccount}

// Or returns s with an empty region or account replaced by the default.
func (s Scope) Or() Scope {
	if s.Region == "" {
		s.Region = DefaultRegion
	}
	if s.Account == "" {
		s.Account = DefaultAccount
	}
	return s
}

func (s Scope) states(resource string, names ...string) string {
	var b strings.Builder
	b.Grow(32 + len(s.Region) + len(s.Account) + len(resource) + 40*len(names))
	b.WriteString("arn:aws:states:")
	b.WriteString(s.Region)
	b.WriteByte(':')
	b.WriteString(s.Account)
	b.WriteByte(':')
	b.WriteString(resource)
	for _, n := range names {
		b.WriteByte(':')
		b.WriteString(n)
	}
	return b.String()
}

// StateMachine returns the ARN of the state machine name.
func (s Scope) StateMachine(name string) string { return s.states(StateMachine, name) }

// Execution returns the ARN of the Standard execution name of state
// machine sm.
func (s Scope) Execution(sm, name string) string { return s.states(Execution, sm, name) }

// Express returns the ARN of an Express execution: AWS adds an id of its
// own after the name, since Express execution names need not be unique.
// An empty id is left out (TestState's executions have none).
func (s Scope) Express(sm, name, id string) string {
	if id == "" {
		return s.states(Express, sm, name)
	}
	return s.states(Express, sm, name, id)
}

// Activity returns the ARN of the activity name.
func (s Scope) Activity(name string) string { return s.states(Activity, name) }

// MapRun returns the ARN of a Map Run: the state machine's name and the
// Map state's label joined by a slash, then the run's id.
func (s Scope) MapRun(sm, label, id string) string { return s.states(MapRun, sm+"/"+label, id) }

// Service returns the ARN of a resource of another AWS service in the
// scope: arn:aws:SERVICE:REGION:ACCOUNT:RESOURCE. A global service (IAM,
// S3) passes noRegion, and S3 buckets also no account.
func (s Scope) Service(service, resource string, noRegion, noAccount bool) string {
	region, account := s.Region, s.Account
	if noRegion {
		region = ""
	}
	if noAccount {
		account = ""
	}
	return "arn:aws:" + service + ":" + region + ":" + account + ":" + resource
}

// Role returns the ARN of the IAM role name (IAM ARNs have no region).
func (s Scope) Role(name string) string { return "arn:aws:iam::" + s.Account + ":role/" + name }

// ARN is a parsed ARN: arn:Partition:Service:Region:Account:Resource.
// For Step Functions resources, Type is the resource type and Names the
// colon-separated parts after it (a state machine's name; an execution's
// state machine and name, and an Express execution's id).
type ARN struct {
	Partition, Service, Region, Account string
	Resource                            string // everything after the account
	Type                                string // Resource up to its first ':' or '/'
	Names                               []string
}

// ErrInvalid is wrapped by Parse's errors.
var ErrInvalid = errors.New("invalid ARN")

// Parse splits an ARN into its parts.
func Parse(s string) (ARN, error) {
	// Five cuts rather than strings.SplitN, which allocates the parts
	// (the API parses an ARN or two per request).
	var parts [6]string
	rest, ok := s, true
	for i := range 5 {
		if parts[i], rest, ok = strings.Cut(rest, ":"); !ok {
			return ARN{}, fmt.Errorf("%w: %q", ErrInvalid, s)
		}
	}
	parts[5] = rest
	if parts[0] != "arn" || parts[1] == "" || parts[2] == "" || parts[5] == "" {
		return ARN{}, fmt.Errorf("%w: %q", ErrInvalid, s)
	}
	a := ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}
	typ := a.Resource
	if i := strings.IndexAny(typ, ":/"); i >= 0 {
		typ = typ[:i]
	}
	a.Type = typ
	if a.Service == "states" && len(a.Resource) > len(typ) && a.Resource[len(typ)] == ':' {
		a.Names = strings.Split(a.Resource[len(typ)+1:], ":")
	}
	return a, nil
}

// TypeOf returns the resource type of s ("execution", "express",
// "stateMachine", …) as Parse would, or "" when s is not an ARN; it
// allocates nothing.
func TypeOf(s string) string {
	// One pass over s: after "arn:", the partition and the service must
	// not be empty, the region and the account may; the type follows the
	// fifth colon and ends at a colon or a slash.
	if len(s) < 4 || s[:4] != "arn:" {
		return ""
	}
	colons, start := 1, 4
	for i := 4; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		if (colons == 1 || colons == 2) && i == start {
			return ""
		}
		colons, start = colons+1, i+1
		if colons == 5 {
			rest := s[start:]
			if i := strings.IndexAny(rest, ":/"); i >= 0 {
				rest = rest[:i]
			}
			return rest
		}
	}
	return ""
}

// StatesNames returns what Parse gives as Type, and as Names joined by
// colons, when s is a Step Functions ARN that names something (Service
// "states" and Names not empty); ok is false for any other s. It
// allocates nothing (the API checks an ARN or two per request).
func StatesNames(s string) (typ, names string, ok bool) {
	rest, found := strings.CutPrefix(s, "arn:")
	if !found {
		return "", "", false
	}
	var partition, service, res string
	var ok1, ok2, ok3, ok4 bool
	partition, rest, ok1 = strings.Cut(rest, ":")
	service, rest, ok2 = strings.Cut(rest, ":")
	_, rest, ok3 = strings.Cut(rest, ":") // the region
	_, res, ok4 = strings.Cut(rest, ":")  // the account; the resource
	if !ok1 || !ok2 || !ok3 || !ok4 || partition == "" || service != "states" || res == "" {
		return "", "", false
	}
	typ = res
	if i := strings.IndexAny(res, ":/"); i >= 0 {
		typ = res[:i]
	}
	if len(res) <= len(typ) || res[len(typ)] != ':' {
		return "", "", false
	}
	return typ, res[len(typ)+1:], true
}

// Scope returns the region and account of a.
func (a ARN) Scope() Scope { return Scope{Region: a.Region, Account: a.Account} }

// IsExecution reports whether a names a Standard or Express execution.
func (a ARN) IsExecution() bool {
	return a.Service == "states" && (a.Type == Execution || a.Type == Express)
}
