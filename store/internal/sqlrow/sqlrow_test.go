package sqlrow

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// fakeRows are rows of values, each row scanned into pointers of the same
// types.
type fakeRows struct {
	rows [][]any
	at   int
	err  error
}

func (f *fakeRows) Next() bool { f.at++; return f.at <= len(f.rows) }
func (f *fakeRows) Err() error { return f.err }
func (f *fakeRows) Scan(dest ...any) error {
	row := f.rows[f.at-1]
	if len(dest) != len(row) {
		return fmt.Errorf("%d destinations for %d columns", len(dest), len(row))
	}
	for i, v := range row {
		switch d := dest[i].(type) {
		case *int64:
			*d = v.(int64)
		case *[]byte:
			*d = v.([]byte)
		default:
			return fmt.Errorf("column %d: %T", i, d)
		}
	}
	return nil
}

func packed(ids ...int64) []byte {
	var evs []store.Event
	for _, id := range ids {
		evs = append(evs, store.Event{ID: id, Type: "T", JSON: []byte("{}")})
	}
	return codec.AppendEvents(nil, evs)
}

func ids(evs []store.Event) []int64 {
	var out []int64
	for _, ev := range evs {
		out = append(out, ev.ID)
	}
	return out
}

func TestEvents(t *testing.T) {
	steps := [][]int64{{1}, {2, 3}, {}, {4, 5, 6}}
	rowsOf := func(reverse bool) *fakeRows {
		f := &fakeRows{}
		for _, s := range steps {
			f.rows = append(f.rows, []any{packed(s...)})
		}
		if reverse {
			slices.Reverse(f.rows)
		}
		return f
	}
	for _, c := range []struct {
		after   int64
		limit   int
		reverse bool
		want    []int64
	}{
		{0, 100, false, []int64{1, 2, 3, 4, 5, 6}},
		{2, 2, false, []int64{3, 4}},
		{0, 4, true, []int64{6, 5, 4, 3}},
		{4, 100, true, []int64{3, 2, 1}},
	} {
		got, err := Events(rowsOf(c.reverse), c.after, c.limit, c.reverse)
		if err != nil || !slices.Equal(ids(got), c.want) {
			t.Errorf("Events(after %d, limit %d, reverse %v) = %v, %v; want %v", c.after, c.limit, c.reverse, ids(got), err, c.want)
		}
	}
	if _, err := Events(&fakeRows{rows: [][]any{{[]byte{1}}}}, 0, 10, false); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("a corrupt row: %v", err)
	}
}

func TestChildEvents(t *testing.T) {
	got, err := ChildEvents(&fakeRows{rows: [][]any{{packed(1, 2)}, {packed(2, 3)}, {packed(4)}}})
	if err != nil || !slices.Equal(ids(got), []int64{1, 2, 3, 4}) {
		t.Errorf("ChildEvents of overlapping rows = %v, %v", ids(got), err)
	}
}

func TestStepCursor(t *testing.T) {
	// exec, seq, at, input, first, last, wake
	c := NewStepCursor(&fakeRows{rows: [][]any{
		{int64(1), int64(0), int64(10), []byte(nil), int64(1), int64(2), int64(0)},
		{int64(3), int64(0), int64(10), []byte("in"), int64(1), int64(1), int64(0)},
		{int64(3), int64(1), int64(20), []byte(nil), int64(2), int64(1), int64(99)},
	}})
	if got, err := c.StepsOf(2, "b"); err != nil || len(got) != 0 {
		t.Fatalf("steps of an execution without any: %v, %v", got, err)
	}
	got, err := c.StepsOf(3, "c")
	if err != nil || len(got) != 2 {
		t.Fatalf("steps of c: %v, %v", got, err)
	}
	if got[0].ExecutionARN != "c" || string(got[0].Input) != "in" || !slices.Equal(ids(got[0].Events), []int64{1}) ||
		got[1].Seq != 1 || len(got[1].Events) != 0 || got[1].Wake != codec.FromNanos(99) {
		t.Errorf("steps of c: %+v %+v", got[0], got[1])
	}
	if err := c.Err(); err != nil {
		t.Error(err)
	}
}

func TestSearchSteps(t *testing.T) {
	last := []int64{2, 2, 5, 9} // the last event id of steps 0..3
	for after, want := range map[int64]int64{0: 0, 2: 2, 4: 2, 9: 4} {
		got, err := SearchSteps(3, func(seq int64) (int64, int64, error) { return 0, last[seq], nil }, func(_, l int64) bool { return l > after })
		if err != nil || got != want {
			t.Errorf("the first step after event %d: %d, %v; want %d", after, got, err, want)
		}
	}
}

func TestPage(t *testing.T) {
	tok := func(last int) string { return fmt.Sprint(last) }
	if list, next := Page([]int{1, 2, 3}, 2, tok); !slices.Equal(list, []int{1, 2}) || next != "2" {
		t.Errorf("a page with more: %v %q", list, next)
	}
	if list, next := Page([]int{1, 2}, 2, tok); len(list) != 2 || next != "" {
		t.Errorf("the last page: %v %q", list, next)
	}
}
