package service

import (
	"sync"
	"time"

	"github.com/stepd/stepd/store"
)

// smTTL is how long a state machine read for a start serves later starts
// without reading the store again. A write through this service drops
// its entry at once; a write through another node of a shared store is
// seen by this node's starts within smTTL, as AWS documents for
// UpdateStateMachine ("executions started shortly after … might use the
// previous definition"). Every other operation reads the store.
const smTTL = time.Second

// smCacheMax is the most state machines the cache keeps; beyond it the
// cache starts over.
const smCacheMax = 10000

// smCache keeps the state machines that StartExecution and
// StartSyncExecution resolved lately, so that a start costs no store read
// (on PostgreSQL, a round trip per start: StartSyncExecution made two).
// The entries are shared: callers must not change them.
type smCache struct {
	mu  sync.Mutex
	m   map[string]smEntry
	gen uint64 // bumped by forget, so that a read begun before a write does not cache what it read
}

type smEntry struct {
	sm *store.StateMachine
	at time.Time
}

// get returns the cached state machine of arn if it was read within
// smTTL of now, and the generation to pass to put.
func (c *smCache) get(arn string, now time.Time) (*store.StateMachine, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[arn]
	if ok && now.Sub(e.at) < smTTL && !now.Before(e.at) {
		return e.sm, c.gen
	}
	return nil, c.gen
}

// put caches sm, read at now, unless a write of a state machine was
// forgotten since gen.
func (c *smCache) put(sm *store.StateMachine, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= smCacheMax {
		c.m = map[string]smEntry{}
	}
	c.m[sm.ARN] = smEntry{sm: sm, at: now}
}

// forget drops the state machine of arn after a write of it.
func (c *smCache) forget(arn string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, arn)
	c.gen++
}
