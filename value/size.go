package value

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
	"weak"
)

// EncodedLen returns the length of v's compact JSON encoding (what Append
// writes) without encoding it; it stops counting once the length exceeds
// limit (a negative limit counts everything), so a caller checking a size
// limit walks no more of a large value than it must.
//
// What was counted once in full is not counted again: an object remembers
// its length (see Object), and the length of a long string or array is
// remembered for as long as it lives (see bigLens). A state's output that shares
// members with its input — a Pass with Parameters that picks a 250 KiB
// member, a ResultPath that adds a result — costs what is new in it, not
// the size of the whole payload.
func EncodedLen(v any, limit int) int {
	return encodedLen(v, 0, limit)
}

func encodedLen(v any, n, limit int) int {
	if limit >= 0 && n > limit {
		return n
	}
	switch x := v.(type) {
	case nil:
		return n + 4
	case bool:
		if x {
			return n + 4
		}
		return n + 5
	case Number:
		return n + len(x)
	case string:
		if len(x) >= bigString {
			return n + bigLen(x)
		}
		return n + stringLen(x)
	case []any:
		var k bigKey
		if len(x) >= bigArray {
			// A long array is counted once in full, like an object.
			k = arrayKey(x)
			if size, ok := lookup(k, x); ok {
				return n + size
			}
			bigCounts.Add(1)
		}
		start := n
		n += 2
		if len(x) > 1 {
			n += len(x) - 1
		}
		for _, e := range x {
			if n = encodedLen(e, n, limit); limit >= 0 && n > limit {
				return n
			}
		}
		if len(x) >= bigArray {
			remember(k, n-start)
		}
		return n
	case *Object:
		// An object remembers its length once counted in full: a state's
		// output that shares members with its input counts only what is
		// new.
		if size := x.size.Load() &^ watched; size > 0 {
			if verifyLens {
				verify(x, int(size), 0)
			}
			return n + int(size)
		}
		start := n
		n += 2
		if len(x.keys) > 1 {
			n += len(x.keys) - 1
		}
		for i, k := range x.keys {
			n += stringLen(k) + 1
			if n = encodedLen(x.vals[i], n, limit); limit >= 0 && n > limit {
				return n
			}
		}
		x.size.Or(int64(n - start)) // keeping the watched bit
		return n
	}
	return n + len(Append(nil, v))
}

// bigString is the length from which EncodedLen remembers a string's
// encoded length: a shorter string costs about as much to count as to look
// up.
const bigString = 1 << 10

// bigArray is the number of elements from which EncodedLen remembers an
// array's encoded length.
const bigArray = 128

// maxBigLens bounds the table of remembered lengths; when it is full, the
// entries of values that are gone are dropped (and all of them if half or
// more are still alive, so that dropping costs O(1) per entry added).
const maxBigLens = 1 << 14

// bigKey names a long string or array by its memory: a weak pointer to
// its first byte or element, its length, and which of the two it is. A
// weak pointer keeps nothing alive, and it never equals one made for other
// memory allocated later at the same address, so a key cannot match a
// value other than the one it was made for.
type bigKey struct {
	data  weak.Pointer[byte]
	len   int
	array bool
}

func stringKey(s string) bigKey {
	return bigKey{data: weak.Make(unsafe.StringData(s)), len: len(s)}
}

func arrayKey(a []any) bigKey {
	return bigKey{data: weak.Make((*byte)(unsafe.Pointer(&a[0]))), len: len(a), array: true}
}

// bigLens holds the encoded lengths of the long strings and arrays
// EncodedLen counted in full. Go strings are immutable, so the same bytes
// have the same length for as long as they live. (A string made by
// unsafe.String over bytes that change later would break that; EncodedLen
// is given none: AppendText's is only appended.) Arrays are immutable by
// this package's rule: an array is not changed once it may have been
// counted (the elements of a slice are not set, and a slice is not
// appended to within another's length). Appending past a slice's length
// or slicing it makes a value of another key.
var bigLens struct {
	sync.Mutex
	m map[bigKey]int
}

// bigCounts is how many times a long string or array was counted, rather
// than looked up (for tests).
var bigCounts atomic.Int64

// verifyLens, set by the environment variable STEPD_VERIFY_LENGTHS=1,
// makes every length looked up in bigLens or remembered by an object be
// counted again and compared: a test suite run so finds a value changed
// after it was counted (EncodedLen panics).
var verifyLens = os.Getenv("STEPD_VERIFY_LENGTHS") == "1"

// lookup returns the remembered length of k, whose value is v.
func lookup(k bigKey, v any) (int, bool) {
	bigLens.Lock()
	n, ok := bigLens.m[k]
	bigLens.Unlock()
	if ok && verifyLens {
		verify(v, n, k.len)
	}
	return n, ok
}

// verify panics unless n is the length of v, a string, array or object of
// size elements, counted afresh (its members' remembered lengths are
// verified when they are looked up in turn).
func verify(v any, n, size int) {
	fresh := 0
	switch x := v.(type) {
	case string:
		fresh = stringLen(x)
	case []any:
		fresh = 2 + max(len(x)-1, 0)
		for _, e := range x {
			fresh = encodedLen(e, fresh, -1)
		}
	case *Object:
		size = x.Len()
		fresh = 2 + max(len(x.keys)-1, 0)
		for i, k := range x.keys {
			fresh = encodedLen(x.vals[i], fresh+stringLen(k)+1, -1)
		}
	}
	if fresh != n {
		panic(fmt.Sprintf("value: a %s of %d remembered as %d bytes of JSON has %d: changed after it was counted", KindOf(v), size, n, fresh))
	}
}

// remember records n as the encoded length of k.
func remember(k bigKey, n int) {
	bigLens.Lock()
	defer bigLens.Unlock()
	if bigLens.m == nil {
		bigLens.m = make(map[bigKey]int)
	}
	if len(bigLens.m) >= maxBigLens {
		for k := range bigLens.m {
			if k.data.Value() == nil {
				delete(bigLens.m, k)
			}
		}
		if len(bigLens.m) >= maxBigLens/2 {
			clear(bigLens.m)
		}
	}
	bigLens.m[k] = n
}

// bigLen returns stringLen(s) for a long string, counting s only the first
// time it is asked (again only if the table was cleared since).
func bigLen(s string) int {
	k := stringKey(s)
	if n, ok := lookup(k, s); ok {
		return n
	}
	n := stringLen(s)
	remember(k, n)
	return n
}

// Bytes with the top bit set, and with the low bit set, in each of a
// word's 8 bytes.
const (
	highBits = 0x8080808080808080
	lowBits  = 0x0101010101010101
)

// stringLen is the length of AppendString's literal for s.
func stringLen(s string) int {
	if len(s) >= 32 {
		return longStringLen(s)
	}
	n := 2
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			n++
			i++
			continue
		}
		n, i = charLen(s, n, i)
	}
	return n
}

// longStringLen is stringLen for a string of 32 bytes or more: eight bytes
// at a time while they are written as they are (no control character,
// quote, backslash, or byte of a multi-byte or invalid UTF-8 sequence).
func longStringLen(s string) int {
	if len(s) >= bigString {
		bigCounts.Add(1)
	}
	n := 2
	for i := 0; i < len(s); {
		// A byte below 0x20 sets its top bit in below, a '"' in quote, a
		// '\\' in slash (the classic test for a zero byte, applied to w
		// xor the byte); a byte from 0x80 has it set in w.
		for ; i+8 <= len(s); i += 8 {
			t := s[i : i+8]
			w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			q, b := w^'"'*lowBits, w^'\\'*lowBits
			below := (w - 0x20*lowBits) &^ w
			quote := (q - lowBits) &^ q
			slash := (b - lowBits) &^ b
			if (w|below|quote|slash)&highBits != 0 {
				break
			}
			n += 8
		}
		if i < len(s) {
			n, i = charLen(s, n, i)
		}
	}
	return n
}

// charLen adds to n the length in AppendString's literal of the character
// of s at i (one that is not plain ASCII, in the callers' loops), and
// returns the new length and the index after it.
func charLen(s string, n, i int) (int, int) {
	c := s[i]
	if c >= 0x20 && c != '"' && c != '\\' {
		if c < utf8.RuneSelf {
			return n + 1, i + 1
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return n + len("\ufffd"), i + 1
		}
		return n + size, i + size
	}
	switch c {
	case '"', '\\', '\n', '\r', '\t', '\b', '\f':
		return n + 2, i + 1
	}
	return n + 6, i + 1
}

// Same reports whether a and b are the same value: the same object or
// array (not equal copies: an array is the same when it starts at the same
// element and has the same length), or equal scalars. A value kept beside
// a form derived from it (a length, a converted copy) is still described
// by that form while Same holds, since values are not changed once shared.
func Same(a, b any) bool {
	switch x := a.(type) {
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case Number:
		y, ok := b.(Number)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}
