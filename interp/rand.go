package interp

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
