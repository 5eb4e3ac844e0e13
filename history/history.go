// Package history holds execution history events in the shape of AWS Step
// Functions' GetExecutionHistory: a type, an id, the id of the previous event
// and one details object whose member name depends on the type
// (executionStartedEventDetails, stateEnteredEventDetails, ...).
//
// Details are kept as ordered JSON objects exactly as the API returns them:
// input, output and parameters are JSON text (strings), not parsed values.
package history

import (
	"strconv"
	"time"

	"github.com/stepd/stepd/value"
)

// Event is one history event.
type Event struct {
	Timestamp       time.Time
	Type            string // e.g. "PassStateEntered"
	ID              int64
	PreviousEventID int64
	// DetailsName is the member that holds Details, e.g.
	// "stateEnteredEventDetails"; empty for events without details
	// (e.g. ParallelStateStarted).
	DetailsName string
	Details     *value.Object
}

// Value returns the event as GetExecutionHistory returns it, with the
// timestamp in epoch seconds (fractional) as the AWS JSON protocol writes it.
// Pass withTimestamp=false to leave the timestamp out (for golden files).
func (e *Event) Value(withTimestamp bool) *value.Object {
	o := value.NewObject(5)
	if withTimestamp {
		o.Set("timestamp", value.Float(float64(e.Timestamp.UnixMilli())/1000))
	}
	o.Set("type", e.Type)
	o.Set("id", value.Int(e.ID))
	o.Set("previousEventId", value.Int(e.PreviousEventID))
	if e.DetailsName != "" {
		o.Set(e.DetailsName, e.Details)
	}
	return o
}

// AppendJSON appends the event as GetExecutionHistory's JSON object (the
// same text as value.String(e.Value(withTimestamp))), without building an
// intermediate object.
func (e *Event) AppendJSON(dst []byte, withTimestamp bool) []byte {
	dst = append(dst, '{')
	if withTimestamp {
		dst = append(dst, `"timestamp":`...)
		dst = value.Append(dst, value.Float(float64(e.Timestamp.UnixMilli())/1000))
		dst = append(dst, ',')
	}
	dst = append(dst, `"type":`...)
	dst = value.AppendString(dst, e.Type)
	dst = append(dst, `,"id":`...)
	dst = strconv.AppendInt(dst, e.ID, 10)
	dst = append(dst, `,"previousEventId":`...)
	dst = strconv.AppendInt(dst, e.PreviousEventID, 10)
	if e.DetailsName != "" {
		dst = append(dst, ',')
		dst = value.AppendString(dst, e.DetailsName)
		dst = append(dst, ':')
		dst = value.Append(dst, e.Details)
	}
	return append(dst, '}')
}

// Values returns the events as a JSON array.
func Values(events []*Event, withTimestamp bool) []any {
	out := make([]any, len(events))
	for i, e := range events {
		out[i] = e.Value(withTimestamp)
	}
	return out
}
