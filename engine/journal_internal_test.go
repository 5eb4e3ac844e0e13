package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// FuzzDecodeFast: whatever the fast decoder takes, encoding/json decodes
// to the same record; and every record EncodeInput writes takes the fast
// path.
func FuzzDecodeFast(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"TaskDone","id":7,"output":{"a":[1,2.50,"\u00e9"]},"rand":[1,18446744073709551615]}`))
	f.Add([]byte(`{"v":1,"kind":"Start","rand":[3]}`))
	f.Add([]byte(`{"kind":1,"id":2,"error":"E","cause":"C","delayMs":5}`))
	f.Add([]byte(`{"v":1,"kind":"Stop","id":0,"error":"e\"\\\n","cause":"c\ud83d\ude00"}`))
	f.Add([]byte(`{"v":1,"kind":"TaskStarted","id":1,"worker":"w"}`))
	f.Add([]byte(`{"v":1,"kind":"TaskDone","id":-3,"output":null,"delayMs":20}`))
	f.Add([]byte(`{"v":1,"kind":"Stop","error":"\ud800x","cause":"\udc00\ud800"}`))
	f.Add([]byte("{\"v\":1,\"kind\":\"Stop\",\"error\":\"\xff\xfe\",\"cause\":\"\xed\xa0\x80\"}"))
	f.Add([]byte(`{"v":1,"kind":"Start","clock":[[1,3400125000]]}`))
	f.Add([]byte(`{"v":1,"kind":"TimerFired","id":2,"clock":[[0,1000000],[4,2000000000]],"interrupts":[{"eval":3,"cause":"the evaluation exceeded its budget of 100 steps."}]}`))
	f.Add([]byte(`{"v":1,"kind":"TaskDone","id":5,"output":null,"interrupts":[{"eval":0,"stop":true,"error":"Halt","cause":"a \"stop\""}],"clock":[]}`))
	f.Add([]byte(`{"v":1,"kind":"UpdateMapRun","output":{"mapRunArn":"a","toleratedFailureCount":1}}`))
	f.Add([]byte(`{"v":1,"kind":"Redrive"}`))
	f.Add([]byte(`{"v":1,"kind":"Start","noActivity":[0]}`))
	f.Add([]byte(`{"v":1,"kind":"TimerFired","id":1,"noActivity":[]}`))
	f.Add([]byte(`{"v":1,"kind":"TaskDone","id":1,"output":1,"noActivity":[0,2147483648]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := fastFields(b)
		if !ok {
			return
		}
		got, gerr := fast.record()
		want, werr := slowFields(b)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: fast error %v, slow error %v", b, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if !sameRecord(got, want) {
			t.Fatalf("%q:\nfast %+v\nslow %+v", b, got, want)
		}
	})
}

// TestEncodedRecordsDecodeFast: the records EncodeInput writes take the
// fast path (else replay would quietly fall back to reflection).
func TestEncodedRecordsDecodeFast(t *testing.T) {
	out, _ := value.ParseString(`{"a":[1,2.50,"x\"y"],"b":null}`)
	for _, in := range []*interp.Input{
		nil,
		{Kind: interp.TaskDone, ID: 3, Result: taskResult(out, "", "")},
		{Kind: interp.TaskDone, ID: 4, Result: taskResult(nil, "States.TaskFailed", "boom \u00e9")},
		{Kind: interp.TimerFired, ID: 5},
		{Kind: interp.Stop, Error: "e", Cause: "c"},
		{Kind: interp.TaskStarted, ID: 6, Worker: "worker-1"},
		{Kind: interp.TaskHeartbeat, ID: 7},
	} {
		b := EncodeInput(nil, in, []uint64{0, 1 << 63})
		if _, ok := fastFields(b); !ok {
			t.Errorf("%s does not take the fast path", b)
		}
	}
	// With the meter's clock readings and interrupted evaluations.
	b := encodeRecord(nil, &interp.Input{Kind: interp.TimerFired, ID: 2}, nil,
		[]clockReading{{Call: 1, Offset: 3 * time.Millisecond}},
		[]interruptRecord{{Eval: 0, Interrupt: interp.Interrupt{Stop: true, Name: "E", Cause: "c \"q\""}}, {Eval: 2, Interrupt: interp.Interrupt{Cause: "budget"}}}, []int{0, 3})
	f, ok := fastFields(b)
	if !ok {
		t.Fatalf("%s does not take the fast path", b)
	}
	got, err := f.record()
	want, werr := slowFields(b)
	if err != nil || werr != nil || !sameRecord(got, want) || len(got.Clock) != 1 || len(got.Interrupts) != 2 || !reflect.DeepEqual(got.NoActivity, []int{0, 3}) {
		t.Errorf("%s: fast %+v %v, slow %+v %v", b, got, err, want, werr)
	}
}

func sameRecord(a, b record) bool {
	ao, bo := a.Input.Result.Output, b.Input.Result.Output
	a.Input.Result.Output, b.Input.Result.Output = nil, nil
	return value.Equal(ao, bo) && reflect.DeepEqual(a, b)
}

func taskResult(out any, errName, cause string) task.Result {
	return task.Result{Output: out, Error: errName, Cause: cause}
}
