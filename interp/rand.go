package interp

import (
	"hash/fnv"
	"math/rand/v2"
)

// Rand is the source of every random value an execution draws:
// States.UUID, States.MathRandom without a seed, JSONata's $uuid() and
// $random(), FULL retry jitter and Map Run labels. The interpreter draws no
// randomness of its own: the driver injects a source through Info.Rand, so
// that it can record what was drawn with the step that drew it and hand the
// same values back when it replays the execution after a restart.
type Rand interface {
	// Uint64 returns the next 64 random bits.
	Uint64() uint64
}

// seededRand returns the source of an execution started without one: a PCG
// generator seeded from its ARN, so that its values are the same whenever
// it runs.
func seededRand(executionArn string) Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(executionArn))
	seed := h.Sum64()
	return rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
}

// float64Of returns a number in [0, 1) from one draw of r.
func float64Of(r Rand) float64 {
	return float64(r.Uint64()>>11) / (1 << 53)
}
