// Package graph draws a state machine definition for people: Build turns a
// definition into the graph model the web console draws (console/web/src/
// model.js, ported), Mermaid prints it as a Mermaid flowchart, and Layout and
// SVG lay it out top to bottom and draw it as a standalone SVG picture, with
// the console's node sizes, spacing, containers and drawing (see layout.go
// for how the layout differs from the console's dagre).
//
// Everything here is a pure function of its arguments.
//
// It imports only value, and must not import the interpreter or anything
// above it (cmd/stepd and conformance use it).
package graph

import (
	"strconv"
	"strings"

	"github.com/stepd/stepd/value"
)

// Node kinds.
const (
	KindStart   = "start"
	KindEnd     = "end"
	KindState   = "state"
	KindMissing = "missing" // a transition target that the scope does not define
)

// Edge kinds.
const (
	EdgeNext    = "next"
	EdgeChoice  = "choice"
	EdgeDefault = "default"
	EdgeCatch   = "catch"
)

// Scope is one sequence of states: the machine, a Parallel branch or a
// Map's item processor.
type Scope struct {
	ID    string
	Label string // "", "Branch 1", "Item processor"...
	Nodes []*Node
	Edges []*Edge

	// Set by Layout: the scope's size.
	Width, Height float64
}

// Node is a state, a Start or End marker, or a missing target.
type Node struct {
	ID       string
	Kind     string
	Name     string
	Type     string        // the state's Type, "?" when absent
	Def      *value.Object // the state's definition (KindState)
	Children []*Scope      // a Parallel state's branches, a Map state's item processor

	// Set by Layout: centre, size, and for containers the width of the
	// children laid side by side.
	X, Y, W, H, InnerW float64
}

// Edge is a transition.
type Edge struct {
	From, To string // node IDs
	Kind     string
	Label    string // short text on the edge: a Choice rule, "Default", "Catch States.ALL"
	Title    string // the full text
	Index    int    // the Choice rule's or catcher's index

	// Set by Layout: the route and the label's centre.
	Points []Point
	LX, LY float64
}

// Point is a position in the picture.
type Point struct{ X, Y float64 }

// Build returns the top scope of a definition (a parsed JSON value). It
// draws what it is given, whether or not the definition is valid: a
// missing target becomes a KindMissing node.
func Build(def any) *Scope {
	seq := 0
	return scope(def, "", &seq)
}

func obj(v any) *value.Object {
	o, _ := v.(*value.Object)
	if o == nil {
		o = value.NewObject(0)
	}
	return o
}

func get(o *value.Object, k string) any {
	v, _ := o.Get(k)
	return v
}

func strOf(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

func scope(defv any, label string, seq *int) *Scope {
	def := obj(defv)
	id := "s" + strconv.Itoa(*seq)
	*seq++
	sc := &Scope{ID: id, Label: label}
	start := &Node{ID: id + ":start", Kind: KindStart, Name: "Start"}
	end := &Node{ID: id + ":end", Kind: KindEnd, Name: "End"}
	sc.Nodes = append(sc.Nodes, start)
	byName := map[string]*Node{}
	states, _ := get(def, "States").(*value.Object)
	if states != nil {
		for name, stv := range states.All {
			st := obj(stv)
			typ, ok := strOf(get(st, "Type"))
			if !ok {
				typ = "?"
			}
			n := &Node{ID: id + ":" + name, Kind: KindState, Name: name, Type: typ, Def: st}
			switch typ {
			case "Parallel":
				if bs, ok := get(st, "Branches").([]any); ok {
					for i, b := range bs {
						n.Children = append(n.Children, scope(b, "Branch "+strconv.Itoa(i+1), seq))
					}
				}
			case "Map":
				proc := get(st, "ItemProcessor")
				lbl := "Item processor"
				if proc == nil {
					proc = get(st, "Iterator")
				} else if mode, _ := get(obj(get(obj(proc), "ProcessorConfig")), "Mode").(string); mode == "DISTRIBUTED" {
					lbl = "Item processor (distributed)"
				}
				if proc != nil {
					n.Children = []*Scope{scope(proc, lbl, seq)}
				}
			}
			sc.Nodes = append(sc.Nodes, n)
			byName[name] = n
		}
	}
	missing := map[string]*Node{}
	target := func(v any) string {
		name, ok := strOf(v)
		if !ok {
			name = value.String(v)
		}
		if n := byName[name]; n != nil {
			return n.ID
		}
		m := missing[name]
		if m == nil {
			m = &Node{ID: id + ":missing:" + name, Kind: KindMissing, Name: name}
			missing[name] = m
			sc.Nodes = append(sc.Nodes, m)
		}
		return m.ID
	}
	if s, ok := def.Get("StartAt"); ok {
		sc.Edges = append(sc.Edges, &Edge{From: start.ID, To: target(s), Kind: EdgeNext})
	}
	usesEnd := false
	for _, n := range sc.Nodes {
		if n.Kind != KindState {
			continue
		}
		s := n.Def
		if n.Type == "Choice" {
			rules, _ := get(s, "Choices").([]any)
			for i, rv := range rules {
				r := obj(rv)
				if next, ok := r.Get("Next"); ok {
					text := RuleText(r)
					sc.Edges = append(sc.Edges, &Edge{From: n.ID, To: target(next), Kind: EdgeChoice, Label: Short(text), Title: "Rule " + strconv.Itoa(i+1) + ": " + text, Index: i})
				}
			}
			if d, ok := s.Get("Default"); ok {
				sc.Edges = append(sc.Edges, &Edge{From: n.ID, To: target(d), Kind: EdgeDefault, Label: "Default", Title: "Default"})
			}
		} else if next, ok := s.Get("Next"); ok {
			sc.Edges = append(sc.Edges, &Edge{From: n.ID, To: target(next), Kind: EdgeNext})
		}
		if get(s, "End") == true || n.Type == "Succeed" || n.Type == "Fail" {
			sc.Edges = append(sc.Edges, &Edge{From: n.ID, To: end.ID, Kind: EdgeNext})
			usesEnd = true
		}
		catches, _ := get(s, "Catch").([]any)
		for i, cv := range catches {
			c := obj(cv)
			next, ok := c.Get("Next")
			if !ok {
				continue
			}
			errs := ErrorList(c)
			sc.Edges = append(sc.Edges, &Edge{From: n.ID, To: target(next), Kind: EdgeCatch, Label: Short("Catch " + errs), Title: "Catch: " + errs, Index: i})
		}
	}
	if usesEnd || len(sc.Nodes) == 1 {
		sc.Nodes = append(sc.Nodes, end)
	}
	return sc
}

// ErrorList is a retrier's or catcher's ErrorEquals, comma-separated.
func ErrorList(o *value.Object) string {
	list, _ := get(o, "ErrorEquals").([]any)
	names := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := strOf(e); ok {
			names = append(names, s)
		} else {
			names = append(names, value.String(e))
		}
	}
	return strings.Join(names, ", ")
}

// Short cuts a label to 34 characters, as the console does.
func Short(s string) string {
	r := []rune(s)
	if len(r) > 34 {
		return string(r[:33]) + "…"
	}
	return s
}

var ops = map[string]string{
	"StringEquals": "==", "NumericEquals": "==", "BooleanEquals": "==", "TimestampEquals": "==",
	"StringLessThan": "<", "NumericLessThan": "<", "TimestampLessThan": "<",
	"StringGreaterThan": ">", "NumericGreaterThan": ">", "TimestampGreaterThan": ">",
	"StringLessThanEquals": "<=", "NumericLessThanEquals": "<=", "TimestampLessThanEquals": "<=",
	"StringGreaterThanEquals": ">=", "NumericGreaterThanEquals": ">=", "TimestampGreaterThanEquals": ">=",
	"StringMatches": "matches",
}

// RuleText renders a Choice rule as a short expression, e.g.
// `$.status == "failed"`, or a JSONata Condition as written.
func RuleText(r *value.Object) string {
	if r == nil {
		return "?"
	}
	if c, ok := strOf(get(r, "Condition")); ok {
		c = strings.TrimPrefix(c, "{%")
		c = strings.TrimSuffix(c, "%}")
		return strings.TrimSpace(c)
	}
	if and, ok := get(r, "And").([]any); ok {
		return joinRules(and, " && ")
	}
	if or, ok := get(r, "Or").([]any); ok {
		return joinRules(or, " || ")
	}
	if not, ok := r.Get("Not"); ok && not != nil && not != false {
		return "!" + paren(RuleText(obj(not)))
	}
	v, _ := strOf(get(r, "Variable"))
	for key, val := range r.All {
		switch key {
		case "Variable", "Next", "Assign", "Output", "Comment":
			continue
		}
		base := strings.TrimSuffix(key, "Path")
		if op, ok := ops[base]; ok {
			operand := value.String(val)
			if base != key {
				operand, _ = strOf(val)
			}
			return v + " " + op + " " + operand
		}
		if strings.HasPrefix(key, "Is") {
			what := strings.ToLower(key[2:])
			yes := val != nil && val != false
			if what == "present" {
				if yes {
					return v + " is present"
				}
				return v + " is absent"
			}
			if yes {
				return v + " is " + what
			}
			return v + " is not " + what
		}
	}
	if v == "" {
		return "rule"
	}
	return v
}

func joinRules(rs []any, sep string) string {
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = paren(RuleText(obj(x)))
	}
	return strings.Join(parts, sep)
}

func paren(s string) string {
	if strings.Contains(s, " ") {
		return "(" + s + ")"
	}
	return s
}

// Walk calls fn for every node of the scope and of its nested scopes, with
// the node's scope and depth.
func Walk(sc *Scope, fn func(n *Node, sc *Scope, depth int)) { walk(sc, fn, 0) }

func walk(sc *Scope, fn func(*Node, *Scope, int), depth int) {
	for _, n := range sc.Nodes {
		fn(n, sc, depth)
		for _, c := range n.Children {
			walk(c, fn, depth+1)
		}
	}
}
