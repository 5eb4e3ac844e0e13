package notify

import (
	"os"
	"testing"

	"github.com/stepd/stepd/internal/testlog"
)

// TestMain keeps what the code under test logs out of the output unless a
// test fails (internal/testlog).
func TestMain(m *testing.M) { os.Exit(testlog.Run(m)) }
