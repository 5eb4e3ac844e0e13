package lsp

import (
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/template"
)

// scope is one state machine object of the document: a definition, a
// Parallel branch or a Map's item processor. State names are looked up
// and renamed within a scope, as transitions reach only their own scope.
type scope struct {
	node   *node // the object with StartAt and States
	top    *node // the definition it belongs to
	where  string
	owner  *node // the Parallel or Map state (nil at the top)
	label  string
	nested []*scope
}

// states returns the members of the scope's States object.
func (sc *scope) states() []*node {
	if s := sc.node.child("States"); s != nil && s.kind == 'o' {
		return s.children
	}
	return nil
}

// state returns the state named name.
func (sc *scope) state(name string) *node {
	if s := sc.node.child("States"); s != nil {
		return s.child(name)
	}
	return nil
}

func (sc *scope) names() []string {
	var out []string
	for _, s := range sc.states() {
		out = append(out, s.key)
	}
	return out
}

// references returns the strings that name a state of the scope:
// StartAt, and each state's Next, Default and its Choices' and Catch's
// Next.
func (sc *scope) references() []*node {
	var out []*node
	add := func(n *node) {
		if n != nil && n.kind == 's' {
			out = append(out, n)
		}
	}
	add(sc.node.child("StartAt"))
	for _, st := range sc.states() {
		add(st.child("Next"))
		add(st.child("Default"))
		for _, list := range []string{"Choices", "Catch"} {
			if l := st.child(list); l != nil && l.kind == 'a' {
				for _, c := range l.children {
					add(c.child("Next"))
				}
			}
		}
	}
	return out
}

// isReference reports whether n is one of the scope's references.
func (sc *scope) isReference(n *node) bool {
	for _, r := range sc.references() {
		if r == n {
			return true
		}
	}
	return false
}

// scopes returns the document's top-level scopes: the definition, or each
// inline definition of a template, each with its nested scopes.
func (d *document) scopes() []*scope {
	if d.root == nil || d.root.kind != 'o' {
		return nil
	}
	if d.root.child("States") != nil || d.root.child("StartAt") != nil {
		return []*scope{d.scope(d.root, d.root, "top", nil, "")}
	}
	var out []*scope
	if res := d.root.child("Resources"); res != nil {
		for _, r := range res.children {
			t := r.child("Type")
			if t == nil || (t.str != template.CFNStateMachine && t.str != template.SAMStateMachine) {
				continue
			}
			if def := r.child("Properties").child("Definition"); def != nil && def.kind == 'o' {
				out = append(out, d.scope(def, def, "top", nil, r.key))
			}
		}
	}
	return out
}

func (d *document) scope(n, top *node, where string, owner *node, label string) *scope {
	sc := &scope{node: n, top: top, where: where, owner: owner, label: label}
	for _, st := range sc.states() {
		if b := st.child("Branches"); b != nil && b.kind == 'a' {
			for _, br := range b.children {
				if br.kind == 'o' {
					sc.nested = append(sc.nested, d.scope(br, top, "branch", st, ""))
				}
			}
		}
		for _, k := range []string{"ItemProcessor", "Iterator"} {
			if p := st.child(k); p != nil && p.kind == 'o' {
				sc.nested = append(sc.nested, d.scope(p, top, "processor", st, ""))
			}
		}
	}
	return sc
}

// allScopes returns every scope, nested ones included.
func (d *document) allScopes() []*scope {
	var out []*scope
	var add func(sc *scope)
	add = func(sc *scope) {
		out = append(out, sc)
		for _, n := range sc.nested {
			add(n)
		}
	}
	for _, sc := range d.scopes() {
		add(sc)
	}
	return out
}

// scopeOf returns the innermost scope that holds n.
func (d *document) scopeOf(n *node) *scope {
	all := d.allScopes()
	for x := n; x != nil; x = x.parent {
		for _, sc := range all {
			if sc.node == x {
				return sc
			}
		}
	}
	return nil
}

// stateOf returns the state object that holds n (n itself when it is
// one), and its scope.
func (d *document) stateOf(n *node) (*node, *scope) {
	for x := n; x != nil && x.parent != nil; x = x.parent {
		if x.parent.hasKey && x.parent.key == "States" && x.parent.parent != nil {
			if sc := d.scopeOf(x.parent.parent); sc != nil && sc.node == x.parent.parent {
				return x, sc
			}
		}
	}
	return nil, nil
}

// queryLanguage returns a state's query language: its own, else its
// definition's.
func queryLanguage(st *node, sc *scope) string {
	if q := st.child("QueryLanguage"); q != nil && q.str == asl.JSONata {
		return asl.JSONata
	}
	if sc != nil {
		if q := sc.top.child("QueryLanguage"); q != nil && q.str == asl.JSONata {
			return asl.JSONata
		}
	}
	return asl.JSONPath
}
