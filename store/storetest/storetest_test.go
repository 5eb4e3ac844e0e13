package storetest_test

import (
	"sync"
	"testing"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

// kept is a memory store that outlives Close, standing in for a durable
// backend so that RunDurable itself is exercised.
type kept struct{ *memory.Store }

func (kept) Close() error { return nil }

func TestDurableSuite(t *testing.T) {
	var mu sync.Mutex
	dirs := map[string]*memory.Store{}
	storetest.RunDurable(t, func(t *testing.T, dir string) store.Store {
		mu.Lock()
		defer mu.Unlock()
		if dirs[dir] == nil {
			dirs[dir] = memory.New()
		}
		return kept{dirs[dir]}
	})
}
