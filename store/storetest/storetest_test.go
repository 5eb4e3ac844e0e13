package storetest_test

import (
	"testing"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}
