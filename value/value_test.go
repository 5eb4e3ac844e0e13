package value

import (
	"strconv"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{}`, `{}`},
		{` { "b" : 1 , "a" : [ true , false , null ] } `, `{"b":1,"a":[true,false,null]}`},
		{`12345678901234567890`, `12345678901234567890`},
		{`1.50`, `1.50`},
		{`-0.5e+10`, `-0.5e+10`},
		{`"a\u00e9\n\"/\\"`, `"aé\n\"/\\"`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\u0001"`, `"\u0001"`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`[[],{}]`, `[[],{}]`},
	}
	for _, tt := range tests {
		v, err := ParseString(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := String(v); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `1e`, `"abc`, `tru`, `{"a":1}x`, "\"a\x01\"", `"\x"`, `{1:2}`, `-`, `[1 2]`} {
		if v, err := ParseString(in); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, v)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-2.5, "-2.5"}, {0.30000000000000004, "0.30000000000000004"}, {1e21, "1e+21"},
		{123456789012, "123456789012"}, {1e-7, "1e-7"}, {0.000001, "0.000001"}, {1.5e300, "1.5e+300"},
	}
	for _, tt := range tests {
		if got := formatFloat(tt.f); got != tt.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
	// Integers are written as integers, whichever way formatFloat takes.
	for _, f := range []float64{-1, 7, 1e15 - 1, 1e15, -1e15, 1e15 + 1, 1 << 53, 1<<53 + 2, 1e20, 123456789012345678} {
		if got, want := formatFloat(f), strconv.FormatFloat(f, 'f', -1, 64); got != want {
			t.Errorf("formatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestObjectOrderAndIndex(t *testing.T) {
	t.Parallel()
	o := NewObject(0)
	for i := 0; i < 30; i++ {
		o.Set(string(rune('z'-i)), Int(int64(i)))
	}
	o.Set("y", "replaced")
	if k, v := o.At(1); k != "y" || v != "replaced" {
		t.Fatalf("At(1) = %s %v", k, v)
	}
	if k, _ := o.At(0); k != "z" || o.Len() != 30 {
		t.Fatalf("At(0) = %s, len %d", k, o.Len())
	}
	if v, ok := o.Get("x"); !ok || v != Int(2) {
		t.Fatalf("Get(x) = %v %v", v, ok)
	}
	c := o.With("new", true)
	if o.Has("new") || !c.Has("new") {
		t.Fatal("With changed the original")
	}
}

// TestWithSmall checks With on objects without an index, up to the size
// where the copy gets one: a member replaced in place, one added at the
// end, the original unchanged, and lookups in the copy.
func TestWithSmall(t *testing.T) {
	t.Parallel()
	for n := 0; n <= indexThreshold+1; n++ {
		o := NewObject(n)
		for i := range n {
			o.Set(string(rune('a'+i)), Int(int64(i)))
		}
		want := String(o)
		if n > 0 {
			c := o.With("a", "x")
			if c.Len() != n || String(o) != want {
				t.Fatalf("n=%d: replacing: len %d, original %s", n, c.Len(), String(o))
			}
			if k, v := c.At(0); k != "a" || v != "x" {
				t.Fatalf("n=%d: replaced member is %s %v", n, k, v)
			}
		}
		c := o.With("new", true)
		if c.Len() != n+1 || String(o) != want || o.Has("new") {
			t.Fatalf("n=%d: adding: len %d, original %s", n, c.Len(), String(o))
		}
		if k, v := c.At(n); k != "new" || v != true {
			t.Fatalf("n=%d: added member is %s %v", n, k, v)
		}
		for i := range n {
			if v, ok := c.Get(string(rune('a' + i))); !ok || v != Int(int64(i)) {
				t.Fatalf("n=%d: Get(%c) = %v %v", n, 'a'+i, v, ok)
			}
		}
		if v, ok := c.Get("new"); !ok || v != true {
			t.Fatalf("n=%d: Get(new) = %v %v", n, v, ok)
		}
		c.Set("later", 1) // the copy grows past the threshold and indexes itself
		if v, ok := c.Get("later"); !ok || v != 1 {
			t.Fatalf("n=%d: Get(later) = %v %v", n, v, ok)
		}
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	a, _ := ParseString(`{"a":[1,2.0,{"b":null}],"c":"x"}`)
	b, _ := ParseString(`{"c":"x","a":[1.0,2,{"b":null}]}`)
	c, _ := ParseString(`{"c":"x","a":[1.0,2,{"b":false}]}`)
	if !Equal(a, b) || Equal(a, c) {
		t.Fatal("Equal wrong")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c"}]}`, `"\u00e9"`, `-1.5e3`, `[true,false,null]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			return
		}
		text := String(v)
		w, err := ParseString(text)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", text, err)
		}
		if String(w) != text {
			t.Fatalf("not stable: %q vs %q", String(w), text)
		}
		if n := EncodedLen(v, -1); n != len(text) {
			t.Fatalf("EncodedLen = %d, encoding has %d bytes: %s", n, len(text), text)
		}
		if got, want := string(AppendText(nil, v)), string(AppendString(nil, text)); got != want {
			t.Fatalf("AppendText = %s, want %s", got, want)
		}
	})
}

func TestEncodedLen(t *testing.T) {
	big := make([]any, 1000)
	for i := range big {
		big[i] = "0123456789"
	}
	for _, v := range []any{
		nil, true, false, Number("-1.5e3"), "", "a\"b\\c\n\r\t\b\f\x01\x1f", "\u00e9\u20ac\U0001F600", "bad \xff\xfe utf-8",
		[]any{}, []any{nil}, []any{1, int64(2), 2.5, "x"}, NewObject(0), ObjectOf("a", nil, "\"k", []any{ObjectOf("b", false)}),
		big,
	} {
		text := String(v)
		if n := EncodedLen(v, -1); n != len(text) {
			t.Errorf("EncodedLen(%s) = %d, want %d", text, n, len(text))
		}
		if n := EncodedLen(v, len(text)); n != len(text) {
			t.Errorf("EncodedLen(%s, its length) = %d, want %d", text, n, len(text))
		}
		if n := EncodedLen(v, len(text)-1); len(text) > 0 && n <= len(text)-1 {
			t.Errorf("EncodedLen(%s, one less) = %d, want more than the limit", text, n)
		}
		if got, want := string(AppendText([]byte("x"), v)), "x"+string(AppendString(nil, text)); got != want {
			t.Errorf("AppendText = %s, want %s", got, want)
		}
	}
}

// TestEncodedLenRemembered: an object remembers its counted length, and
// forgets it when it is changed (while it is being built).
func TestEncodedLenRemembered(t *testing.T) {
	inner := ObjectOf("a", "x")
	o := ObjectOf("in", inner)
	for _, change := range []func(){
		func() {},
		func() { o.Set("b", []any{"yy", nil}) },
		func() { o.Set("c", Number("1.5")) },
		func() { o.Set("in", "replaced") },
		func() { inner.Set("b", true) }, // no longer in o
	} {
		change()
		for _, v := range []any{o, inner} {
			if n, want := EncodedLen(v, -1), len(String(v)); n != want {
				t.Fatalf("EncodedLen(%s) = %d, want %d", String(v), n, want)
			}
		}
	}
}

// TestSmallObjectOneAllocation: a small object comes with room for its
// members, in one allocation, also when cloned; it grows past that room.
func TestSmallObjectOneAllocation(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for n := 1; n <= 6; n++ {
		allocs := testing.AllocsPerRun(100, func() {
			o := NewObject(n)
			for _, k := range keys[:n] {
				o.Set(k, true)
			}
		})
		if allocs != 1 {
			t.Errorf("an object of %d members: %v allocations, want 1", n, allocs)
		}
	}
	o := ObjectOf("a", true, "b", false, "c", nil)
	if allocs := testing.AllocsPerRun(100, func() { o.Clone().Set("d", true) }); allocs != 1 {
		t.Errorf("Clone of 3 members and a fourth: %v allocations, want 1", allocs)
	}
	g := NewObject(1)
	for i := range 20 {
		g.Set(string(rune('a'+i)), Int(int64(i)))
	}
	if String(g) != `{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9,"k":10,"l":11,"m":12,"n":13,"o":14,"p":15,"q":16,"r":17,"s":18,"t":19}` {
		t.Errorf("grown object %s", String(g))
	}
}

func BenchmarkParse(b *testing.B) {
	data := []byte(`{"store":{"book":[{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95},{"category":"fiction","author":"Evelyn Waugh","title":"Sword of Honour","price":12.99}],"bicycle":{"color":"red","price":19.95}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWatch: Set on a watched object counts a change, once (Set clears
// the mark); Set on an unwatched one does not; EncodedLen keeps working
// on watched objects and keeps their mark.
func TestWatch(t *testing.T) {
	o := ObjectOf("a", Int(1))
	before := Changes()
	o.Set("a", Int(2))
	if Changes() != before {
		t.Fatal("Set on an unwatched object counted a change")
	}
	o.Watch()
	if n := EncodedLen(o, -1); n != len(`{"a":2}`) {
		t.Fatalf("EncodedLen of a watched object = %d", n)
	}
	if n := EncodedLen(o, -1); n != len(`{"a":2}`) {
		t.Fatalf("EncodedLen remembered = %d", n)
	}
	o.Set("b", Int(3))
	if Changes() != before+1 {
		t.Fatalf("Set on a watched object: Changes went from %d to %d", before, Changes())
	}
	if n := EncodedLen(o, -1); n != len(`{"a":2,"b":3}`) {
		t.Fatalf("EncodedLen after Set = %d", n)
	}
	o.Set("b", Int(4))
	if Changes() != before+1 {
		t.Fatal("Set counted again on an object no longer watched")
	}
}

func TestPhrase(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{
		{nil, "null"}, {true, "a boolean"}, {Int(1), "a number"}, {"s", "a string"},
		{[]any{}, "an array"}, {NewObject(0), "an object"}, {3, "a int"},
	} {
		if got := Phrase(tt.v); got != tt.want {
			t.Errorf("Phrase(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
