package engine_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestJournalGolden pins the stored form of every kind of step input, in
// both directions: these bytes are in databases, so a change here breaks
// resuming them.
func TestJournalGolden(t *testing.T) {
	out := mustParse(t, `{"b":1.50,"a":["x\u00e9\n",null,true]}`)
	for _, tt := range []struct {
		in     *interp.Input // nil: the start
		rand   []uint64
		stored string
	}{
		{nil, []uint64{1, 18446744073709551615},
			`{"v":1,"kind":"Start","rand":[1,18446744073709551615]}`},
		{&interp.Input{Kind: interp.TaskDone, ID: 7, Result: task.Result{Output: out}}, nil,
			`{"v":1,"kind":"TaskDone","id":7,"output":{"b":1.50,"a":["xé\n",null,true]}}`},
		{&interp.Input{Kind: interp.TaskDone, ID: 8}, []uint64{9007199254740993},
			`{"v":1,"kind":"TaskDone","id":8,"output":null,"rand":[9007199254740993]}`},
		{&interp.Input{Kind: interp.TaskDone, ID: 9, Result: task.Result{Output: "s", Delay: 1500 * time.Millisecond}}, nil,
			`{"v":1,"kind":"TaskDone","id":9,"output":"s","delayMs":1500}`},
		{&interp.Input{Kind: interp.TaskDone, ID: 1 << 40, Result: task.Result{Error: "States.Timeout", Cause: "quote \" and <tag>"}}, nil,
			`{"v":1,"kind":"TaskDone","id":1099511627776,"error":"States.Timeout","cause":"quote \" and <tag>"}`},
		{&interp.Input{Kind: interp.TimerFired, ID: 3}, []uint64{0, 42},
			`{"v":1,"kind":"TimerFired","id":3,"rand":[0,42]}`},
		{&interp.Input{Kind: interp.Stop, Error: "Stopped", Cause: "by the user"}, nil,
			`{"v":1,"kind":"Stop","id":0,"error":"Stopped","cause":"by the user"}`},
		{&interp.Input{Kind: interp.TaskSubmitted, ID: 4, Result: task.Result{Output: out}}, nil,
			`{"v":1,"kind":"TaskSubmitted","id":4,"output":{"b":1.50,"a":["xé\n",null,true]}}`},
		{&interp.Input{Kind: interp.TaskStarted, ID: 6, Worker: "worker-1"}, nil,
			`{"v":1,"kind":"TaskStarted","id":6,"worker":"worker-1"}`},
		{&interp.Input{Kind: interp.TaskHeartbeat, ID: 5}, nil,
			`{"v":1,"kind":"TaskHeartbeat","id":5}`},
	} {
		got := string(engine.EncodeInput(nil, tt.in, tt.rand))
		if got != tt.stored {
			t.Errorf("encoded\n%s\nwant\n%s", got, tt.stored)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: invalid JSON", got)
		}
		rec, err := engine.DecodeInput([]byte(tt.stored))
		if err != nil {
			t.Errorf("%s: %v", tt.stored, err)
			continue
		}
		want := engine.Record{Version: 1, Start: tt.in == nil, Rand: tt.rand}
		if want.Rand == nil {
			want.Rand = []uint64{}
		}
		if tt.in != nil {
			want.Input = *tt.in
		}
		checkRecord(t, tt.stored, rec, want)
	}
}

func checkRecord(t *testing.T, stored string, got, want engine.Record) {
	t.Helper()
	if value.String(got.Input.Result.Output) != value.String(want.Input.Result.Output) {
		t.Errorf("%s: output %s, want %s", stored, value.String(got.Input.Result.Output), value.String(want.Input.Result.Output))
	}
	got.Input.Result.Output, want.Input.Result.Output = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: decoded %+v, want %+v", stored, got, want)
	}
}

// TestJournalLegacy decodes records of version 0, which kept the kind as
// its number and no random values; a step 0 without a record is a start.
func TestJournalLegacy(t *testing.T) {
	for _, tt := range []struct {
		stored string
		want   engine.Record
	}{
		{``, engine.Record{Start: true}},
		{`{"kind":1,"id":7,"output":{"a":1}}`, engine.Record{Input: interp.Input{Kind: interp.TaskDone, ID: 7, Result: task.Result{Output: mustParse(t, `{"a":1}`)}}}},
		{`{"kind":1,"id":9,"error":"E","cause":"C","delayMs":250}`, engine.Record{Input: interp.Input{Kind: interp.TaskDone, ID: 9, Result: task.Result{Error: "E", Cause: "C", Delay: 250 * time.Millisecond}}}},
		{`{"kind":2,"id":3}`, engine.Record{Input: interp.Input{Kind: interp.TimerFired, ID: 3}}},
		{`{"kind":3,"id":0,"error":"Stopped","cause":"why"}`, engine.Record{Input: interp.Input{Kind: interp.Stop, Error: "Stopped", Cause: "why"}}},
		{`{"kind":4,"id":4,"output":"r"}`, engine.Record{Input: interp.Input{Kind: interp.TaskSubmitted, ID: 4, Result: task.Result{Output: "r"}}}},
		{`{"kind":5,"id":6,"worker":"w"}`, engine.Record{Input: interp.Input{Kind: interp.TaskStarted, ID: 6, Worker: "w"}}},
		{`{"kind":6,"id":5}`, engine.Record{Input: interp.Input{Kind: interp.TaskHeartbeat, ID: 5}}},
	} {
		got, err := engine.DecodeInput([]byte(tt.stored))
		if err != nil {
			t.Errorf("%s: %v", tt.stored, err)
			continue
		}
		if got.Rand != nil {
			t.Errorf("%s: a legacy record has no random values, got %v", tt.stored, got.Rand)
		}
		checkRecord(t, tt.stored, got, tt.want)
	}
	for _, bad := range []string{`{"kind":7,"id":1}`, `{"kind":0}`, `{"kind":"TaskDone"}`, `{"v":2,"kind":"TaskDone"}`,
		`{"v":1,"kind":"Nope"}`, `{"v":1,"kind":1}`, `{"v":1,"kind":"TaskDone","output":tru}`, `not json`} {
		if _, err := engine.DecodeInput([]byte(bad)); err == nil {
			t.Errorf("%s: decoded without error", bad)
		}
	}
}

// FuzzDecodeInput: any bytes decode or fail without panicking, and a
// decoded version 1 record encodes back to a record that decodes to the
// same thing.
func FuzzDecodeInput(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"TaskDone","id":7,"output":{"a":[1,2]},"rand":[1,18446744073709551615]}`))
	f.Add([]byte(`{"v":1,"kind":"Start","rand":[3]}`))
	f.Add([]byte(`{"kind":1,"id":2,"error":"E","cause":"C","delayMs":5}`))
	f.Add([]byte(`{"v":1,"kind":"Stop","error":"e","cause":"c"}`))
	f.Add([]byte(`{"v":1,"kind":"TaskStarted","id":1,"worker":"w"}`))
	f.Add([]byte(`{"v":1,"kind":"UpdateMapRun","output":{"mapRunArn":"arn:aws:states:us-east-1:1:mapRun:sm/M:x","maxConcurrency":3,"toleratedFailurePercentage":12.5}}`))
	f.Add([]byte(`{"v":1,"kind":"Redrive","rand":[5]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := engine.DecodeInput(b)
		if err != nil || r.Version != 1 {
			return
		}
		var in *interp.Input
		if !r.Start {
			in = &r.Input
		}
		again, err := engine.DecodeInput(engine.EncodeInput(nil, in, r.Rand))
		if err != nil {
			t.Fatalf("re-encoded record of %q does not decode: %v", b, err)
		}
		if again.Start != r.Start || again.Input.Kind != r.Input.Kind || again.Input.ID != r.Input.ID || len(again.Rand) != len(r.Rand) {
			t.Fatalf("round trip of %q: %+v, then %+v", b, r, again)
		}
	})
}
