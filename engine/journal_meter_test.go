package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/stepd/stepd/interp"
)

// TestJournalMeterGolden pins the stored form of what a step's meter
// reported (clock readings, interrupted evaluations), in both directions.
func TestJournalMeterGolden(t *testing.T) {
	for _, tt := range []struct {
		in         *interp.Input
		clock      []clockReading
		interrupts []interruptRecord
		stored     string
	}{
		{nil, []clockReading{{Call: 1, Offset: 3400125000}}, nil,
			`{"v":1,"kind":"Start","clock":[[1,3400125000]]}`},
		{&interp.Input{Kind: interp.TimerFired, ID: 2}, []clockReading{{Call: 0, Offset: time.Millisecond}, {Call: 4, Offset: 2 * time.Second}},
			[]interruptRecord{{Eval: 3, Interrupt: interp.Interrupt{Cause: "the evaluation exceeded its budget of 100 steps."}}},
			`{"v":1,"kind":"TimerFired","id":2,"clock":[[0,1000000],[4,2000000000]],"interrupts":[{"eval":3,"cause":"the evaluation exceeded its budget of 100 steps."}]}`},
		{&interp.Input{Kind: interp.TaskDone, ID: 5, Result: interp.Input{}.Result}, nil,
			[]interruptRecord{{Eval: 0, Interrupt: interp.Interrupt{Stop: true, Name: "Halt", Cause: "a \"stop\""}}},
			`{"v":1,"kind":"TaskDone","id":5,"output":null,"interrupts":[{"eval":0,"stop":true,"error":"Halt","cause":"a \"stop\""}]}`},
	} {
		got := string(encodeRecord(nil, tt.in, nil, tt.clock, tt.interrupts, nil))
		if got != tt.stored {
			t.Errorf("encoded\n%s\nwant\n%s", got, tt.stored)
		}
		rec, err := decodeInput([]byte(tt.stored))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rec.Clock, tt.clock) || !reflect.DeepEqual(rec.Interrupts, tt.interrupts) {
			t.Errorf("%s decoded to %+v %+v", tt.stored, rec.Clock, rec.Interrupts)
		}
	}
}

// TestMeterClockless checks when the meter tells the interpreter that it
// reports no time for a step: with the virtual clock only, and not while
// it replays readings recorded with a clock.
func TestMeterClockless(t *testing.T) {
	var _ interp.Clockless = (*meter)(nil)
	m := newMeter(Budget{}, nil, false)
	if !m.Clockless() {
		t.Fatal("a meter without a clock is not clockless")
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.replay(at, []clockReading{{Call: 0, Offset: time.Second}}, nil)
	if m.Clockless() {
		t.Fatal("a replaying meter is clockless")
	}
	if got := m.Now(); !got.Equal(at.Add(time.Second)) {
		t.Fatalf("replayed reading %v, want %v", got, at.Add(time.Second))
	}
	m.live()
	if !m.Clockless() {
		t.Fatal("a meter without a clock is not clockless after replay")
	}
	if newMeter(Budget{}, RealClock{}, true).Clockless() {
		t.Fatal("a meter with a clock is clockless")
	}
}

// TestJournalNoActivityGolden pins the stored form of the questions whether
// an activity exists that were answered no, in both directions, and that a
// record without it answers none no.
func TestJournalNoActivityGolden(t *testing.T) {
	for _, tt := range []struct {
		in     *interp.Input
		no     []int
		stored string
	}{
		{nil, []int{0}, `{"v":1,"kind":"Start","noActivity":[0]}`},
		{&interp.Input{Kind: interp.TimerFired, ID: 1}, []int{0, 2}, `{"v":1,"kind":"TimerFired","id":1,"noActivity":[0,2]}`},
		{&interp.Input{Kind: interp.TimerFired, ID: 1}, nil, `{"v":1,"kind":"TimerFired","id":1}`},
	} {
		got := string(encodeRecord(nil, tt.in, nil, nil, nil, tt.no))
		if got != tt.stored {
			t.Errorf("encoded\n%s\nwant\n%s", got, tt.stored)
		}
		rec, err := decodeInput([]byte(tt.stored))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rec.NoActivity, tt.no) {
			t.Errorf("%s decoded to %v", tt.stored, rec.NoActivity)
		}
	}
	for _, bad := range []string{`{"v":1,"kind":"TimerFired","id":1,"noActivity":[-1]}`, `{"v":1,"kind":"TimerFired","id":1,"noActivity":["0"]}`} {
		if rec, err := decodeInput([]byte(bad)); err == nil {
			t.Errorf("%s decoded to %v, want an error", bad, rec.NoActivity)
		}
	}
}
