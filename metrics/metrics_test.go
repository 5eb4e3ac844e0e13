package metrics

import (
	"testing"
	"time"

	"github.com/stepd/stepd/history"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/value"
)

// FuzzEventFields checks the event field readers: they never panic, and on
// an event written by history they find its resource and previousEventId
// whatever the input text holds.
func FuzzEventFields(f *testing.F) {
	f.Add(`{"resource":"arn:x"}`, "arn:aws:states:us-east-1:1:activity:a", int64(3))
	f.Add(`"previousEventId":9`, "invoke", int64(0))
	f.Fuzz(func(t *testing.T, input, res string, prev int64) {
		_ = stringMember([]byte(input), resourceKey)
		_ = previousID([]byte(input))
		if prev < 0 {
			prev = -prev
		}
		if prev < 0 {
			return
		}
		d := value.NewObject(3)
		d.Set("input", value.String(input))
		d.Set("resource", res)
		ev := history.Event{Timestamp: time.Unix(0, 0), Type: "ActivityScheduled", ID: prev + 1, PreviousEventID: prev,
			DetailsName: "activityScheduledEventDetails", Details: d}
		b := ev.AppendJSON(nil, true)
		if got := previousID(b); got != prev {
			t.Fatalf("previousID(%s) = %d, want %d", b, got, prev)
		}
		want := string(value.AppendString(nil, res))
		if want == `"`+res+`"` { // no escapes: the reader returns it as is
			if got := stringMember(b, resourceKey); got != res {
				t.Fatalf("stringMember(%s) = %q, want %q", b, got, res)
			}
		}
	})
}

// BenchmarkCommitted measures what the metrics add to a committed step
// of a running task (two events, one call followed).
func BenchmarkCommitted(b *testing.B) {
	m := New()
	e := &store.Execution{ARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:sm"}
	m.Started(e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING"})
	sched := []byte(`{"timestamp":1,"type":"TaskScheduled","id":5,"previousEventId":4,"taskScheduledEventDetails":{"parameters":"{}","region":"us-east-1","resource":"invoke","resourceType":"lambda"}}`)
	started := []byte(`{"timestamp":1,"type":"TaskStarted","id":6,"previousEventId":5,"taskStartedEventDetails":{"resource":"invoke","resourceType":"lambda"}}`)
	done := []byte(`{"timestamp":1,"type":"TaskSucceeded","id":7,"previousEventId":6,"taskSucceededEventDetails":{"output":"{}","resource":"invoke","resourceType":"lambda"}}`)
	st1 := &store.Step{ExecutionARN: e.ARN, Status: "RUNNING", Events: []store.Event{{ID: 4, Type: "TaskStateEntered"}, {ID: 5, Type: "TaskScheduled", JSON: sched}, {ID: 6, Type: "TaskStarted", JSON: started}}}
	st2 := &store.Step{ExecutionARN: e.ARN, Status: "RUNNING", Events: []store.Event{{ID: 7, Type: "TaskSucceeded", JSON: done}, {ID: 8, Type: "TaskStateExited"}}}
	b.ReportAllocs()
	for b.Loop() {
		m.Committed(st1, time.Millisecond, nil)
		m.Committed(st2, time.Millisecond, nil)
	}
}
