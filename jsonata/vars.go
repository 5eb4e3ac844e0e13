package jsonata

import (
	mrand "math/rand/v2"
	"sync"

	"github.com/stepd/stepd/value"
)

// Vars supplies the variables of an evaluation (Template.EvalWith). The
// adapter asks only for the names the template's expressions can reach
// (each "$name" in their sources), so the cost of an evaluation does not
// grow with the number of variables in scope.
type Vars interface {
	// Var returns the value of the variable name (without the $), and the
	// slot that caches its evaluator form (nil: none, the value is
	// converted for this evaluation only); ok is false when no such
	// variable is bound.
	Var(name string) (v any, slot *Slot, ok bool)
}

// Map is a Vars over a plain map, without slots: each evaluation converts
// the values it uses.
type Map map[string]any

// Var returns m[name].
func (m Map) Var(name string) (any, *Slot, bool) {
	v, ok := m[name]
	return v, nil, ok
}

// Slot caches the evaluator's form of the value of one variable, so that
// evaluations that read the variable while it holds the same value do not
// convert it again. The zero Slot is empty and ready to use; the owner
// keeps one per variable (or per member of $states) and hands it out with
// the variable's value (Vars).
//
// A Slot checks at each use that its form is still current: that it is
// given the very value it converted (the same *value.Object, the same
// array, an equal scalar), and that no object converted since has been
// changed by value.Object.Set (value.Changes). A reassigned variable is
// thus converted afresh even if its owner keeps the slot. Arrays have no
// such check: like every stepd value, an array is never changed once
// shared (package value).
//
// A Slot is not safe for concurrent use; its form is safe to share with
// any number of evaluations, which never change their inputs.
type Slot struct {
	// ByMember, set by the owner before first use, makes the slot keep an
	// object's members each in a slot of its own, for an object rebuilt
	// often around the same members: $states, a new object for each
	// state around the state's input. A new object whose members are
	// those already converted costs no conversion.
	ByMember bool

	set     bool
	src     any
	conv    any
	epoch   uint64                // value.Changes when converted
	origin  map[any]*value.Object // the stepd object of each gnata map in conv
	members map[string]*Slot      // ByMember: by member name
	keys    []string              // ByMember: the members of conv, in order
}

// current reports whether the slot holds the evaluator form of v.
func (s *Slot) current(v any, epoch uint64) bool {
	return s.set && s.epoch == epoch && value.Same(s.src, v)
}

// form returns v's evaluator form, converting v only if the slot does not
// already hold it, and lets c find the stepd objects behind it.
func (s *Slot) form(v any, c *converter, epoch uint64) any {
	if r := c.recent; r != nil && r != s && !s.ByMember && !s.current(v, epoch) && r.current(v, epoch) {
		// v is the object an evaluation returned: take the form it left.
		*s = Slot{set: true, src: r.src, conv: r.conv, origin: r.origin, epoch: r.epoch}
	}
	if !s.current(v, epoch) {
		if o, ok := v.(*value.Object); ok && s.ByMember {
			s.byMember(o, c, epoch)
			return s.conv
		}
		var sc converter
		sc.watch = true
		s.conv = sc.toGnata(v)
		s.src, s.origin, s.epoch, s.set = v, sc.origin, epoch, true
		s.members, s.keys = nil, nil
	} else if s.ByMember {
		for _, m := range s.members {
			c.addOrigins(m.origin)
		}
	}
	c.addOrigins(s.origin)
	return s.conv
}

// byMember converts o member by member, each through its own slot; the
// object's own form is kept when o has the members of the last one.
func (s *Slot) byMember(o *value.Object, c *converter, epoch uint64) {
	o.Watch()
	keys := o.Keys()
	if s.members == nil {
		s.members = make(map[string]*Slot, len(keys))
	}
	same := s.set && s.epoch == epoch && len(keys) == len(s.keys)
	for i, k := range keys {
		_, e := o.At(i)
		m := s.members[k]
		same = same && s.keys[i] == k && m != nil && m.current(e, epoch)
	}
	if !same {
		if len(s.members) > len(keys) {
			for k := range s.members {
				if !o.Has(k) {
					delete(s.members, k)
				}
			}
		}
		data := make(map[string]any, len(keys))
		for i, k := range keys {
			_, e := o.At(i)
			m := s.members[k]
			if m == nil {
				m = &Slot{}
				s.members[k] = m
			}
			data[k] = m.form(e, c, epoch)
		}
		s.keys = keys
		s.conv = newOrderedMap(s.keys[:len(s.keys):len(s.keys)], data)
	} else {
		for _, m := range s.members {
			c.addOrigins(m.origin)
		}
	}
	// The form of the object itself leads back to the newest object.
	if s.origin == nil {
		s.origin = make(map[any]*value.Object, 1)
	}
	clear(s.origin)
	s.origin[s.conv] = o
	s.src, s.epoch, s.set = o, epoch, true
	c.addOrigins(s.origin)
}

// bind fills g with what an evaluation can name: AWS's functions in funcs
// and the variables in names (varNames) that vars binds, each in its
// evaluator form.
func (c *converter) bind(g map[string]any, vars Vars, names, funcs []string, o Options) {
	var src Rand
	for _, k := range funcs {
		f := awsFuncs[k]
		if mk := randomFuncs[k]; mk != nil {
			if src == nil {
				if src = o.Rand; src == nil {
					src = mrand.NewPCG(0, 0)
				}
			}
			f = native(mk(src))
		}
		g[k] = f
	}
	if vars == nil {
		return
	}
	if k, ok := vars.(Keeper); ok {
		c.recent = k.Recent()
	}
	epoch := value.Changes()
	for _, k := range names {
		v, slot, ok := vars.Var(k)
		switch {
		case !ok:
		case slot != nil:
			g[k] = slot.form(v, c, epoch)
		default:
			g[k] = c.toGnata(v)
		}
	}
}

// varNames returns the names that follow a $ in src (the expression
// sources of a template), each once: the variables that the expressions
// can reach, and more (function names, names in string literals). A name
// ends where gnata's lexer ends it. The names of AWS's functions are left
// out: they cannot be shadowed from outside.
func varNames(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		if src[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(src) && !endsVarName(src[j]) {
			j++
		}
		name := src[i+1 : j]
		if _, isFunc := awsFuncs[name]; !isFunc && name != "" && !contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// endsVarName reports whether gnata's lexer ends a name at c (its stop
// characters), or c is the 0 that separates a template's sources.
func endsVarName(c byte) bool {
	switch c {
	case 0, ' ', '\t', '\n', '\r', '\v',
		'.', '[', ']', '{', '}', '(', ')', ',', '@', '#', ';', ':', '?',
		'+', '-', '*', '/', '%', '|', '=', '<', '>', '^', '&', '!', '~':
		return true
	}
	return false
}

// bindings recycles the maps of variables handed to gnata, which copies
// them into its own environment and keeps no reference.
var bindings = sync.Pool{New: func() any { return make(map[string]any, 8) }}
