package engine

import (
	crand "crypto/rand"
	"math/rand/v2"

	"github.com/stepd/stepd/interp"
)

// recorder is an execution's source of random values (interp.Info.Rand).
// Live, it draws from its source (a ChaCha8 seeded from crypto/rand once
// per execution, unless the caller gave one) and, when recording, keeps
// every value drawn until the driver takes them into the step that drew
// them. Replaying, it hands back the values a step recorded, in order,
// and draws afresh (counting the shortfall) when they run out.
type recorder struct {
	src    interp.Rand
	record bool
	drawn  []uint64
	// replaying is set while a committed step is replayed; script holds
	// its values not yet handed back.
	replaying bool
	script    []uint64
	short     int // values drawn afresh during replay
	extra     int // recorded values replay did not use
}

// newRecorder returns a recorder drawing from src; nil means a ChaCha8
// seeded from crypto/rand when the execution first draws (most never do).
func newRecorder(src interp.Rand, record bool) *recorder {
	return &recorder{src: src, record: record}
}

func (r *recorder) fresh() uint64 {
	if r.src == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails (crypto/rand panics instead)
		r.src = rand.NewChaCha8(seed)
	}
	return r.src.Uint64()
}

// Uint64 returns the next random value.
func (r *recorder) Uint64() uint64 {
	if r.replaying {
		if len(r.script) > 0 {
			v := r.script[0]
			r.script = r.script[1:]
			return v
		}
		r.short++
		return r.fresh()
	}
	v := r.fresh()
	if r.record {
		r.drawn = append(r.drawn, v)
	}
	return v
}

// take returns the values drawn since the last take; the slice is reused
// by the next draws, so it is only valid until then.
func (r *recorder) take() []uint64 {
	d := r.drawn
	r.drawn = r.drawn[:0]
	return d
}

// replay makes the next draws return values, then fresh ones. A nil
// values (a legacy step, which recorded none) counts every draw as short.
func (r *recorder) replay(values []uint64) {
	r.extra += len(r.script)
	r.replaying, r.script = true, values
}

// live ends replay: draws are fresh (and recorded) again.
func (r *recorder) live() {
	r.extra += len(r.script)
	r.replaying, r.script = false, nil
}
