// Package codec holds the stored forms that store backends share: opaque,
// checksummed pagination tokens (memory's too) and the packed form of a
// step's events (the durable backends'). It does no I/O.
//
// It imports only store, and must not import the backends that share it
// nor anything above them.
package codec

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"time"

	"github.com/stepd/stepd/store"
)

// Token kinds: the list a token belongs to.
const (
	KindStateMachines = 's'
	KindExecutions    = 'x'
	KindActivities    = 'a'
)

// FilterHash hashes the filter of a list, so that a token is only valid
// for the list it came from.
func FilterHash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// MakeToken encodes the key of the last item of a page:
// base64url(kind, filter hash, num, strs..., crc32).
func MakeToken(kind byte, filter uint64, num int64, strs ...string) string {
	b := []byte{kind}
	b = binary.BigEndian.AppendUint64(b, filter)
	b = binary.AppendVarint(b, num)
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseToken decodes a token made by MakeToken for the same kind and
// filter, with nstrs strings; any other text is store.ErrBadToken.
func ParseToken(tok string, kind byte, filter uint64, nstrs int) (num int64, strs []string, err error) {
	bad := fmt.Errorf("token %.40q: %w", tok, store.ErrBadToken)
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok) // one text per token
	if err != nil || len(b) < 1+8+1+4 {
		return 0, nil, bad
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum || body[0] != kind || binary.BigEndian.Uint64(body[1:]) != filter {
		return 0, nil, bad
	}
	body = body[9:]
	num, n := binary.Varint(body)
	if n <= 0 {
		return 0, nil, bad
	}
	body = body[n:]
	for range nstrs {
		l, n := binary.Uvarint(body)
		if n <= 0 || uint64(len(body)-n) < l {
			return 0, nil, bad
		}
		strs = append(strs, string(body[n:n+int(l)]))
		body = body[n+int(l):]
	}
	if len(body) != 0 {
		return 0, nil, bad
	}
	return num, strs, nil
}

// PageLimit is a page's size: its Limit, or 100.
func PageLimit(p store.Page) int {
	if p.Limit <= 0 {
		return 100
	}
	return p.Limit
}

// Nanos is the stored form of a time: Unix nanoseconds, 0 for the zero
// time.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNanos is the time that Nanos stored.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// AppendEvents appends the packed form of evs to b: id (8 bytes), type
// length (2), type, JSON length (4), JSON — repeated.
func AppendEvents(b []byte, evs []store.Event) []byte {
	for _, ev := range evs {
		b = binary.BigEndian.AppendUint64(b, uint64(ev.ID))
		b = binary.BigEndian.AppendUint16(b, uint16(len(ev.Type)))
		b = append(b, ev.Type...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(ev.JSON)))
		b = append(b, ev.JSON...)
	}
	return b
}

// ErrCorrupt is a packed event record that does not decode.
var ErrCorrupt = errors.New("corrupt event record")

// DecodeEvents decodes what AppendEvents packed; the events' JSON points
// into b.
func DecodeEvents(b []byte) ([]store.Event, error) {
	var out []store.Event
	for len(b) > 0 {
		if len(b) < 10 {
			return nil, ErrCorrupt
		}
		var ev store.Event
		ev.ID = int64(binary.BigEndian.Uint64(b))
		tl := int(binary.BigEndian.Uint16(b[8:]))
		b = b[10:]
		if len(b) < tl+4 {
			return nil, ErrCorrupt
		}
		ev.Type = string(b[:tl])
		jl := int(binary.BigEndian.Uint32(b[tl:]))
		b = b[tl+4:]
		if len(b) < jl {
			return nil, ErrCorrupt
		}
		ev.JSON = b[:jl:jl]
		b = b[jl:]
		out = append(out, ev)
	}
	return out, nil
}
