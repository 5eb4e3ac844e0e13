// Package uuid makes random (version 4) UUIDs: execution names, request
// ids, States.UUID and Map Run labels.
package uuid

import (
	"crypto/rand"
	"fmt"
)

// New returns a random version 4 UUID in its 8-4-4-4-12 text form.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
