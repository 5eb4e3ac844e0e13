package value

import "testing"

func TestSame(t *testing.T) {
	o := ObjectOf("a", Int(1))
	arr := []any{Int(1), Int(2)}
	cases := []struct {
		a, b any
		want bool
	}{
		{o, o, true},
		{o, o.Clone(), false},
		{arr, arr, true},
		{arr, []any{Int(1), Int(2)}, false},
		{arr, arr[:1], false},
		{[]any{}, []any{}, true},
		{Int(3), Int(3), true},
		{Int(3), "3", false},
		{"x", "x", true},
		{true, false, false},
		{nil, nil, true},
		{nil, false, false},
	}
	for i, c := range cases {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("case %d: Same(%v, %v) = %v, want %v", i, c.a, c.b, got, c.want)
		}
	}
}
