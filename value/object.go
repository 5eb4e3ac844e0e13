package value

import "sync/atomic"

// Object is a JSON object whose members keep their insertion order.
// Keys are unique: setting an existing key replaces its value in place.
// Treat an Object as immutable once it has been shared: EncodedLen
// remembers the length it counted (Set on the object forgets it, but not a
// change to a member object), and other packages may keep forms derived
// from it (Watch).
type Object struct {
	keys []string
	vals []any
	idx  map[string]int // built lazily for larger objects
	// size is the length of the object's JSON text once EncodedLen has
	// counted it (0: not yet), or'ed with watched once Watch has been
	// called; Set forgets both. Clone and With make objects that count
	// their own.
	size atomic.Int64
}

// watched is the bit of Object.size that Watch sets.
const watched = 1 << 62

// changes counts the calls of Set on watched objects (Changes).
var changes atomic.Uint64

// Watch marks the object as one from which the caller derived something
// that it keeps (the JSONata adapter keeps the evaluator's form of a
// variable): a later Set on the object, which should not happen to a
// shared object, adds one to Changes, so that the caller can tell its
// derived forms may be stale. A Set clears the mark.
func (o *Object) Watch() { o.size.Or(watched) }

// Changes returns how many times Set has changed a watched object since
// the program started. Derived forms recorded at one count are current
// while the count stays the same.
func Changes() uint64 { return changes.Load() }

const indexThreshold = 12

// NewObject returns an empty object with room for n members. A small
// object is one allocation: its members' room comes with it.
func NewObject(n int) *Object {
	switch {
	case n <= 0:
		return &Object{}
	case n <= 2:
		b := new(object2)
		b.o.keys, b.o.vals = b.keys[:0], b.vals[:0]
		return &b.o
	case n <= 4:
		b := new(object4)
		b.o.keys, b.o.vals = b.keys[:0], b.vals[:0]
		return &b.o
	case n <= 6:
		b := new(object6)
		b.o.keys, b.o.vals = b.keys[:0], b.vals[:0]
		return &b.o
	}
	return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

// Small objects with their members' room, allocated at once.
type (
	object2 struct {
		o    Object
		keys [2]string
		vals [2]any
	}
	object4 struct {
		o    Object
		keys [4]string
		vals [4]any
	}
	object6 struct {
		o    Object
		keys [6]string
		vals [6]any
	}
)

// ObjectOf builds an object from alternating keys and values:
// ObjectOf("a", Int(1), "b", "x").
func ObjectOf(kv ...any) *Object {
	o := NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Len returns the number of members.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string { return o.keys }

// At returns the i-th member.
func (o *Object) At(i int) (string, any) { return o.keys[i], o.vals[i] }

func (o *Object) find(k string) int {
	if o == nil {
		return -1
	}
	if o.idx != nil {
		if i, ok := o.idx[k]; ok {
			return i
		}
		return -1
	}
	for i, kk := range o.keys {
		if kk == k {
			return i
		}
	}
	return -1
}

// Get returns the member named k.
func (o *Object) Get(k string) (any, bool) {
	i := o.find(k)
	if i < 0 {
		return nil, false
	}
	return o.vals[i], true
}

// Has reports whether the object has a member named k.
func (o *Object) Has(k string) bool { return o.find(k) >= 0 }

// Set adds or replaces the member k. Only call it on an object you are
// building.
func (o *Object) Set(k string, v any) {
	if o.size.Swap(0)&watched != 0 {
		changes.Add(1)
	}
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	if o.idx != nil {
		o.idx[k] = len(o.keys) - 1
	} else if len(o.keys) > indexThreshold {
		o.idx = make(map[string]int, len(o.keys)*2)
		for i, kk := range o.keys {
			o.idx[kk] = i
		}
	}
}

// Clone returns a shallow copy that may be modified.
func (o *Object) Clone() *Object {
	c := NewObject(len(o.keys) + 1)
	c.keys = append(c.keys, o.keys...)
	c.vals = append(c.vals, o.vals...)
	if o.idx != nil {
		c.idx = make(map[string]int, len(o.idx)+1)
		for k, v := range o.idx {
			c.idx[k] = v
		}
	}
	return c
}

// With returns a copy of o with member k set to v; o is unchanged.
func (o *Object) With(k string, v any) *Object {
	if o != nil && o.idx == nil {
		// A small object: one search, and room for exactly the members of
		// the copy (replacing a member needs none more).
		i := o.find(k)
		n := len(o.keys)
		if i < 0 {
			n++
		}
		if n <= indexThreshold {
			c := NewObject(n)
			c.keys = append(c.keys, o.keys...)
			c.vals = append(c.vals, o.vals...)
			if i >= 0 {
				c.vals[i] = v
			} else {
				c.keys = append(c.keys, k)
				c.vals = append(c.vals, v)
			}
			return c
		}
	}
	c := o.Clone()
	c.Set(k, v)
	return c
}

// All iterates over the members in order.
func (o *Object) All(yield func(string, any) bool) {
	if o == nil {
		return
	}
	for i, k := range o.keys {
		if !yield(k, o.vals[i]) {
			return
		}
	}
}
