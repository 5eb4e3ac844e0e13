package histcase

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/stepd/stepd/value"
)

// Event is one history event as read: its type, its id and the id of the
// event before it (zero when the history did not give them), and its
// details object (nil for events without one).
type Event struct {
	Type        string
	ID, Prev    int64
	HasID       bool
	DetailsName string
	Details     *value.Object
}

// History is an execution history as read by Read.
type History struct {
	// Events in history order: by id when every event has one, else in
	// the order the document gave them.
	Events []*Event
	// Parsed is set when the data members (input, output, parameters)
	// hold JSON values rather than the JSON text the API returns: a case
	// file in the conformance corpus's format.
	Parsed bool
	// Form names what was read, for messages: "GetExecutionHistory
	// output", "3 GetExecutionHistory pages", "a case file's
	// expected.history", "stepd run --format json output".
	Form string
}

// MaxHistoryBytes bounds what Read accepts: AWS keeps at most 25,000
// events of at most 256 KiB of data each, so a genuine history is below
// this.
const MaxHistoryBytes = 1 << 30

// Read reads an execution history in any of the shapes it is found in:
//
//   - GetExecutionHistory's output, {"events": [...], "nextToken": ...}, as
//     AWS, the AWS CLI and stepd serve write it;
//   - several of those, one after another (pages appended to one file:
//     aws stepfunctions get-execution-history --max-items N, then
//     --starting-token), or as a JSON array of pages;
//   - a JSON array of events;
//   - stepd run --format json's output ({"status", ..., "history": [...]});
//   - a case file of the conformance corpus's format, whose
//     expected.history holds the events with their data parsed.
//
// Events may come in either order (reverseOrder) and pages may overlap:
// they are sorted by id, and an event given twice must be the same both
// times. A gap in the ids (a page left out) is an error naming the
// missing ids.
func Read(data []byte) (*History, error) {
	if len(data) > MaxHistoryBytes {
		return nil, fmt.Errorf("the history is %d bytes, more than any execution's (%d)", len(data), MaxHistoryBytes)
	}
	docs, err := documents(data)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, errors.New("the history is empty: want GetExecutionHistory's output ({\"events\": [...]})")
	}
	h := &History{}
	var raw []any
	switch {
	case len(docs) == 1:
		if raw, err = eventsOf(docs[0], h, true); err != nil {
			return nil, err
		}
	default:
		h.Form = fmt.Sprintf("%d GetExecutionHistory pages", len(docs))
		for i, d := range docs {
			evs, err := page(d)
			if err != nil {
				return nil, fmt.Errorf("document %d of %d: %w", i+1, len(docs), err)
			}
			raw = append(raw, evs...)
		}
	}
	for i, r := range raw {
		e, err := readEvent(r)
		if err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", h.Form, i+1, err)
		}
		h.Events = append(h.Events, e)
	}
	if err := h.order(); err != nil {
		return nil, err
	}
	if len(h.Events) == 0 {
		return nil, fmt.Errorf("%s has no events", h.Form)
	}
	return h, nil
}

// documents splits data into its JSON documents (one, or several one
// after another).
func documents(data []byte) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []any
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the history is not JSON (document %d): %w", len(docs)+1, err)
		}
		v, err := value.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("the history is not JSON (document %d): %w", len(docs)+1, err)
		}
		docs = append(docs, v)
	}
}

// eventsOf reads the one document of a history.
func eventsOf(doc any, h *History, top bool) ([]any, error) {
	switch d := doc.(type) {
	case []any:
		if len(d) > 0 && top {
			if o, ok := d[0].(*value.Object); ok && o.Has("events") {
				// An array of pages.
				h.Form = fmt.Sprintf("%d GetExecutionHistory pages", len(d))
				var out []any
				for i, p := range d {
					evs, err := page(p)
					if err != nil {
						return nil, fmt.Errorf("page %d of %d: %w", i+1, len(d), err)
					}
					out = append(out, evs...)
				}
				return out, nil
			}
		}
		h.Form = "an array of events"
		return d, nil
	case *value.Object:
		if exp, ok := d.Get("expected"); ok {
			h.Form, h.Parsed = "a case file's expected.history", true
			eo, _ := exp.(*value.Object)
			hv, _ := eo.Get("history")
			evs, ok := hv.([]any)
			if !ok {
				return nil, errors.New("the case file has no expected.history (an array of events): its execution history was not recorded")
			}
			return evs, nil
		}
		if hv, ok := d.Get("history"); ok && !d.Has("events") {
			h.Form = "stepd run --format json output"
			evs, ok := hv.([]any)
			if !ok {
				return nil, fmt.Errorf("history: must be an array of events, not %s", value.Phrase(hv))
			}
			return evs, nil
		}
		h.Form = "GetExecutionHistory output"
		return page(d)
	}
	return nil, fmt.Errorf("the history must be GetExecutionHistory's output ({\"events\": [...]}) or an array of events, not %s", value.Phrase(doc))
}

// page reads one GetExecutionHistory page.
func page(doc any) ([]any, error) {
	o, ok := doc.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("a page must be an object with events, not %s", value.Phrase(doc))
	}
	ev, ok := o.Get("events")
	if !ok {
		return nil, errors.New("a page must have events (GetExecutionHistory's output)")
	}
	evs, ok := ev.([]any)
	if !ok {
		return nil, fmt.Errorf("events: must be an array, not %s", value.Phrase(ev))
	}
	return evs, nil
}

func readEvent(r any) (*Event, error) {
	o, ok := r.(*value.Object)
	if !ok {
		return nil, fmt.Errorf("must be an object, not %s", value.Phrase(r))
	}
	e := &Event{}
	t, _ := o.Get("type")
	if e.Type, ok = t.(string); !ok || e.Type == "" {
		return nil, errors.New("type: must be a non-empty string")
	}
	id, hasID := o.Get("id")
	prev, _ := o.Get("previousEventId")
	if hasID && id != nil {
		n, err := eventID(id)
		if err != nil {
			return nil, fmt.Errorf("%s: id: %w", e.Type, err)
		}
		if n < 1 {
			return nil, fmt.Errorf("%s: id: must be at least 1, not %d", e.Type, n)
		}
		e.ID, e.HasID = n, true
		if prev != nil {
			if e.Prev, err = eventID(prev); err != nil {
				return nil, fmt.Errorf("%s (id %d): previousEventId: %w", e.Type, n, err)
			}
		}
	}
	for k, v := range o.All {
		if !strings.HasSuffix(k, "EventDetails") {
			continue
		}
		d, ok := v.(*value.Object)
		if !ok {
			return nil, fmt.Errorf("%s: %s: must be an object, not %s", e.Type, k, value.Phrase(v))
		}
		if e.Details != nil {
			return nil, fmt.Errorf("%s: has two details objects (%s and %s)", e.Type, e.DetailsName, k)
		}
		e.DetailsName, e.Details = k, d
	}
	return e, nil
}

func eventID(v any) (int64, error) {
	n, ok := v.(value.Number)
	if !ok {
		return 0, fmt.Errorf("must be an integer, not %s", value.Phrase(v))
	}
	i, ok := n.Int64()
	if !ok || i < 0 {
		return 0, fmt.Errorf("must be a non-negative integer, not %s", string(n))
	}
	return i, nil
}

// order sorts the events by id, merges events given twice and checks
// that no id is missing. Without ids (a recording that lost them) the
// document order stands.
func (h *History) order() error {
	withID := 0
	for _, e := range h.Events {
		if e.HasID {
			withID++
		}
	}
	if withID == 0 {
		return nil
	}
	if withID != len(h.Events) {
		if !h.Parsed {
			return fmt.Errorf("%s: %d of %d events have no id", h.Form, len(h.Events)-withID, len(h.Events))
		}
		// The corpus's sorted Parallel segments lost their ids: keep
		// the recorded order.
		return nil
	}
	sort.SliceStable(h.Events, func(i, j int) bool { return h.Events[i].ID < h.Events[j].ID })
	out := h.Events[:0]
	for _, e := range h.Events {
		if n := len(out); n > 0 && out[n-1].ID == e.ID {
			if !sameEvent(out[n-1], e) {
				return fmt.Errorf("%s: event %d is given twice, as %s and as %s, with different contents: the pages are of different executions", h.Form, e.ID, out[n-1].Type, e.Type)
			}
			continue
		}
		out = append(out, e)
	}
	h.Events = out
	var missing []string
	next := int64(1)
	for _, e := range h.Events {
		if e.ID > next {
			if e.ID == next+1 {
				missing = append(missing, fmt.Sprint(next))
			} else {
				missing = append(missing, fmt.Sprintf("%d-%d", next, e.ID-1))
			}
			if len(missing) == 5 {
				break
			}
		}
		next = e.ID + 1
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: events %s are missing (a page left out?): give every page of the history", h.Form, strings.Join(missing, ", "))
	}
	return nil
}

func sameEvent(a, b *Event) bool {
	return a.Type == b.Type && a.Prev == b.Prev && a.DetailsName == b.DetailsName && value.Equal(detailsOrNil(a), detailsOrNil(b))
}

func detailsOrNil(e *Event) any {
	if e.Details == nil {
		return nil
	}
	return e.Details
}

// Data returns a data member of e's details (input, output, parameters)
// as a JSON value: the API gives it as JSON text, a case file parsed.
// ok is false when the member is absent.
func (h *History) Data(e *Event, member string) (v any, ok bool, err error) {
	if e.Details == nil {
		return nil, false, nil
	}
	raw, ok := e.Details.Get(member)
	if !ok {
		return nil, false, nil
	}
	s, isText := raw.(string)
	if h.Parsed || !isText {
		return raw, true, nil
	}
	v, err = value.ParseString(s)
	if err != nil {
		return nil, true, fmt.Errorf("event %d (%s): %s.%s is not JSON text: %w", e.ID, e.Type, e.DetailsName, member, err)
	}
	return v, true, nil
}

// Str returns a string member of e's details, "" when absent.
func (e *Event) Str(member string) string {
	if e.Details == nil {
		return ""
	}
	v, _ := e.Details.Get(member)
	s, _ := v.(string)
	return s
}

// Text returns a member that is a string, or a value recorded in its
// place (a case file stores a cause that was JSON parsed) as compact JSON
// text; parsed reports the latter.
func (e *Event) Text(member string) (text string, parsed bool) {
	if e.Details == nil {
		return "", false
	}
	v, ok := e.Details.Get(member)
	if !ok || v == nil {
		return "", false
	}
	if s, isText := v.(string); isText {
		return s, false
	}
	return value.String(v), true
}

// Int returns a whole-number member of e's details, 0 when absent.
func (e *Event) Int(member string) int64 {
	if e.Details == nil {
		return 0
	}
	v, _ := e.Details.Get(member)
	n, _ := v.(value.Number)
	i, _ := n.Int64()
	return i
}

func (e *Event) String() string {
	if e.HasID {
		return fmt.Sprintf("event %d (%s)", e.ID, e.Type)
	}
	return e.Type + " event"
}
