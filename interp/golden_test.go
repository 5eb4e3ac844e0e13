package interp_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

var update = flag.Bool("update", false, "rewrite the expected files of the golden suite (testdata/golden/*.want)")

// The golden suite drives the interpreter through Start and Step alone: no
// engine, no goroutines, a fixed clock and a fixed Rand. Each case is
// testdata/golden/NAME.json:
//
//	{
//	  "definition": {...},           the state machine
//	  "input": {...},                the execution input
//	  "seed": 1,                     optional: the Rand is PCG(seed, seed)
//	  "steps": [...]                 the inputs to deliver, in order
//	}
//
// A step names a command by its ordinal among the Invoke and StartTimer
// commands issued so far ("cmd": 1 is the first), and says what happened:
//
//	{"cmd": 1, "output": ...}            the task succeeded (TaskDone)
//	{"cmd": 1, "error": "E", "cause": "C"} the task failed (TaskDone)
//	{"cmd": 2, "fire": true}             the timer fired at its time
//	{"cmd": 1, "submitted": ...}         a callback integration was called
//	{"cmd": 1, "started": "w"}           an activity worker took the task
//	{"cmd": 1, "heartbeat": true}        SendTaskHeartbeat
//	{"stop": true, "error": "E", "cause": "C"} StopExecution
//
// "after": N advances the clock by N seconds before the step (a firing
// timer moves it to the timer's time). The expected commands of every step
// (step 0 is Start), the outcome and the history are in NAME.want;
// go test ./interp -run TestGolden -update rewrites them.
type goldenCase struct {
	Definition any
	Input      any
	Seed       uint64
	Steps      []goldenStep
}

type goldenStep struct {
	Cmd       int
	Output    any
	HasOutput bool
	Error     string
	Cause     string
	Fire      bool
	Submitted any
	Heartbeat bool
	Started   string
	Stop      bool
	After     float64
}

var goldenStart = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n++
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			c := loadGolden(t, f)
			got := runGolden(t, c, rand.NewPCG(c.Seed, c.Seed))
			want := strings.TrimSuffix(f, ".json") + ".want"
			if *update {
				if err := os.WriteFile(want, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, exp) {
				t.Errorf("%s differs from what the interpreter does now:\n%s", want, lineDiff(string(exp), string(got)))
			}
		})
	}
	if n < 15 {
		t.Errorf("only %d golden cases", n)
	}
}

func loadGolden(t *testing.T, file string) *goldenCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	o, ok := v.(*value.Object)
	if !ok {
		t.Fatalf("%s: not an object", file)
	}
	c := &goldenCase{Seed: 1}
	c.Definition, _ = o.Get("definition")
	c.Input, _ = o.Get("input")
	if c.Input == nil {
		c.Input = value.NewObject(0)
	}
	if s, ok := o.Get("seed"); ok {
		n, _ := s.(value.Number).Int64()
		c.Seed = uint64(n)
	}
	steps, _ := o.Get("steps")
	arr, _ := steps.([]any)
	for i, s := range arr {
		so, ok := s.(*value.Object)
		if !ok {
			t.Fatalf("%s: step %d is not an object", file, i+1)
		}
		var st goldenStep
		for k, v := range so.All {
			switch k {
			case "cmd":
				n, _ := v.(value.Number).Int64()
				st.Cmd = int(n)
			case "output":
				st.Output, st.HasOutput = v, true
			case "error":
				st.Error, _ = v.(string)
			case "cause":
				st.Cause, _ = v.(string)
			case "fire":
				st.Fire = v == true
			case "submitted":
				st.Submitted = v
			case "started":
				st.Started, _ = v.(string)
			case "heartbeat":
				st.Heartbeat = v == true
			case "stop":
				st.Stop = v == true
			case "after":
				st.After = v.(value.Number).Float64()
			case "comment":
			default:
				t.Fatalf("%s: step %d: unknown member %q", file, i+1, k)
			}
		}
		c.Steps = append(c.Steps, st)
	}
	return c
}

// runGolden runs a case and renders what the interpreter did.
func runGolden(t *testing.T, c *goldenCase, src interp.Rand) []byte {
	t.Helper()
	sm, err := asl.Parse([]byte(value.String(c.Definition)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	info := interp.Info{
		ExecutionARN:     "arn:aws:states:us-east-1:123456789012:execution:golden:run",
		Name:             "run",
		StateMachineARN:  "arn:aws:states:us-east-1:123456789012:stateMachine:golden",
		StateMachineName: "golden",
		StartTime:        goldenStart,
		Rand:             src,
	}
	var out bytes.Buffer
	var issued []interp.Command // Invoke and StartTimer commands, in order
	now := goldenStart
	record := func(step int, cmds []interp.Command) {
		fmt.Fprintf(&out, "step %d:\n", step)
		for _, cmd := range cmds {
			if cmd.Kind == interp.Invoke || cmd.Kind == interp.StartTimer {
				issued = append(issued, cmd)
			}
			out.WriteString("  " + renderCommand(cmd, len(issued)) + "\n")
		}
	}
	x, cmds := p.Start(info, c.Input, now)
	record(0, cmds)
	for i, s := range c.Steps {
		in := interp.Input{}
		now = now.Add(time.Duration(s.After * float64(time.Second)))
		if !s.Stop {
			if s.Cmd < 1 || s.Cmd > len(issued) {
				t.Errorf("step %d names command %d; %d issued so far", i+1, s.Cmd, len(issued))
				break
			}
			in.ID = issued[s.Cmd-1].ID
		}
		switch {
		case s.Stop:
			in.Kind, in.Error, in.Cause = interp.Stop, s.Error, s.Cause
		case s.Fire:
			in.Kind = interp.TimerFired
			if at := issued[s.Cmd-1].At; at.After(now) {
				now = at
			}
		case s.Submitted != nil:
			in.Kind, in.Result = interp.TaskSubmitted, task.Result{Output: s.Submitted}
		case s.Started != "":
			in.Kind, in.Worker = interp.TaskStarted, s.Started
		case s.Heartbeat:
			in.Kind = interp.TaskHeartbeat
		case s.Error != "":
			in.Kind, in.Result = interp.TaskDone, task.Result{Error: s.Error, Cause: s.Cause}
		case s.HasOutput:
			in.Kind, in.Result = interp.TaskDone, task.Result{Output: s.Output}
		default:
			t.Fatalf("step %d says nothing happened", i+1)
		}
		record(i+1, x.Step(now, in))
	}
	fmt.Fprintf(&out, "status: %s\n", x.Status())
	if f := x.Failure(); f != nil {
		fmt.Fprintf(&out, "error: %s\ncause: %s\n", f.Error, f.Cause)
	}
	if x.Status() == interp.Succeeded {
		fmt.Fprintf(&out, "output: %s\n", value.String(x.Output()))
	}
	out.WriteString("history:\n")
	for _, e := range x.History() {
		fmt.Fprintf(&out, "  %s\n", value.String(e.Value(false)))
		if !e.Timestamp.IsZero() && !e.Timestamp.Equal(goldenStart) {
			fmt.Fprintf(&out, "    at +%s\n", e.Timestamp.Sub(goldenStart))
		}
	}
	return out.Bytes()
}

func renderCommand(c interp.Command, ordinal int) string {
	switch c.Kind {
	case interp.Invoke:
		r := c.Request
		s := fmt.Sprintf("#%d Invoke id=%d state=%s resource=%s attempt=%d input=%s", ordinal, c.ID, r.StateName, r.Resource, r.Attempt, value.String(r.Input))
		if r.TaskToken != "" {
			s += " token=" + r.TaskToken
		}
		return s
	case interp.StartTimer:
		return fmt.Sprintf("#%d StartTimer id=%d at=+%s", ordinal, c.ID, c.At.Sub(goldenStart))
	case interp.CancelTimer:
		return "CancelTimer id=" + strconv.FormatInt(c.ID, 10)
	case interp.CancelTask:
		return "CancelTask id=" + strconv.FormatInt(c.ID, 10)
	}
	return fmt.Sprintf("command kind %d id=%d", c.Kind, c.ID)
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a == c {
			continue
		}
		fmt.Fprintf(&b, "line %d\n  want: %s\n  got:  %s\n", i+1, a, c)
		if shown++; shown == 5 {
			break
		}
	}
	return b.String()
}
