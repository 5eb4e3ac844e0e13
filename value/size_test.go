package value

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestStringLen checks the eight-bytes-at-a-time count against the encoder
// with every kind of byte at every position of strings up to 80 bytes, and
// with random bytes.
func TestStringLen(t *testing.T) {
	t.Parallel()
	specials := []string{"\x00", "\x1f", " ", "!", "\"", "#", "[", "\\", "]", "\x7f", "\u00e9", "\u20ac", "\U0001F600", "\xff", "\xc3", "\n"}
	for n := range 80 {
		for i := range n {
			for _, c := range specials {
				s := strings.Repeat("a", i) + c + strings.Repeat("b", n-i)
				if got, want := stringLen(s), len(AppendString(nil, s)); got != want {
					t.Fatalf("stringLen(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(4) > 0 {
				b[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		if got, want := stringLen(string(b)), len(AppendString(nil, string(b))); got != want {
			t.Fatalf("stringLen(%q) = %d, want %d", b, got, want)
		}
	}
}

// counted is how many times a long string or array was counted so far.
func counted() int { return int(bigCounts.Load()) }

// skipIfVerifying skips a test that counts counts: STEPD_VERIFY_LENGTHS=1
// counts again what is looked up.
func skipIfVerifying(t *testing.T) {
	if verifyLens {
		t.Skip("STEPD_VERIFY_LENGTHS=1 counts again what it looks up")
	}
}

// TestBigStringCountedOnce: a long string is counted once, whoever holds
// it; a state's output that is a new object around its input's long string
// (as a Pass with Parameters builds) costs no second walk of it. The test
// fails if EncodedLen rescans the string.
func TestBigStringCountedOnce(t *testing.T) {
	skipIfVerifying(t)
	blob := strings.Repeat("x\"é", 100_000) // 400,000 bytes, 500,002 in JSON
	want := len(AppendString(nil, blob))
	in := ObjectOf("blob", blob, "i", Int(0))
	if n := EncodedLen(in, -1); n != len(String(in)) {
		t.Fatalf("EncodedLen = %d, want %d", n, len(String(in)))
	}
	before := counted()
	for i := range 100 {
		out := ObjectOf("blob", blob, "i", Int(int64(i)))
		if n := EncodedLen(out, -1); n != want+len(`{"blob":,"i":}`)+len(Int(int64(i))) {
			t.Fatalf("state %d: EncodedLen = %d", i, n)
		}
		// Within a limit, and in an array and under another key.
		if n := EncodedLen([]any{out, blob}, 256*1024); n <= 256*1024 {
			t.Fatalf("state %d: EncodedLen within the limit = %d, want more than it", i, n)
		}
	}
	if c := counted() - before; c != 0 {
		t.Fatalf("the string was counted %d more times, want none", c)
	}
	// Other bytes are counted: a part of the string, and a copy of it.
	part := blob[3:]
	if n, want := EncodedLen(part, -1), len(AppendString(nil, part)); n != want {
		t.Fatalf("EncodedLen(part) = %d, want %d", n, want)
	}
	cp := strings.Clone(blob)
	if n := EncodedLen(cp, -1); n != want {
		t.Fatalf("EncodedLen(copy) = %d, want %d", n, want)
	}
	if c := counted() - before; c != 2 {
		t.Fatalf("counted %d strings, want 2 (the part and the copy)", c)
	}
}

// TestBigStringReclaimed: strings of the same length allocated after
// others were reclaimed (perhaps at the same addresses) get their own
// length, not one remembered for bytes that are gone; the table of lengths
// stays bounded.
func TestBigStringReclaimed(t *testing.T) {
	b := make([]byte, bigString)
	for i := range 3 * maxBigLens {
		for j := range b {
			b[j] = 'a'
			if (i+j)%7 == 0 {
				b[j] = '\n' // two bytes in JSON
			}
		}
		s := string(b)
		if n, want := EncodedLen(s, -1), len(AppendString(nil, s)); n != want {
			t.Fatalf("string %d: EncodedLen = %d, want %d", i, n, want)
		}
		if i%1000 == 999 {
			runtime.GC()
		}
	}
	bigLens.Lock()
	n := len(bigLens.m)
	bigLens.Unlock()
	if n > maxBigLens {
		t.Fatalf("%d lengths remembered, want at most %d", n, maxBigLens)
	}
}

// TestBigArrayCountedOnce: a long array is counted once, whoever holds it,
// and only in full; its prefixes, suffixes and the arrays appended to it
// (other lengths or memory) are counted on their own. The test fails if
// EncodedLen walks the array again.
func TestBigArrayCountedOnce(t *testing.T) {
	skipIfVerifying(t)
	arr := make([]any, 30_000) // 168,891 bytes of JSON
	for i := range arr {
		arr[i] = Int(int64(i))
	}
	want := len(String(arr))
	// Counting stopped by a limit remembers nothing.
	before := counted()
	if n := EncodedLen(ObjectOf("arr", arr), 1000); n <= 1000 {
		t.Fatalf("EncodedLen within 1000 = %d, want more", n)
	}
	if n := EncodedLen(arr, -1); n != want {
		t.Fatalf("EncodedLen = %d, want %d", n, want)
	}
	if c := counted() - before; c != 2 {
		t.Fatalf("counted %d times, want 2 (within a limit, then in full)", c)
	}
	before = counted()
	for i := range 100 {
		out := ObjectOf("arr", arr, "i", Int(int64(i)))
		if n := EncodedLen(out, 256*1024); n != want+len(`{"arr":,"i":}`)+len(Int(int64(i))) {
			t.Fatalf("state %d: EncodedLen = %d", i, n)
		}
	}
	if c := counted() - before; c != 0 {
		t.Fatalf("the array was counted %d more times, want none", c)
	}
	for _, other := range [][]any{arr[:len(arr)-1], arr[1:], append(arr[:len(arr):len(arr)], "x"), append(arr[:len(arr)-1:len(arr)-1], []any{nil})} {
		if n, want := EncodedLen(other, -1), len(String(other)); n != want {
			t.Fatalf("EncodedLen of an array of %d = %d, want %d", len(other), n, want)
		}
	}
}

// TestBigArrayReclaimed: arrays of the same length allocated after others
// were reclaimed get their own length.
func TestBigArrayReclaimed(t *testing.T) {
	for i := range maxBigLens / 4 {
		a := make([]any, bigArray)
		for j := range a {
			a[j] = Int(int64((i + j) % 1000))
		}
		if n, want := EncodedLen(a, -1), len(String(a)); n != want {
			t.Fatalf("array %d: EncodedLen = %d, want %d", i, n, want)
		}
		if i%500 == 499 {
			runtime.GC()
		}
	}
}

// TestVerifyLengths: with STEPD_VERIFY_LENGTHS=1, an array or an object
// changed after it was counted is found when its length is next used.
func TestVerifyLengths(t *testing.T) {
	defer func(v bool) { verifyLens = v }(verifyLens)
	verifyLens = true
	a := make([]any, bigArray)
	for j := range a {
		a[j] = Int(1)
	}
	if n, want := EncodedLen(a, -1), len(String(a)); n != want {
		t.Fatalf("EncodedLen = %d, want %d", n, want)
	}
	EncodedLen(a, -1) // looked up, unchanged
	a[0] = "changed"  // what no one may do
	mustPanic(t, "a changed array", func() { EncodedLen(a, -1) })

	inner := ObjectOf("a", Int(1))
	o := ObjectOf("inner", inner)
	EncodedLen(o, -1)
	EncodedLen(o, -1)
	inner.Set("b", true) // changes o, which does not know
	mustPanic(t, "an object whose member changed", func() { EncodedLen(o, -1) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s was not found", what)
		}
	}()
	f()
}

// TestEncodedLenAfterChange: an object's remembered length follows every
// change made to it while it is built (Set of a new and of an existing
// member), and copies (Clone, With) count their own.
func TestEncodedLenAfterChange(t *testing.T) {
	blob := strings.Repeat("y", 3*bigString)
	o := ObjectOf("a", Int(1))
	check := func(what string, v any) {
		t.Helper()
		if n, want := EncodedLen(v, -1), len(String(v)); n != want {
			t.Fatalf("after %s: EncodedLen = %d, want %d", what, n, want)
		}
	}
	check("ObjectOf", o)
	o.Set("blob", blob)
	check("Set of a long string", o)
	o.Set("blob", blob[1:])
	check("Set of a shorter one", o)
	o.Set("a", []any{blob, blob})
	check("Set of an array", o)
	c := o.Clone()
	check("Clone", c)
	c.Set("more", "x")
	check("Set on the clone", c)
	check("Set on the clone (original)", o)
	w := o.With("blob", "short")
	check("With", w)
	check("With (original)", o)
	for i := range 20 { // past the size that indexes members
		o.Set(string(rune('b'+i)), blob)
		check("Set of many", o)
	}
}

// BenchmarkEncodedLenPassOutput is the size check of a Pass state's output
// that picks its input's string: a new object around a string of 16 KiB and
// of 250 KiB. The two cost the same.
func BenchmarkEncodedLenPassOutput(b *testing.B) {
	for _, size := range []int{16 << 10, 250 << 10} {
		blob := strings.Repeat("x", size)
		b.Run(string(Int(int64(size>>10)))+"KiB", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				out := ObjectOf("blob", blob, "i", Int(int64(i)))
				if EncodedLen(out, 256*1024) > 256*1024 {
					b.Fatal("over the limit")
				}
				i++
			}
		})
	}
}
