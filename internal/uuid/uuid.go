// Package uuid makes version 4 UUIDs: random ones for execution names and
// request ids (New), and ones drawn from a given source for the values an
// execution draws (States.UUID, $uuid(), Map Run labels), which the driver
// can seed and replay (FromSource).
//
// It imports nothing of stepd's and must not: the interpreter's parts and
// the backends build on it.
package uuid

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
)

// New returns a random version 4 UUID in its 8-4-4-4-12 text form.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return format(b)
}

// Source is a source of random bits (math/rand/v2's Source).
type Source interface {
	Uint64() uint64
}

// FromSource returns a version 4 UUID built from two draws of src.
func FromSource(src Source) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], src.Uint64())
	binary.BigEndian.PutUint64(b[8:], src.Uint64())
	return format(b)
}

func format(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	// 8-4-4-4-12 hex digits, without fmt (a UUID is made per request).
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}
