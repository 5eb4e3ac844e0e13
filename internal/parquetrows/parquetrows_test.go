package parquetrows

import (
	"bytes"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/stepd/stepd/value"
)

type row struct {
	Name  string    `parquet:"name"`
	Age   int64     `parquet:"age"`
	Tags  []string  `parquet:"tags,list"`
	Score *float64  `parquet:"score,optional"`
	Seen  time.Time `parquet:"seen,timestamp(millisecond)"`
	OK    bool      `parquet:"ok"`
}

// File is a Parquet file of rows, as a writer makes it.
func File(t testing.TB, rows ...row) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Each row is an object of its columns in the schema's order, with JSON
// numbers, strings, booleans, lists, null for a missing optional value
// and a timestamp as the number the file holds (milliseconds here).
func TestRows(t *testing.T) {
	score := 1.5
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	data := File(t, row{"ann", 31, []string{"a", "b"}, &score, at, true}, row{"bob", 42, nil, nil, at, false})
	items, err := Rows(data)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"ann","age":31,"tags":["a","b"],"score":1.5,"seen":1767323045000,"ok":true},{"name":"bob","age":42,"tags":[],"score":null,"seen":1767323045000,"ok":false}]`
	if got := value.String(items); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := Rows([]byte("not parquet")); err == nil {
		t.Error("a file that is no Parquet is read")
	}
	if _, err := Rows(data[:len(data)/2]); err == nil {
		t.Error("half a Parquet file is read")
	}
}

// FuzzRows checks that no input panics, and that what is read is JSON.
func FuzzRows(f *testing.F) {
	f.Add(File(f, row{Name: "x", Age: 1}))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := Rows(data)
		if err != nil {
			return
		}
		if _, err := value.ParseString(value.String(items)); err != nil {
			t.Fatalf("rows that are no JSON: %v", err)
		}
	})
}
