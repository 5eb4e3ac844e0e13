package storetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FsyncRate measures how many small append+fsync rounds per second the
// disk under a temporary directory of tb does, so that a benchmark of a
// durable store can report its throughput next to the disk's own limit
// measured in the same run.
func FsyncRate(tb testing.TB, n int) float64 {
	tb.Helper()
	f, err := os.Create(filepath.Join(tb.TempDir(), "fsync"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	for range n {
		if _, err := f.Write([]byte("x")); err != nil {
			tb.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			tb.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}
