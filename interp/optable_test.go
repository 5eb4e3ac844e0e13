package interp

import (
	"math/rand/v2"
	"testing"
)

// TestOpTable checks the op table against a map under random adds and
// removes: lookups, removals of absent ids, the count and the id order.
func TestOpTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab opTable
	want := map[int64]*op{}
	id := int64(0)
	for i := 0; i < 20000; i++ {
		switch k := r.IntN(10); {
		case k < 4:
			id++
			o := &op{id: id}
			tab.add(o)
			want[id] = o
		default:
			q := r.Int64N(id+2) + 0
			_, had := want[q]
			if got := tab.remove(q); got != had {
				t.Fatalf("step %d: remove(%d) = %v, want %v", i, q, got, had)
			}
			delete(want, q)
		}
		if tab.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", i, tab.len(), len(want))
		}
		q := r.Int64N(id + 2)
		if got := tab.get(q); got != want[q] {
			t.Fatalf("step %d: get(%d) = %v, want %v", i, q, got, want[q])
		}
	}
	last := int64(-1)
	n := 0
	tab.all(func(o *op) {
		if o.id <= last || want[o.id] != o {
			t.Fatalf("all: op %d out of order or unknown", o.id)
		}
		last = o.id
		n++
	})
	if n != len(want) {
		t.Fatalf("all visited %d ops, want %d", n, len(want))
	}
}
