package service_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// counting is a random source that counts its draws.
type counting struct{ n atomic.Int64 }

func (c *counting) Uint64() uint64 { return uint64(c.n.Add(1)) * 0x9E3779B97F4A7C15 }

// interpDraws reports which of the random features of randomDef do not
// draw through interp.Info.Rand.
func interpDraws(t *testing.T) []string {
	t.Helper()
	flaky := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		if req.Attempt == 0 {
			return task.Result{Error: "Boom"}
		}
		return task.Result{Output: 1}
	})
	var missing []string
	for _, probe := range []struct{ name, def string }{
		{"States.UUID", `{"StartAt":"U","States":{"U":{"Type":"Pass","Parameters":{"u.$":"States.UUID()"},"End":true}}}`},
		{"$random()", `{"QueryLanguage":"JSONata","StartAt":"R","States":{"R":{"Type":"Pass","Output":"{% $random() %}","End":true}}}`},
		{"FULL retry jitter", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true,
			"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":2,"JitterStrategy":"FULL"}]}}}`},
	} {
		sm, err := asl.Parse([]byte(probe.def))
		if err != nil {
			t.Fatal(err)
		}
		p, err := interp.Compile(sm)
		if err != nil {
			t.Fatal(err)
		}
		src := &counting{}
		engine.Run(context.Background(), p, interp.Info{ExecutionARN: "arn:aws:states:us-east-1:1:execution:p:p", StartTime: time.Unix(0, 0), Rand: src},
			value.NewObject(0), engine.Config{Invoker: flaky})
		if src.n.Load() == 0 {
			missing = append(missing, probe.name)
		}
	}
	return missing
}

// logBuffer is a slog handler's destination safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReplayRecordedRandom: an execution draws a UUID
// (States.UUID), a number ($random() in a JSONata state) and a FULL retry
// jitter, then waits for an activity worker. The service is killed there
// (the execution is RUNNING in the SQLite file), a new one on the same
// file resumes it by replay, and a worker finishes it. The rebuilt state
// must hold the values drawn before the kill (the activity's input and the
// final output carry them) and replay must neither draw afresh nor leave
// recorded values unused.
func TestReplayRecordedRandom(t *testing.T) {
	if missing := interpDraws(t); len(missing) > 0 {
		t.Fatalf("interp does not draw %s through Info.Rand", strings.Join(missing, ", "))
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var calls atomic.Int64
	flaky := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		if calls.Add(1) == 1 {
			return task.Result{Error: "Boom", Cause: "first attempt"}
		}
		return task.Result{Output: "ok"}
	})

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st, Invoker: flaky, Log: log})
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf(`{"StartAt":"UUID","States":{
		"UUID":{"Type":"Pass","Parameters":{"uuid.$":"States.UUID()"},"Next":"Random"},
		"Random":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{%% $merge([$states.input, {'random': $random()}]) %%}","Next":"Flaky"},
		"Flaky":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:flaky","ResultPath":null,"Next":"Work",
			"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":2,"JitterStrategy":"FULL"}]},
		"Work":{"Type":"Task","Resource":%q,"ResultPath":"$.work","End":true}}}`, act.ARN)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "random", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the execution waits for the activity, then kill the
	// service: the execution stays RUNNING in the file.
	var drawn string
	for deadline := time.Now().Add(20 * time.Second); drawn == ""; {
		if time.Now().After(deadline) {
			t.Fatal("the execution did not reach the activity")
		}
		time.Sleep(20 * time.Millisecond)
		evs, _, err := svc.History(ctx, e.ARN, "", 0, false)
		if err != nil {
			t.Fatal(err)
		}
		var out string
		for _, ev := range evs {
			v, err := value.Parse(ev.JSON)
			if err != nil {
				t.Fatal(err)
			}
			o := v.(*value.Object)
			if d, ok := o.Get("stateExitedEventDetails"); ok {
				if name, _ := d.(*value.Object).Get("name"); name == "Random" {
					text, _ := d.(*value.Object).Get("output")
					out, _ = text.(string)
				}
			}
			if ev.Type == "ActivityScheduled" {
				drawn = out
			}
		}
	}
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := value.ParseString(drawn)
	if err != nil {
		t.Fatal(err)
	}
	uuid, _ := want.(*value.Object).Get("uuid")
	random, _ := want.(*value.Object).Get("random")
	if u, _ := uuid.(string); len(u) != 36 || random == nil {
		t.Fatalf("values drawn before the kill: %s", drawn)
	}

	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	svc2 := service.New(service.Config{Store: st2, Invoker: flaky, Log: log})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d: %v", n, err)
	}
	token, input, err := svc2.GetActivityTask(ctx, act.ARN, "w", 10*time.Second)
	if err != nil || token == "" {
		t.Fatalf("no activity task after the restart: %v", err)
	}
	if input != drawn {
		t.Errorf("the rebuilt execution's activity input is\n%s\nthe committed one\n%s", input, drawn)
	}
	if err := svc2.SendTaskSuccess(ctx, token, `"done"`); err != nil {
		t.Fatal(err)
	}
	done, err := svc2.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	out, err := value.ParseString(done.Output)
	if err != nil {
		t.Fatal(err)
	}
	gotUUID, _ := out.(*value.Object).Get("uuid")
	gotRandom, _ := out.(*value.Object).Get("random")
	if value.String(gotUUID) != value.String(uuid) || value.String(gotRandom) != value.String(random) {
		t.Errorf("final output %s; values drawn before the kill %s", done.Output, drawn)
	}
	evs, _, err := svc2.History(ctx, e.ARN, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i+1, ev.ID)
		}
	}
	if l := logs.String(); strings.Contains(l, "replay") || strings.Contains(l, "replayed") {
		t.Errorf("replay warned:\n%s", l)
	}
}
