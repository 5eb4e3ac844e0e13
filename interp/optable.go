package interp

import "sort"

// opTable holds an execution's outstanding ops by id. Ids grow, so the ops
// are kept in id order in a slice: adding one appends, and removing one
// clears its entry and trims cleared entries from both ends (an op
// usually ends before the next one starts, or soon after), which costs
// less than a map's insert and delete per task or timer.
type opTable struct {
	ops []*op // in id order; nil where an op was removed
	n   int   // ops that are not nil
}

// add adds o, whose id is greater than every id in the table.
func (t *opTable) add(o *op) {
	t.ops = append(t.ops, o)
	t.n++
}

// index returns the position of the op with id, or -1.
func (t *opTable) index(id int64) int {
	ops := t.ops
	// The op asked for is most often the last or the first one.
	if k := len(ops) - 1; k >= 0 && ops[k] != nil && ops[k].id == id {
		return k
	}
	if len(ops) > 0 && ops[0] != nil && ops[0].id == id {
		return 0
	}
	i := sort.Search(len(ops), func(i int) bool {
		// Cleared entries sit between live ones: look for the next live
		// one to compare with.
		for j := i; j < len(ops); j++ {
			if ops[j] != nil {
				return ops[j].id >= id
			}
		}
		return true
	})
	for ; i < len(ops); i++ {
		if ops[i] != nil {
			if ops[i].id == id {
				return i
			}
			break
		}
	}
	return -1
}

// get returns the op with id, or nil.
func (t *opTable) get(id int64) *op {
	if i := t.index(id); i >= 0 {
		return t.ops[i]
	}
	return nil
}

// remove removes the op with id and reports whether it was there.
func (t *opTable) remove(id int64) bool {
	i := t.index(id)
	if i < 0 {
		return false
	}
	t.ops[i] = nil
	t.n--
	t.trim()
	return true
}

// trim drops cleared entries from both ends, and compacts the table when
// most of it is cleared.
func (t *opTable) trim() {
	ops := t.ops
	for len(ops) > 0 && ops[len(ops)-1] == nil {
		ops = ops[:len(ops)-1]
	}
	i := 0
	for i < len(ops) && ops[i] == nil {
		i++
	}
	if i == len(ops) {
		t.ops = t.ops[:0] // empty: reuse the array from its start
		return
	}
	ops = ops[i:]
	if len(ops) > 16 && t.n < len(ops)/4 {
		k := 0
		for _, o := range ops {
			if o != nil {
				ops[k] = o
				k++
			}
		}
		clear(ops[k:])
		ops = ops[:k]
	}
	t.ops = ops
}

// len returns the number of ops.
func (t *opTable) len() int { return t.n }

// all calls f for every op, in id order.
func (t *opTable) all(f func(*op)) {
	for _, o := range t.ops {
		if o != nil {
			f(o)
		}
	}
}
