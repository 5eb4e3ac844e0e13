package testlog

import (
	"bytes"
	"testing"
)

// The tail keeps the latest bytes written, up to the limit, and says when
// it dropped older ones.
func TestTailKeepsTheLatest(t *testing.T) {
	var tl tail
	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	for range limit / len(line) {
		if _, err := tl.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if tl.cut || len(tl.buf) != limit {
		t.Fatalf("at the limit: cut=%v, %d bytes kept, want %d", tl.cut, len(tl.buf), limit)
	}
	if _, err := tl.Write([]byte("last\n")); err != nil {
		t.Fatal(err)
	}
	if !tl.cut || len(tl.buf) != limit || !bytes.HasSuffix(tl.buf, []byte("last\n")) {
		t.Fatalf("past the limit: cut=%v, %d bytes kept, ends %q", tl.cut, len(tl.buf), tl.buf[len(tl.buf)-8:])
	}
}
