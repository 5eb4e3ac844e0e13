package runner

import (
	"testing"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func TestForwardedRoundTrip(t *testing.T) {
	for _, in := range []interp.Input{
		{Kind: interp.TaskHeartbeat},
		{Kind: interp.TaskDone, Result: task.Result{Error: "E", Cause: "c"}},
		{Kind: interp.TaskDone, Result: task.Result{Output: value.ObjectOf("a", 1.5)}},
	} {
		m, err := decodeForwarded(encodeForwarded(callbackMessage("tok", in)))
		if err != nil {
			t.Fatal(err)
		}
		got := callbackInput(m)
		if got.Kind != in.Kind || got.Result.Error != in.Result.Error || got.Result.Cause != in.Result.Cause ||
			value.String(got.Result.Output) != value.String(in.Result.Output) || m.Token != "tok" {
			t.Errorf("%+v came back as %+v", in, got)
		}
	}
	up := forwarded{Kind: "updateMapRun", Output: `{"mapRunArn":"arn:aws:states:us-east-1:123456789012:mapRun:m/l:1","maxConcurrency":3}`}
	if m, err := decodeForwarded(encodeForwarded(up)); err != nil || m.Output != up.Output {
		t.Errorf("an UpdateMapRun came back as %+v, %v", m, err)
	}
	for _, bad := range []string{`{}`, `{"v":1,"kind":"success","token":"t","output":"{"}`, `{"v":1,"kind":"failure"}`,
		`{"v":1,"kind":"stop","x":1}`, `{"v":1,"kind":"stop"} {}`, `{"v":2,"kind":"stop"}`,
		`{"v":1,"kind":"updateMapRun","output":"[1]"}`, `{"v":1,"kind":"updateMapRun","output":"{"}`, `{"v":1,"kind":"updateMapRun"}`} {
		if _, err := decodeForwarded([]byte(bad)); err == nil {
			t.Errorf("decodeForwarded(%s) accepted it", bad)
		}
	}
}

// FuzzForwarded checks that decodeForwarded never panics and that what it
// accepts encodes to a message it reads the same.
func FuzzForwarded(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"success","token":"t","output":"{\"a\":1}"}`))
	f.Add([]byte(`{"v":1,"kind":"stop","error":"E"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeForwarded(b)
		if err != nil {
			return
		}
		again, err := decodeForwarded(encodeForwarded(m))
		if err != nil || again != m {
			t.Fatalf("%q decoded to %+v, which reads back as %+v, %v", b, m, again, err)
		}
	})
}
