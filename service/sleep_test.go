package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/value"
)

// untilDormant waits until n executions are dormant (their drivers handed
// over), failing at ctx's end.
func untilDormant(ctx context.Context, t *testing.T, svc *service.Service, n int) {
	t.Helper()
	dormant := func() int { _, d := svc.Runner().Counts(); return d }
	for dormant() < n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d executions dormant, want %d", dormant(), n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

var timestamps = regexp.MustCompile(`"timestamp":[^,}]*,?`)

// TestSleepWhileParked: an execution that enters a Wait of a few seconds
// hands its driver over (it is dormant, not rebuilt), wakes when the Wait
// is due (not before), and ends with the output and the history, times
// aside, of the same execution run without parking (engine.Run on a
// virtual clock).
func TestSleepWhileParked(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(service.Config{Store: st})
	defer svc.Close()
	const wait = 3
	def := fmt.Sprintf(`{"StartAt":"Prepare","States":{
		"Prepare":{"Type":"Pass","Parameters":{"id.$":"$.id","name.$":"$$.Execution.Name","sum.$":"States.MathAdd($.id, 1)"},"Next":"Park"},
		"Park":{"Type":"Wait","Seconds":%d,"Next":"After"},
		"After":{"Type":"Pass","Parameters":{"before.$":"$","again.$":"States.ArrayLength(States.Array($.id, $.sum))"},"End":true}}}`, wait)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "sleepy", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "s1", Input: `{"id":41}`})
	if err != nil {
		t.Fatal(err)
	}
	untilDormant(ctx, t, svc, 1)
	if running, _ := svc.Runner().Counts(); running != 0 {
		t.Errorf("%d drivers running while the execution sleeps", running)
	}
	var got *struct {
		status, output string
		stopped        time.Time
	}
	for got == nil {
		d, err := svc.DescribeExecution(ctx, e.ARN)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "RUNNING" {
			got = &struct {
				status, output string
				stopped        time.Time
			}{d.Status, d.Output, d.Stopped}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the sleeping execution did not wake")
		case <-time.After(20 * time.Millisecond):
		}
	}
	evs, _, err := svc.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var entered, exited time.Time
	for _, ev := range evs {
		ts := timestampOf(t, ev.JSON)
		switch ev.Type {
		case "WaitStateEntered":
			entered = ts
		case "WaitStateExited":
			exited = ts
		}
	}
	if waited := exited.Sub(entered); waited < wait*time.Second || waited > wait*time.Second+5*time.Second {
		t.Errorf("the Wait lasted %v, want %ds (and a little)", waited, wait)
	}

	// The same execution, never parked.
	parsed, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(parsed)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := value.ParseString(`{"id":41}`)
	x := engine.Run(ctx, p, interp.Info{ExecutionARN: e.ARN, Name: "s1", StateMachineARN: sm.ARN, StateMachineName: "sleepy",
		RoleARN: "arn:aws:iam::123456789012:role/r", StartTime: e.Started, Region: "us-east-1", Account: "123456789012",
		MaxEvents: interp.MaxStandardEvents, Defer: true}, in, engine.Config{})
	if got.status != string(x.Status()) || got.output != value.String(x.Output()) {
		t.Errorf("slept: %s %s; never parked: %s %s", got.status, got.output, x.Status(), value.String(x.Output()))
	}
	want := x.History()
	if len(evs) != len(want) {
		t.Fatalf("slept: %d events; never parked: %d", len(evs), len(want))
	}
	for i, ev := range want {
		a := timestamps.ReplaceAllString(string(evs[i].JSON), "")
		b := timestamps.ReplaceAllString(string(ev.AppendJSON(nil, true)), "")
		if a != b {
			t.Errorf("event %d:\n slept:        %s\n never parked: %s", i+1, a, b)
		}
	}
}

func timestampOf(t *testing.T, js []byte) time.Time {
	t.Helper()
	v, err := value.ParseString(string(js))
	if err != nil {
		t.Fatal(err)
	}
	o, _ := v.(*value.Object)
	ts, _ := o.Get("timestamp")
	switch ts := ts.(type) {
	case string:
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatal(err)
		}
		return at
	case value.Number:
		return time.Unix(0, int64(ts.Float64()*1e9))
	}
	t.Fatalf("no timestamp in %s", js)
	return time.Time{}
}
