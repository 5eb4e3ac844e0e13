package interp

import (
	"fmt"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/value"
)

// jsonataFields holds a JSONata-mode state's compiled expressions.
type jsonataFields struct{}

func compileJSONata(s *state) (*jsonataFields, error) {
	return &jsonataFields{}, nil
}

func (th *thread) runJSONata() {
	th.propagate(&Failure{Error: ErrRuntime, Cause: fmt.Sprintf("JSONata states are not supported yet (state %s)", th.cur.Name)})
}

func (th *thread) completeJSONata(result any) {
	th.runJSONata()
}

func (th *thread) caughtJSONata(c *catcher, f *Failure, errOut *value.Object) {
	th.runJSONata()
}

var _ = asl.JSONata
