package value

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzLocate checks that a syntax error of any text is placed on the
// line and column of its offset.
func FuzzLocate(f *testing.F) {
	f.Add([]byte("{\"a\":\n  tru}"))
	f.Add([]byte("[1,\n2,\n]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse(data)
		if err == nil {
			return
		}
		var fe *FileError
		if !errors.As(Locate("f.json", data, err), &fe) {
			t.Fatalf("Locate(%v) is not a FileError", err)
		}
		var se *SyntaxError
		if !errors.As(fe, &se) || se.Offset < 0 {
			t.Fatalf("the FileError does not wrap the SyntaxError: %v", fe)
		}
		off := min(se.Offset, len(data))
		if want := bytes.Count(data[:off], []byte("\n")) + 1; fe.Line != want {
			t.Fatalf("line %d, want %d (offset %d)", fe.Line, want, se.Offset)
		}
		if want := off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1; fe.Col != want {
			t.Fatalf("column %d, want %d (offset %d)", fe.Col, want, se.Offset)
		}
	})
}
