// Package history holds execution history events in the shape of AWS Step
// Functions' GetExecutionHistory: a type, an id, the id of the previous event
// and one details object whose member name depends on the type
// (executionStartedEventDetails, stateEnteredEventDetails, ...).
//
// Details are kept as ordered JSON objects as the API returns them, except
// that the members AWS gives as JSON text (input, output, parameters,
// assigned variables) may hold a Text: the value, encoded only when the
// event is read (Value, AppendJSON), so that an execution whose history
// nobody reads does not encode every state's input and output.
//
// It imports only value, and must not import interp, which builds on it,
// nor anything above; like every pure package it reaches no I/O package
// (internal/layer).
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
	// textMembers marks the members of Details (bit i for the i-th) that
	// hold a value AWS gives as its JSON text, like a Text but without
	// boxing one (see MarkText).
	textMembers uint32
	// Form, when set, stands for Details: the details are Form's members
	// with the values in Vals, kept in the event rather than in an object
	// of their own (the most frequent events are built this way).
	Form *Form
	Vals [3]any
}

// Form is the shape of a kind of details: its members' names in order,
// which of them (bit i for the i-th) hold a value AWS gives as its JSON
// text, and which are always {"truncated":false} (an inputDetails or
// outputDetails member): those take no place in Vals, which holds the
// others' values in order (at most three).
type Form struct {
	Keys  []string
	Text  uint32
	Whole uint32
}

// notTruncated is the value of a Form's Whole members. Values are never
// changed, so every event shares it.
var notTruncated = value.ObjectOf("truncated", false)

// formVal returns the value of the i-th member of e's Form; j counts the
// members that take a place in Vals (the caller starts it at 0).
func (e *Event) formVal(i int, j *int) any {
	if e.Form.Whole&(1<<i) != 0 {
		return notTruncated
	}
	v := e.Vals[*j]
	*j++
	return v
}

// members returns the details as an object and the members that hold JSON
// text.
func (e *Event) members() (*value.Object, uint32) {
	if e.Form == nil {
		return e.Details, e.textMembers
	}
	o := value.NewObject(len(e.Form.Keys))
	j := 0
	for i, k := range e.Form.Keys {
		o.Set(k, e.formVal(i, &j))
	}
	return o, e.Form.Text
}

// MarkText marks the details member k as holding a value that AWS gives
// as its JSON text.
func (e *Event) MarkText(k string) {
	for i, kk := range e.Details.Keys() {
		if kk == k && i < 32 {
			e.textMembers |= 1 << i
		}
	}
}

// Text is a details member that AWS gives as JSON text: its value, encoded
// when the event is read. Values are immutable, so encoding later yields
// the text encoding at once would have.
type Text struct{ V any }

// Detail returns the details member k as the API gives it (a Text as its
// JSON text).
func (e *Event) Detail(k string) (any, bool) {
	d, text := e.members()
	for i, kk := range d.Keys() {
		if kk == k {
			_, v := d.At(i)
			if isText(text, i) {
				return value.String(v), true
			}
			return materialize(v), true
		}
	}
	return nil, false
}

func isText(text uint32, i int) bool { return i < 32 && text&(1<<i) != 0 }

// details returns Details as the API gives them, its text members as JSON
// text.
func (e *Event) details() *value.Object {
	d, text := e.members()
	if text == 0 {
		return materialize(d).(*value.Object)
	}
	o := value.NewObject(d.Len())
	for i, k := range d.Keys() {
		_, v := d.At(i)
		if isText(text, i) {
			o.Set(k, value.String(v))
		} else {
			o.Set(k, materialize(v))
		}
	}
	return o
}

// materialize turns a Text, also one nested in an object, into its JSON
// text.
func materialize(v any) any {
	switch x := v.(type) {
	case Text:
		return value.String(x.V)
	case *value.Object:
		if !hasText(x) {
			return x
		}
		o := value.NewObject(x.Len())
		for k, m := range x.All {
			o.Set(k, materialize(m))
		}
		return o
	}
	return v
}

func hasText(o *value.Object) bool {
	for _, m := range o.All {
		switch x := m.(type) {
		case Text:
			return true
		case *value.Object:
			if hasText(x) {
				return true
			}
		}
	}
	return false
}

// appendDetails appends o as JSON, each Text and each member marked in
// text as its JSON text.
func appendDetails(dst []byte, o *value.Object, text uint32) []byte {
	if o == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, k := range o.Keys() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = value.AppendString(dst, k)
		dst = append(dst, ':')
		dst = appendMember(dst, valueAt(o, i), isText(text, i))
	}
	return append(dst, '}')
}

// appendMember appends a details member's value: as its JSON text when
// text is set or it is a Text.
func appendMember(dst []byte, v any, text bool) []byte {
	if text {
		return value.AppendText(dst, v)
	}
	switch x := v.(type) {
	case Text:
		return value.AppendText(dst, x.V)
	case *value.Object:
		return appendDetails(dst, x, 0)
	}
	return value.Append(dst, v)
}

func valueAt(o *value.Object, i int) any {
	_, v := o.At(i)
	return v
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
		o.Set(e.DetailsName, e.details())
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
		dst = appendSeconds(dst, e.Timestamp.UnixMilli())
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
		if f := e.Form; f != nil {
			dst = append(dst, '{')
			j := 0
			for i, k := range f.Keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = value.AppendString(dst, k)
				dst = append(dst, ':')
				dst = appendMember(dst, e.formVal(i, &j), isText(f.Text, i))
			}
			dst = append(dst, '}')
		} else {
			dst = appendDetails(dst, e.Details, e.textMembers)
		}
	}
	return append(dst, '}')
}

// appendSeconds appends a time in milliseconds as epoch seconds, the text
// value.Float(float64(ms)/1000) has (the shortest that reads back as that
// float), without formatting a float: below 10^15 milliseconds (the year
// 33658) the decimal seconds.milliseconds has at most 15 significant
// digits, so it is the one decimal of that length or shorter that reads
// back as the float, and the text is that decimal without trailing zeros.
func appendSeconds(dst []byte, ms int64) []byte {
	if ms < 0 || ms >= 1e15 {
		return value.Append(dst, value.Float(float64(ms)/1000))
	}
	dst = strconv.AppendInt(dst, ms/1000, 10)
	frac := ms % 1000
	if frac == 0 {
		return dst
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, digits[:n]...)
}

// Values returns the events as a JSON array.
func Values(events []*Event, withTimestamp bool) []any {
	out := make([]any, len(events))
	for i, e := range events {
		out[i] = e.Value(withTimestamp)
	}
	return out
}
