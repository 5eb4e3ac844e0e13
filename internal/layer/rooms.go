package layer

import (
	"context"
	"strings"
)

const mod = "github.com/stepd/stepd/"

// Rule is an import that a package must not make: directly (Direct), or
// through any chain of imports.
type Rule struct {
	From   string            // the package
	Not    func(string) bool // the packages it must not reach
	Direct bool              // only its own imports count
	Why    string
}

// Rooms are the rules between stepd's middle layers: the wire (api), the
// AWS-facing catalog (service), this process's live executions (runner)
// and the driver (engine) import downwards only, the wire speaks only to
// the service, and what the service and runner need of a task backend is
// injected by the assembly.
var Rooms = []Rule{
	{From: mod + "runner", Not: among("service", "api", "scheduler", "metrics", "notify", "server", "cmd/stepd"),
		Why: "imports go service → runner → engine, never back"},
	{From: mod + "engine", Not: among("runner", "service", "api", "scheduler", "server", "cmd/stepd"),
		Why: "the engine is below the runner and the service"},
	{From: mod + "api", Not: storePackage, Direct: true,
		Why: "the wire speaks only to the service"},
	{From: mod + "service", Not: taskBackend,
		Why: "a task backend is wired by the assembly, not linked by the service"},
	{From: mod + "runner", Not: taskBackend,
		Why: "an execution's invoker comes from the runner's Config"},
}

// among returns a test for the stepd packages named (paths below the
// module) and the packages under them.
func among(names ...string) func(string) bool {
	return func(p string) bool {
		rest, ok := strings.CutPrefix(p, mod)
		if !ok {
			return false
		}
		for _, n := range names {
			if rest == n || strings.HasPrefix(rest, n+"/") {
				return true
			}
		}
		return false
	}
}

// storePackage is store and every package under it.
func storePackage(p string) bool { return among("store")(p) }

// taskBackend is every package under task/ (task itself, the contract, is
// not a backend).
func taskBackend(p string) bool { return strings.HasPrefix(p, mod+"task/") }

// CheckRule returns the violations of a rule.
func CheckRule(ctx context.Context, r Rule) ([]Violation, error) {
	vs, err := Check(ctx, r.Not, r.From)
	if err != nil || !r.Direct {
		return vs, err
	}
	var direct []Violation
	for _, v := range vs {
		if len(v.Chain) == 2 {
			direct = append(direct, v)
		}
	}
	return direct, nil
}
