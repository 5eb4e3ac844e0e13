package interp

import "testing"

func TestReadsContext(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		`$i + 1`:          false,
		`$states.input.a`: false,
		`$states.input`:   false,
		`$states.result[0] & $states.errorOutput.Cause`: false,
		`$statesX.context`:                   false,
		`$states.input.%.context`:            true,
		`$states.input.a % 2`:                true,
		`$i % 2`:                             false,
		`$states.context.State.Name`:         true,
		`$states.input.a & $states.context`:  true,
		`$states`:                            true,
		`$keys($states)`:                     true,
		`$states.inputs`:                     true,
		"$states.`context`":                  true,
		`$states . context`:                  true,
		`$lookup($states, "context")`:        true,
		`$string($states.input) & $states.*`: true,
	} {
		if got := readsContext(src); got != want {
			t.Errorf("readsContext(%q) = %v, want %v", src, got, want)
		}
	}
}
