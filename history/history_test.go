package history

import (
	"testing"
	"time"

	"github.com/stepd/stepd/value"
)

func TestAppendJSONMatchesValue(t *testing.T) {
	t.Parallel()
	evs := []*Event{
		{Timestamp: time.UnixMilli(1795381241738), Type: "PassStateEntered", ID: 2, DetailsName: "stateEnteredEventDetails",
			Details: value.ObjectOf("input", `{"a":"\u00e9\n"}`, "inputDetails", value.ObjectOf("truncated", false), "name", "P")},
		{Timestamp: time.UnixMilli(0), Type: "ParallelStateStarted", ID: 3, PreviousEventID: 2},
	}
	for _, e := range evs {
		for _, ts := range []bool{true, false} {
			if got, want := string(e.AppendJSON(nil, ts)), value.String(e.Value(ts)); got != want {
				t.Errorf("AppendJSON = %s\nwant %s", got, want)
			}
		}
	}
}
