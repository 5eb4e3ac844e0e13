// Package testlog keeps what code under test logs through slog's default
// logger (and the log package, which writes through it) out of go test's
// output: a package's TestMain runs its tests through Run, which keeps
// those lines in memory and prints them after the tests' own output only
// when a test failed, so that a failure is not buried under the logs of
// the servers that passing tests ran. It is for tests only, and imports
// nothing of the project's; no package but a test may import it.
package testlog

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
)

// limit is how much of the log Run keeps: the latest lines, up to 4 MiB.
const limit = 4 << 20

// Run runs m's tests with slog's default logger writing into memory, and
// returns their exit code; when it is not 0, it prints the kept lines to
// standard error first.
func Run(m *testing.M) int {
	var t tail
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&t, nil)))
	code := m.Run()
	slog.SetDefault(prev)
	if code != 0 {
		t.mu.Lock()
		defer t.mu.Unlock()
		if len(t.buf) > 0 {
			kept := ""
			if t.cut {
				kept = " (the latest 4 MiB)"
			}
			fmt.Fprintf(os.Stderr, "\n--- testlog: what the code under test logged while the tests ran%s ---\n%s--- testlog: end ---\n", kept, t.buf)
		}
	}
	return code
}

// tail is a writer that keeps the latest bytes written, up to limit.
type tail struct {
	mu  sync.Mutex
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}
