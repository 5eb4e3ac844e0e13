// Package bench runs the benchmark workloads of testdata/shared/bench/workloads
// in process through stepd's engine, the way the peer's runner runs them
// (see testdata/shared/bench/README.md): the definition is compiled once outside
// the timing, Task states are answered by in-process functions chosen by the
// last part of their Resource ARN, called through the generic task invoker
// as a registry, --command or Lambda handler is (Options.Inline measures
// the engine's inline path for Immediate invokers beside it), working on
// stepd's own values; Waits take no time (the virtual clock),
// and each timed run is the wall time of one whole execution, history
// included. `stepd bench` prints the results and, with --peer, runs the npm
// peer aws-local-stepfunctions alternately in the same run and prints the
// ratios.
//
// It must not import cmd/stepd, the only layer above it, nor conformance
// beside it.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// Workload is one state machine of the workloads folder with its input and
// expectations (NAME.asl.json, NAME.input.json, NAME.meta.json).
type Workload struct {
	Name       string
	Definition []byte
	Input      any
	// Transitions is the number of states one execution enters, from the
	// meta file (0 when it gives none).
	Transitions int
	meta        *value.Object
}

// Load reads every workload of dir, sorted by name.
func Load(dir string) ([]*Workload, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.asl.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("bench: no *.asl.json workload in %s", dir)
	}
	slices.Sort(files)
	var out []*Workload
	for _, f := range files {
		w, err := loadOne(f)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func loadOne(path string) (*Workload, error) {
	base := strings.TrimSuffix(path, ".asl.json")
	def, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w := &Workload{Name: filepath.Base(base), Definition: def, Input: value.NewObject(0)}
	if b, err := os.ReadFile(base + ".input.json"); err == nil {
		if w.Input, err = value.Parse(b); err != nil {
			return nil, fmt.Errorf("bench: %s.input.json: %w", base, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if b, err := os.ReadFile(base + ".meta.json"); err == nil {
		v, err := value.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("bench: %s.meta.json: %w", base, err)
		}
		w.meta = value.AsObject(v)
		if n, ok := w.meta.Get("transitions"); ok {
			if num, ok := n.(value.Number); ok {
				t, _ := num.Int64()
				w.Transitions = int(t)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return w, nil
}

// Result is the measurement of one workload.
type Result struct {
	Workload string `json:"workload"`
	// Path is how Task states were called: "generic" (a task.InvokerFunc,
	// as every real handler is) or "inline" (a task.ImmediateFunc).
	Path string `json:"path"`
	Runs int    `json:"runs"`
	// Transitions is the number of states one execution entered (counted
	// from its history).
	Transitions       int     `json:"transitions"`
	SecondsMedian     float64 `json:"seconds_median"`
	SecondsMin        float64 `json:"seconds_min"`
	SecondsMax        float64 `json:"seconds_max"`
	TransitionsPerSec float64 `json:"transitions_per_sec"`
	// AllocsPerTransition and BytesPerTransition are heap allocations over
	// the timed runs, divided by the transitions they made.
	AllocsPerTransition float64  `json:"allocs_per_transition"`
	BytesPerTransition  float64  `json:"bytes_per_transition"`
	Events              int      `json:"events"`
	Status              string   `json:"status"`
	OK                  bool     `json:"ok"`
	Problems            []string `json:"problems,omitempty"`
}

// Options configure a measurement.
type Options struct {
	Runs, Warmup int
	// Inline calls Task functions through task.ImmediateFunc, the path of
	// invokers that declare they answer at once (mocks), instead of the
	// generic task.InvokerFunc.
	Inline bool
}

// Run measures one workload.
func Run(ctx context.Context, w *Workload, opts Options) (*Result, error) {
	if opts.Runs < 1 {
		opts.Runs = 5
	}
	run, err := prepare(w, opts.Inline)
	if err != nil {
		return nil, err
	}
	once := func() *interp.Execution { return run(ctx) }
	// An untimed run counts the states entered and checks the output.
	x := once()
	path := "generic"
	if opts.Inline {
		path = "inline"
	}
	r := &Result{Workload: w.Name, Path: path, Runs: opts.Runs, Events: len(x.History()), Status: string(x.Status()), Transitions: entered(x)}
	r.Problems = w.check(x, r.Transitions)
	if x.Status() != interp.Succeeded && !slices.ContainsFunc(r.Problems, func(p string) bool { return strings.HasPrefix(p, "status ") }) {
		f := x.Failure()
		r.Problems = append(r.Problems, fmt.Sprintf("status %s (%s: %s)", x.Status(), f.Error, f.Cause))
	}
	for range opts.Warmup {
		once()
	}
	times := make([]float64, 0, opts.Runs)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range opts.Runs {
		t0 := time.Now()
		once()
		times = append(times, time.Since(t0).Seconds())
	}
	runtime.ReadMemStats(&after)
	slices.Sort(times)
	r.SecondsMedian = Median(times)
	r.SecondsMin, r.SecondsMax = times[0], times[len(times)-1]
	if r.SecondsMedian > 0 {
		r.TransitionsPerSec = float64(r.Transitions) / r.SecondsMedian
	}
	if n := float64(r.Transitions * opts.Runs); n > 0 {
		r.AllocsPerTransition = float64(after.Mallocs-before.Mallocs) / n
		r.BytesPerTransition = float64(after.TotalAlloc-before.TotalAlloc) / n
	}
	r.OK = len(r.Problems) == 0
	return r, nil
}

// prepare compiles w once and returns a function that runs one execution
// of it, its Tasks called through the generic invoker or, when inline, an
// Immediate one.
func prepare(w *Workload, inline bool) (func(context.Context) *interp.Execution, error) {
	sm, err := asl.Parse(w.Definition)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", w.Name, err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", w.Name, err)
	}
	inv, err := invoker(sm, inline)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", w.Name, err)
	}
	info := interp.Info{
		ExecutionARN:     "arn:aws:states:us-east-1:123456789012:execution:" + w.Name + ":bench",
		Name:             "bench",
		StateMachineARN:  "arn:aws:states:us-east-1:123456789012:stateMachine:" + w.Name,
		StateMachineName: w.Name,
		StartTime:        time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		// As an Express workflow: several workloads record more than a
		// Standard execution's 25,000 history events.
	}
	return func(ctx context.Context) *interp.Execution {
		return engine.Run(ctx, p, info, w.Input, engine.Config{Invoker: inv})
	}, nil
}

// Median returns the median of sorted values (0 for none).
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// entered counts the states an execution entered.
func entered(x *interp.Execution) int {
	n := 0
	for _, e := range x.History() {
		if strings.HasSuffix(e.Type, "StateEntered") {
			n++
		}
	}
	return n
}

// check compares an execution, which entered transitions states, with the
// workload's expectations.
func (w *Workload) check(x *interp.Execution, transitions int) []string {
	var problems []string
	if w.Transitions > 0 && transitions != w.Transitions {
		problems = append(problems, fmt.Sprintf("transitions: counted %d, expected %d", transitions, w.Transitions))
	}
	if w.meta == nil {
		return problems
	}
	_, wantOutput := w.meta.Get("expectOutput")
	_, wantLength := w.meta.Get("expectOutputLength")
	if (wantOutput || wantLength) && x.Status() != interp.Succeeded {
		f := x.Failure()
		return append(problems, fmt.Sprintf("status %s (%s: %s)", x.Status(), f.Error, f.Cause))
	}
	out := x.Output()
	if v, ok := w.meta.Get("expectOutput"); ok && !value.Equal(v, out) {
		problems = append(problems, "output mismatch: got "+clip(value.String(out)))
	}
	arr, _ := out.([]any)
	if v, ok := w.meta.Get("expectOutputLength"); ok {
		n, _ := v.(value.Number).Int64()
		if int64(len(arr)) != n {
			problems = append(problems, fmt.Sprintf("output length %d, expected %d", len(arr), n))
		}
	}
	if v, ok := w.meta.Get("expectOutputSample"); ok {
		s := value.AsObject(v)
		idx, _ := s.Get("index")
		want, _ := s.Get("value")
		i, _ := idx.(value.Number).Int64()
		if i < 0 || int(i) >= len(arr) || !value.Equal(arr[i], want) {
			problems = append(problems, fmt.Sprintf("output[%d] mismatch", i))
		}
	}
	return problems
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// invoker answers every Task state of sm with the in-process function the
// last part of its Resource names, as the peer's runner does: through a
// plain task.InvokerFunc, which tells the engine nothing of how it answers
// (as a registry, --command or Lambda handler), or, when inline, a
// task.ImmediateFunc.
func invoker(sm *asl.StateMachine, inline bool) (task.Invoker, error) {
	if err := checkFunctions(sm); err != nil {
		return nil, err
	}
	if inline {
		return task.ImmediateFunc(call), nil
	}
	return task.InvokerFunc(call), nil
}

// call answers a Task state with its function.
func call(_ context.Context, req *task.Request) task.Result {
	fn := functions[req.Resource[strings.LastIndexByte(req.Resource, ':')+1:]]
	out, err := fn(value.AsObject(req.Input))
	if err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	return task.Result{Output: out}
}

func checkFunctions(sm *asl.StateMachine) error {
	var err error
	asl.Walk(sm, func(_ *asl.StateMachine, st *asl.State) bool {
		if st.Type == "Task" && err == nil {
			fn := st.Resource[strings.LastIndexByte(st.Resource, ':')+1:]
			if functions[fn] == nil {
				err = fmt.Errorf("no in-process function for Task %s (%s)", st.Name, st.Resource)
			}
		}
		return true
	})
	return err
}
