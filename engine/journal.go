package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// The journal codec: what a committed step keeps of the input that caused
// it (store.Step.Input), so that replay after a restart can hand the
// interpreter the same inputs and the same random values.
//
// Version 1 names its kind:
//
//	{"v":1,"kind":"TaskDone","id":7,"output":{...},"rand":[17,42]}
//	{"v":1,"kind":"Start","rand":[...]}   (step 0, only when it drew)
//
// and, when the step's evaluations took time or were interrupted, what the
// meter reported: the clock readings that moved the time ([call,
// nanoseconds after the step's time]) and the interrupted evaluations:
//
//	"clock":[[3,3400125000]],"interrupts":[{"eval":2,"cause":"..."}]
//	"interrupts":[{"eval":0,"stop":true,"error":"E","cause":"C"}]
//
// and, when a Task asked whether its activity exists and heard it does
// not, the numbers (from 0, in the step) of the questions so answered:
//
//	"noActivity":[0]
//
// A record without it answers every question "it exists", as a step
// written before the questions were asked (with ActivityScheduled) ran.
//
// Version 0 (legacy; no "v") kept the kind as interp.InputKind's number
// and no random values: legacyKinds freezes that numbering, so reordering
// interp's constants cannot change what an old record means.

// The kind names of version 1. They are part of the stored format: never
// rename one.
var kindNames = map[interp.InputKind]string{
	interp.TaskDone:      "TaskDone",
	interp.TimerFired:    "TimerFired",
	interp.Stop:          "Stop",
	interp.TaskSubmitted: "TaskSubmitted",
	interp.TaskStarted:   "TaskStarted",
	interp.TaskHeartbeat: "TaskHeartbeat",
	interp.UpdateMapRun:  "UpdateMapRun",
	interp.Redrive:       "Redrive",
}

var kindsByName = func() map[string]interp.InputKind {
	m := make(map[string]interp.InputKind, len(kindNames))
	for k, n := range kindNames {
		m[n] = k
	}
	return m
}()

// legacyKinds maps version 0's kind numbers to kind names, as
// interp.InputKind numbered them when version 0 was written. Frozen.
var legacyKinds = map[int]string{
	1: "TaskDone",
	2: "TimerFired",
	3: "Stop",
	4: "TaskSubmitted",
	5: "TaskStarted",
	6: "TaskHeartbeat",
}

// startKind names the record of step 0, which has no interpreter input.
const startKind = "Start"

// record is a decoded step input.
type record struct {
	Version int
	// Start marks the record of step 0 (Input is zero).
	Start bool
	Input interp.Input
	// Rand holds the random values drawn during the step, in order; nil
	// in a legacy record.
	Rand []uint64
	// Clock and Interrupts hold what the meter reported during the step.
	Clock      []clockReading
	Interrupts []interruptRecord
	// NoActivity numbers the step's questions whether an activity exists
	// that were answered no (see lookups).
	NoActivity []int
}

// encodeRecord appends the version 1 record of a step to b: in is the
// interpreter input (nil for step 0, the start), rand the values drawn
// during the step, clock and interrupts what the meter reported,
// noActivity the questions whether an activity exists answered no.
func encodeRecord(b []byte, in *interp.Input, rand []uint64, clock []clockReading, interrupts []interruptRecord, noActivity []int) []byte {
	b = append(b, `{"v":1,"kind":"`...)
	if in == nil {
		b = append(b, startKind...)
		b = append(b, '"')
	} else {
		name, ok := kindNames[in.Kind]
		if !ok {
			// Not an input kind the interpreter defines; keep the
			// number so that nothing is lost.
			name = "InputKind" + strconv.Itoa(int(in.Kind))
		}
		b = append(b, name...)
		b = append(b, `","id":`...)
		b = strconv.AppendInt(b, in.ID, 10)
		b = appendInputFields(b, in)
	}
	if len(rand) > 0 {
		b = append(b, `,"rand":[`...)
		for i, r := range rand {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, r, 10)
		}
		b = append(b, ']')
	}
	if len(clock) > 0 {
		b = append(b, `,"clock":[`...)
		for i, r := range clock {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(r.Call), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(r.Offset), 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if len(interrupts) > 0 {
		b = append(b, `,"interrupts":[`...)
		for i, r := range interrupts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"eval":`...)
			b = strconv.AppendInt(b, int64(r.Eval), 10)
			if r.Stop {
				b = append(b, `,"stop":true,"error":`...)
				b = value.AppendString(b, r.Name)
			}
			b = append(b, `,"cause":`...)
			b = value.AppendString(b, r.Cause)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(noActivity) > 0 {
		b = append(b, `,"noActivity":[`...)
		for i, n := range noActivity {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendInputFields(b []byte, in *interp.Input) []byte {
	str := func(key, v string) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = value.AppendString(b, v)
	}
	switch in.Kind {
	case interp.TaskDone, interp.TaskSubmitted:
		if in.Result.Failed() {
			str("error", in.Result.Error)
			str("cause", in.Result.Cause)
		} else {
			b = append(b, `,"output":`...)
			b = value.Append(b, in.Result.Output)
		}
		if in.Result.Delay > 0 {
			b = append(b, `,"delayMs":`...)
			b = strconv.AppendInt(b, in.Result.Delay.Milliseconds(), 10)
		}
	case interp.Stop:
		str("error", in.Error)
		str("cause", in.Cause)
	case interp.TaskStarted:
		str("worker", in.Worker)
	case interp.UpdateMapRun:
		b = append(b, `,"output":`...)
		b = value.Append(b, in.Args)
	}
	return b
}

// decodeInput decodes a step's record, of either version. An empty record
// (step 0 before version 1, or a start that drew nothing) is a Start
// record without random values.
func decodeInput(b []byte) (record, error) {
	if len(b) == 0 {
		return record{Start: true}, nil
	}
	if f, ok := fastFields(b); ok {
		return f.record()
	}
	return slowFields(b)
}

// fields are the members of a record, decoded.
type fields struct {
	version   int // 0: legacy
	kind      string
	id        int64
	output    any
	hasOutput bool
	errName   string
	cause     string
	delayMs   int64
	worker    string
	rand      []uint64
	clock     []clockReading
	intr      []interruptRecord
	noAct     []int
}

// fastFields decodes a record as encodeRecord writes it — version 1, only
// its own members, each of its own type — with value.Parse: no reflection,
// and the output is parsed once. Anything else (a legacy record, another
// member, a member of another type, bad JSON) is left to slowFields, whose
// decoding and errors define the format.
func fastFields(b []byte) (fields, bool) {
	v, err := value.Parse(b)
	if err != nil {
		return fields{}, false
	}
	o, ok := v.(*value.Object)
	if !ok {
		return fields{}, false
	}
	f := fields{rand: []uint64{}}
	for k, x := range o.All {
		switch k {
		case "v":
			if n, ok := x.(value.Number); !ok || n != "1" {
				return fields{}, false
			}
			f.version = 1
		case "kind":
			if f.kind, ok = x.(string); !ok {
				return fields{}, false
			}
		case "id", "delayMs":
			n, ok := x.(value.Number)
			if !ok {
				return fields{}, false
			}
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				return fields{}, false
			}
			if k == "id" {
				f.id = i
			} else {
				f.delayMs = i
			}
		case "output":
			f.output, f.hasOutput = x, true
		case "error", "cause", "worker":
			str, ok := x.(string)
			if !ok {
				return fields{}, false
			}
			switch k {
			case "error":
				f.errName = str
			case "cause":
				f.cause = str
			default:
				f.worker = str
			}
		case "rand":
			list, ok := x.([]any)
			if !ok {
				return fields{}, false
			}
			f.rand = make([]uint64, len(list))
			for i, r := range list {
				n, ok := r.(value.Number)
				if !ok {
					return fields{}, false
				}
				if f.rand[i], err = strconv.ParseUint(string(n), 10, 64); err != nil {
					return fields{}, false
				}
			}
		case "clock":
			if f.clock, ok = fastClock(x); !ok {
				return fields{}, false
			}
		case "interrupts":
			if f.intr, ok = fastInterrupts(x); !ok {
				return fields{}, false
			}
		case "noActivity":
			if f.noAct, ok = fastInts(x); !ok {
				return fields{}, false
			}
		default:
			return fields{}, false
		}
	}
	return f, f.version == 1
}

// fastClock decodes a record's clock readings: [[call, offset ns], …].
func fastClock(x any) ([]clockReading, bool) {
	list, ok := x.([]any)
	if !ok || len(list) == 0 {
		return nil, ok
	}
	out := make([]clockReading, len(list))
	for i, r := range list {
		pair, ok := r.([]any)
		if !ok || len(pair) != 2 {
			return nil, false
		}
		call, ok1 := fastInt(pair[0])
		off, ok2 := fastInt(pair[1])
		if !ok1 || !ok2 {
			return nil, false
		}
		out[i] = clockReading{Call: int(call), Offset: time.Duration(off)}
	}
	return out, true
}

// fastInterrupts decodes a record's interrupted evaluations:
// [{"eval":n,"stop":true,"error":"…","cause":"…"}, …].
func fastInterrupts(x any) ([]interruptRecord, bool) {
	list, ok := x.([]any)
	if !ok || len(list) == 0 {
		return nil, ok
	}
	out := make([]interruptRecord, len(list))
	for i, r := range list {
		o, ok := r.(*value.Object)
		if !ok {
			return nil, false
		}
		for k, m := range o.All {
			switch k {
			case "eval":
				n, ok := fastInt(m)
				if !ok {
					return nil, false
				}
				out[i].Eval = int(n)
			case "stop":
				b, ok := m.(bool)
				if !ok {
					return nil, false
				}
				out[i].Stop = b
			case "error", "cause":
				str, ok := m.(string)
				if !ok {
					return nil, false
				}
				if k == "error" {
					out[i].Name = str
				} else {
					out[i].Cause = str
				}
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// fastInts decodes a list of non-negative JSON integers.
func fastInts(x any) ([]int, bool) {
	list, ok := x.([]any)
	if !ok || len(list) == 0 {
		return nil, ok
	}
	out := make([]int, len(list))
	for i, r := range list {
		n, ok := fastInt(r)
		if !ok || n < 0 || n > math.MaxInt32 {
			return nil, false
		}
		out[i] = int(n)
	}
	return out, true
}

// fastInt is a JSON integer.
func fastInt(x any) (int64, bool) {
	n, ok := x.(value.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// slowFields decodes a record of either version with encoding/json.
func slowFields(b []byte) (record, error) {
	var raw struct {
		V       *int            `json:"v"`
		Kind    json.RawMessage `json:"kind"`
		ID      int64           `json:"id"`
		Output  json.RawMessage `json:"output"`
		Error   string          `json:"error"`
		Cause   string          `json:"cause"`
		DelayMs int64           `json:"delayMs"`
		Worker  string          `json:"worker"`
		Rand    []uint64        `json:"rand"`
		Clock   [][2]int64      `json:"clock"`
		Intr    []struct {
			Eval  int    `json:"eval"`
			Stop  bool   `json:"stop"`
			Error string `json:"error"`
			Cause string `json:"cause"`
		} `json:"interrupts"`
		NoActivity []int `json:"noActivity"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return record{}, fmt.Errorf("decoding a step input: %w", err)
	}
	f := fields{id: raw.ID, errName: raw.Error, cause: raw.Cause, delayMs: raw.DelayMs, worker: raw.Worker}
	switch {
	case raw.V == nil:
		var n int
		if err := json.Unmarshal(raw.Kind, &n); err != nil {
			return record{}, fmt.Errorf("decoding a legacy step input: kind %s: %w", raw.Kind, err)
		}
		if f.kind = legacyKinds[n]; f.kind == "" {
			return record{}, fmt.Errorf("decoding a legacy step input: unknown kind %d", n)
		}
	case *raw.V == 1:
		f.version = 1
		if err := json.Unmarshal(raw.Kind, &f.kind); err != nil {
			return record{}, fmt.Errorf("decoding a step input: kind %s: %w", raw.Kind, err)
		}
		f.rand = raw.Rand
		if f.rand == nil {
			f.rand = []uint64{}
		}
		for _, c := range raw.Clock {
			f.clock = append(f.clock, clockReading{Call: int(c[0]), Offset: time.Duration(c[1])})
		}
		for _, r := range raw.Intr {
			f.intr = append(f.intr, interruptRecord{Eval: r.Eval, Interrupt: interp.Interrupt{Stop: r.Stop, Name: r.Error, Cause: r.Cause}})
		}
		for _, n := range raw.NoActivity {
			if n < 0 {
				return record{}, fmt.Errorf("decoding a step input: noActivity %d", n)
			}
		}
		if len(raw.NoActivity) > 0 {
			f.noAct = raw.NoActivity
		}
	default:
		return record{}, fmt.Errorf("decoding a step input: unknown version %d", *raw.V)
	}
	if len(raw.Output) > 0 {
		v, err := value.Parse(raw.Output)
		if err != nil {
			return record{}, fmt.Errorf("decoding a step input's output: %w", err)
		}
		f.output, f.hasOutput = v, true
	}
	return f.record()
}

// record makes the record of decoded fields.
func (f *fields) record() (record, error) {
	rec := record{Version: f.version, Rand: f.rand, Clock: f.clock, Interrupts: f.intr, NoActivity: f.noAct}
	if f.kind == startKind && f.version > 0 {
		rec.Start = true
		return rec, nil
	}
	kind, ok := kindsByName[f.kind]
	if !ok {
		return record{}, fmt.Errorf("decoding a step input: unknown kind %q", f.kind)
	}
	in := interp.Input{Kind: kind, ID: f.id}
	switch kind {
	case interp.TaskDone, interp.TaskSubmitted:
		in.Result = task.Result{Error: f.errName, Cause: f.cause, Delay: time.Duration(f.delayMs) * time.Millisecond}
		if f.hasOutput {
			in.Result.Output = f.output
		}
	case interp.Stop:
		in.Error, in.Cause = f.errName, f.cause
	case interp.TaskStarted:
		in.Worker = f.worker
	case interp.UpdateMapRun:
		args, ok := f.output.(*value.Object)
		if !ok {
			return record{}, fmt.Errorf("decoding a step input: an UpdateMapRun without its request")
		}
		in.Args = args
	}
	rec.Input = in
	return rec, nil
}
