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
		{Timestamp: time.UnixMilli(5), Type: "PassStateExited", ID: 4, PreviousEventID: 3, DetailsName: "stateExitedEventDetails",
			Details: value.ObjectOf("assignedVariables", value.ObjectOf("x", Text{"a\"b"}), "name", "P", "output", Text{value.ObjectOf("é", []any{nil, "\n"})})},
	}
	for _, e := range evs {
		for _, ts := range []bool{true, false} {
			if got, want := string(e.AppendJSON(nil, ts)), value.String(e.Value(ts)); got != want {
				t.Errorf("AppendJSON = %s\nwant %s", got, want)
			}
		}
	}
}

func TestTextReadsAsJSONText(t *testing.T) {
	t.Parallel()
	e := &Event{Type: "PassStateExited", ID: 1, DetailsName: "stateExitedEventDetails",
		Details: value.ObjectOf("assignedVariables", value.ObjectOf("x", Text{[]any{"y"}}), "output", Text{value.ObjectOf("a", "\"")})}
	want := `{"type":"PassStateExited","id":1,"previousEventId":0,"stateExitedEventDetails":{"assignedVariables":{"x":"[\"y\"]"},"output":"{\"a\":\"\\\"\"}"}}`
	if got := string(e.AppendJSON(nil, false)); got != want {
		t.Errorf("AppendJSON = %s\nwant %s", got, want)
	}
	if got := value.String(e.Value(false)); got != want {
		t.Errorf("Value = %s\nwant %s", got, want)
	}
	if out, _ := e.Detail("output"); out != `{"a":"\""}` {
		t.Errorf("Detail(output) = %v", out)
	}
}

func TestMarkText(t *testing.T) {
	t.Parallel()
	e := &Event{Type: "TaskScheduled", ID: 3, PreviousEventID: 2, DetailsName: "taskScheduledEventDetails",
		Details: value.ObjectOf("parameters", value.ObjectOf("a", []any{"b\n"}), "region", "us-east-1", "resource", "x")}
	e.MarkText("parameters")
	want := `{"type":"TaskScheduled","id":3,"previousEventId":2,"taskScheduledEventDetails":{"parameters":"{\"a\":[\"b\\n\"]}","region":"us-east-1","resource":"x"}}`
	if got := string(e.AppendJSON(nil, false)); got != want {
		t.Errorf("AppendJSON = %s\nwant %s", got, want)
	}
	if got := value.String(e.Value(false)); got != want {
		t.Errorf("Value = %s\nwant %s", got, want)
	}
	if p, _ := e.Detail("parameters"); p != `{"a":["b\n"]}` {
		t.Errorf("Detail(parameters) = %v", p)
	}
	if r, _ := e.Detail("region"); r != "us-east-1" {
		t.Errorf("Detail(region) = %v", r)
	}
}

func TestForm(t *testing.T) {
	t.Parallel()
	form := &Form{Keys: []string{"input", "inputDetails", "name"}, Text: 1, Whole: 1 << 1}
	e := &Event{Type: "PassStateEntered", ID: 2, PreviousEventID: 1, DetailsName: "stateEnteredEventDetails", Form: form,
		Vals: [3]any{value.ObjectOf("a", "\""), "P"}}
	want := `{"type":"PassStateEntered","id":2,"previousEventId":1,"stateEnteredEventDetails":{"input":"{\"a\":\"\\\"\"}","inputDetails":{"truncated":false},"name":"P"}}`
	if got := string(e.AppendJSON(nil, false)); got != want {
		t.Errorf("AppendJSON = %s\nwant %s", got, want)
	}
	if got := value.String(e.Value(false)); got != want {
		t.Errorf("Value = %s\nwant %s", got, want)
	}
	if in, _ := e.Detail("input"); in != `{"a":"\""}` {
		t.Errorf("Detail(input) = %v", in)
	}
	if n, _ := e.Detail("name"); n != "P" {
		t.Errorf("Detail(name) = %v", n)
	}
	if d, _ := e.Detail("inputDetails"); value.String(d) != `{"truncated":false}` {
		t.Errorf("Detail(inputDetails) = %v", d)
	}
}
