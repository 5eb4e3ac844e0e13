package service

import (
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// TestSMCache: an entry serves for smTTL, forget drops it, and a read
// begun before a forget is not cached.
func TestSMCache(t *testing.T) {
	var c smCache
	now := time.Now()
	sm := &store.StateMachine{ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:m", Definition: "old"}
	if got, gen := c.get(sm.ARN, now); got != nil {
		t.Fatal("empty cache: got an entry")
	} else {
		c.put(sm, gen, now)
	}
	if got, _ := c.get(sm.ARN, now.Add(smTTL/2)); got != sm {
		t.Errorf("within the TTL: got %v, want the entry", got)
	}
	if got, _ := c.get(sm.ARN, now.Add(smTTL)); got != nil {
		t.Errorf("after the TTL: got %v, want none", got)
	}
	_, gen := c.get(sm.ARN, now)
	c.forget(sm.ARN)
	if got, _ := c.get(sm.ARN, now); got != nil {
		t.Error("after forget: got the entry")
	}
	c.put(sm, gen, now) // read before the write that forget followed
	if got, _ := c.get(sm.ARN, now); got != nil {
		t.Error("a read begun before a forget was cached")
	}
}
