package runner_test

import (
	"testing"

	"github.com/stepd/stepd/internal/testlog"
)

func TestMain(m *testing.M) { testlog.Run(m) }
