package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
)

// recorder is a real HTTP server on 127.0.0.1 keeping the events it gets.
type recorder struct {
	mu   sync.Mutex
	evs  []map[string]any
	fail bool
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev map[string]any
	if err := json.NewDecoder(req.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		http.Error(w, "down", 500)
		return
	}
	r.evs = append(r.evs, ev)
}

func (r *recorder) statuses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.evs {
		d := ev["detail"].(map[string]any)
		out = append(out, d["name"].(string)+" "+d["status"].(string))
	}
	return out
}

var t0 = time.Now().Add(-time.Second)

func execution(s *memory.Store, t *testing.T, name string) *store.Execution {
	e := &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:m:" + name, Name: name, StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:m",
		Type: "STANDARD", Input: `{}`, Status: "RUNNING", Started: t0}
	if err := s.CreateExecution(context.Background(), e, &store.Step{ExecutionARN: e.ARN, Status: "RUNNING", At: t0}); err != nil {
		t.Fatal(err)
	}
	return e
}

func end(s *memory.Store, t *testing.T, e *store.Execution, status string) {
	if err := s.AppendStep(context.Background(), &store.Step{ExecutionARN: e.ARN, Seq: 1, Status: status, At: t0, Stopped: time.Now(), Output: `1`}); err != nil {
		t.Fatal(err)
	}
}

// TestQueuedBeforeCommit checks what a dispatcher does with notices queued
// before their change was committed (as the service queues them): held
// while the execution still runs, delivered once it ends so, dropped when
// it ended otherwise (a restart ran it again) or never existed.
func TestQueuedBeforeCommit(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	d := &Dispatcher{Store: s, Targets: []Target{&Webhook{URL: srv.URL}}, Region: "us-east-1", Account: "1",
		Backoff: func(int) time.Duration { return 0 }, GiveUp: time.Hour}
	a, b := execution(s, t, "a"), execution(s, t, "b")
	for _, n := range []struct{ arn, status string }{{a.ARN, "RUNNING"}, {a.ARN, "SUCCEEDED"}, {b.ARN, "FAILED"}, {"arn:aws:states:us-east-1:1:execution:m:never", "RUNNING"}} {
		if err := s.AddNotice(ctx, n.arn, n.status, t0); err != nil {
			t.Fatal(err)
		}
	}
	d.init()
	d.round(ctx)
	if got := rec.statuses(); strings.Join(got, ",") != "a RUNNING" {
		t.Fatalf("delivered while a and b run: %v", got)
	}
	end(s, t, a, "SUCCEEDED")
	end(s, t, b, "SUCCEEDED") // queued FAILED, ended SUCCEEDED
	// The first round set the notices it kept to be due again at once
	// (Backoff 0), as it read the clock: due by this round's reading.
	d.round(ctx)
	if got := rec.statuses(); strings.Join(got, ",") != "a RUNNING,a SUCCEEDED" {
		t.Fatalf("delivered: %v", got)
	}
	left, err := s.TakeNotices(ctx, time.Now().Add(time.Hour), time.Minute, 10)
	if err != nil || len(left) != 1 || !strings.HasSuffix(left[0].ExecutionARN, ":never") {
		t.Fatalf("left in the outbox: %+v %v (the unknown execution's waits a minute)", left, err)
	}
}

// TestRetries checks that a failed delivery stays queued with its
// attempts counted, and is delivered once the target takes it.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	rec := &recorder{fail: true}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	d := &Dispatcher{Store: s, Targets: []Target{&Webhook{URL: srv.URL}}, Backoff: func(int) time.Duration { return 0 }}
	d.init()
	a := execution(s, t, "a")
	if err := s.AddNotice(ctx, a.ARN, "RUNNING", t0); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d.round(ctx)
	}
	ns, _ := s.TakeNotices(ctx, time.Now(), 0, 10)
	if len(ns) != 1 || ns[0].Attempts != 3 {
		t.Fatalf("after 3 failed rounds: %+v", ns)
	}
	rec.mu.Lock()
	rec.fail = false
	rec.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); len(rec.statuses()) == 0; time.Sleep(time.Millisecond) {
		d.round(ctx)
		if time.Now().After(deadline) {
			t.Fatal("not delivered once the target took it")
		}
	}
	if ns, _ := s.TakeNotices(ctx, time.Now().Add(2*time.Hour), 0, 10); len(ns) != 0 {
		t.Errorf("left after delivery: %+v", ns)
	}
}

// TestEventPayloadLimits checks EventBridge's 248 KB rule: an output too
// large is left out, then the input when both do not fit.
func TestEventPayloadLimits(t *testing.T) {
	big := `"` + strings.Repeat("x", 200*1024) + `"`
	e := &store.Execution{ARN: "arn:x", Input: big, Output: big, Status: "SUCCEEDED", Started: t0, Stopped: t0}
	var ev map[string]any
	if err := json.Unmarshal(Event(e, "SUCCEEDED", "r", "a"), &ev); err != nil {
		t.Fatal(err)
	}
	det := ev["detail"].(map[string]any)
	if det["output"] != big || det["input"] != nil || det["inputDetails"].(map[string]any)["included"] != false {
		t.Errorf("input and output of 200 KB each: input %v, output kept %v", det["inputDetails"], det["output"] == big)
	}
	e.Output = `"` + strings.Repeat("y", 300*1024) + `"`
	if err := json.Unmarshal(Event(e, "SUCCEEDED", "r", "a"), &ev); err != nil {
		t.Fatal(err)
	}
	det = ev["detail"].(map[string]any)
	if det["output"] != nil || det["outputDetails"].(map[string]any)["included"] != false || det["input"] != big {
		t.Errorf("an output of 300 KB: %v %v, input kept %v", det["output"] == nil, det["outputDetails"], det["input"] == big)
	}
}

func TestEventID(t *testing.T) {
	a, b := EventID("arn:1", "RUNNING"), EventID("arn:1", "SUCCEEDED")
	if a == b || a != EventID("arn:1", "RUNNING") || len(a) != 36 || a[14] != '8' {
		t.Errorf("ids %s %s", a, b)
	}
}

func TestCommand(t *testing.T) {
	c := &Command{Argv: []string{"/bin/sh", "-c", `grep -q '"source":"aws.states"' && test "$X" = y`}, Env: map[string]string{"X": "y"}}
	if err := c.Deliver(context.Background(), []byte(`{"source":"aws.states"}`)); err != nil {
		t.Errorf("Deliver: %v", err)
	}
	c.Env["X"] = "n"
	if err := c.Deliver(context.Background(), []byte(`{"source":"aws.states"}`)); err == nil {
		t.Error("a failing command took the event")
	}
	var exit interface{ ExitCode() int }
	if err := (&Command{Argv: []string{"/bin/sh", "-c", "echo broken >&2; exit 3"}}).Deliver(context.Background(), nil); !errors.As(err, &exit) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing command's error: %v", err)
	}
}
