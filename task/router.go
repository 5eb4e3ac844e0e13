package task

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Partial is implemented by invokers that serve only some requests, such as
// the MockConfig invoker. A Router passes over a Partial invoker for the
// requests it does not serve.
type Partial interface {
	Invoker
	Serves(req *Request) bool
}

// Router sends each request to an invoker chosen by the request's Resource.
// A pattern is an exact resource, or a prefix ending in "*" ("*" alone
// matches every resource). The candidates for a request are the exact match,
// then the prefix matches from the longest prefix down (equal patterns in
// the order they were added), then Fallback. The first candidate that
// serves the request (every invoker that is not Partial serves all) answers
// it; when none does, the first candidate answers anyway, so that its own
// error explains what is missing.
//
// Configure a Router before use; Invoke is then safe for concurrent use.
type Router struct {
	// Fallback is the last candidate for every request; may be nil.
	Fallback Invoker
	routes   []route
}

type route struct {
	prefix string
	exact  bool
	inv    Invoker
}

// Handle adds a route for the pattern.
func (r *Router) Handle(pattern string, inv Invoker) {
	rt := route{prefix: pattern, exact: true, inv: inv}
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		rt.prefix, rt.exact = p, false
	}
	r.routes = append(r.routes, rt)
	// Exact routes first, then longer prefixes first; stable keeps the
	// order of equal patterns.
	sort.SliceStable(r.routes, func(i, j int) bool {
		a, b := r.routes[i], r.routes[j]
		if a.exact != b.exact {
			return a.exact
		}
		return len(a.prefix) > len(b.prefix)
	})
}

// Invoke routes the request.
func (r *Router) Invoke(ctx context.Context, req *Request) Result {
	if inv := r.pick(req); inv != nil {
		return inv.Invoke(ctx, req)
	}
	return Result{Error: "States.Runtime", Cause: fmt.Sprintf("no task handler for resource %s of state %q: configure a mock for the state or a command for the resource", req.Resource, req.StateName)}
}

// Immediate reports whether the invoker that serves req answers it at once
// (see Immediate); a request that no invoker serves is answered at once
// with an error.
func (r *Router) Immediate(req *Request) bool {
	inv := r.pick(req)
	return inv == nil || IsImmediate(inv, req)
}

// Waits reports whether the invoker that serves req waits for it (see
// Waiting).
func (r *Router) Waits(req *Request) bool {
	inv := r.pick(req)
	return inv != nil && HowAnswers(inv, req) == Waits
}

// pick returns the invoker that answers req, nil when there is none.
func (r *Router) pick(req *Request) Invoker {
	var first Invoker
	try := func(inv Invoker) bool {
		if inv == nil {
			return false
		}
		if first == nil {
			first = inv
		}
		p, ok := inv.(Partial)
		return !ok || p.Serves(req)
	}
	for _, rt := range r.routes {
		if rt.matches(req.Resource) && try(rt.inv) {
			return rt.inv
		}
	}
	if try(r.Fallback) {
		return r.Fallback
	}
	return first
}

func (rt route) matches(resource string) bool {
	if rt.exact {
		return resource == rt.prefix
	}
	return strings.HasPrefix(resource, rt.prefix)
}

// Routes reports whether a pattern was registered that matches resource.
func (r *Router) Routes(resource string) bool {
	for _, rt := range r.routes {
		if rt.matches(resource) {
			return true
		}
	}
	return false
}
