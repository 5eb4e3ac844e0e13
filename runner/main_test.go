package runner_test

import (
	"os"
	"testing"

	"github.com/stepd/stepd/internal/testlog"
)

func TestMain(m *testing.M) { os.Exit(testlog.Run(m)) }
