package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

func passChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		if i == n-1 {
			fmt.Fprintf(&b, `"S%d":{"Type":"Pass","End":true}`, i)
		} else {
			fmt.Fprintf(&b, `"S%d":{"Type":"Pass","Next":"S%d"}`, i, i+1)
		}
	}
	b.WriteString(`}}`)
	return b.String()
}

func taskChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"T0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"T%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"T%d":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","ResultPath":"$.r",%s}`, i, next)
	}
	b.WriteString(`}}`)
	return b.String()
}

const choiceLoop = `{"StartAt":"Init","States":{
 "Init":{"Type":"Pass","Result":{"i":0},"Next":"Inc"},
 "Inc":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"Check"},
 "Check":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericLessThan":10000,"Next":"Inc"}],"Default":"Done"},
 "Done":{"Type":"Succeed"}}}`

const bigMap = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`

func items(n int) any {
	arr := make([]any, n)
	for i := range arr {
		arr[i] = value.Int(int64(i))
	}
	return value.ObjectOf("items", arr)
}

// benchRun runs the definition b.N times and reports state transitions per
// second (a transition is one state entered).
func benchRun(b *testing.B, def string, input any, inv task.Invoker) {
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		b.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		b.Fatal(err)
	}
	info := interp.Info{Name: "bench", StartTime: time.Unix(0, 0)}
	b.ReportAllocs()
	transitions := 0
	start := time.Now()
	for b.Loop() {
		x := engine.Run(context.Background(), p, info, input, engine.Config{Invoker: inv})
		if x.Status() != interp.Succeeded {
			b.Fatalf("status %s: %v", x.Status(), x.Failure())
		}
		for _, e := range x.History() {
			if strings.HasSuffix(e.Type, "StateEntered") {
				transitions++
			}
		}
	}
	b.ReportMetric(float64(transitions)/time.Since(start).Seconds(), "transitions/s")
}

func BenchmarkPassChain1000(b *testing.B) { benchRun(b, passChain(1000), value.NewObject(0), nil) }

func BenchmarkChoiceLoop10000(b *testing.B) { benchRun(b, choiceLoop, value.NewObject(0), nil) }

func BenchmarkInlineMap10000(b *testing.B) { benchRun(b, bigMap, items(10000), nil) }

func BenchmarkTaskChain1000(b *testing.B) {
	inv := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("ok", true)}
	})
	benchRun(b, taskChain(1000), value.NewObject(0), inv)
}

// BenchmarkTaskChain1000Immediate answers the tasks at once (task.Immediate):
// no goroutine per invocation.
func BenchmarkTaskChain1000Immediate(b *testing.B) {
	inv := task.ImmediateFunc(func(ctx context.Context, req *task.Request) task.Result {
		return task.Result{Output: value.ObjectOf("ok", true)}
	})
	benchRun(b, taskChain(1000), value.NewObject(0), inv)
}

const jsonataTransform = `{"QueryLanguage":"JSONata","StartAt":"T","States":{
 "T":{"Type":"Pass","Output":"{% $states.input.items.{'n': name, 't': price * qty} %}","End":true}}}`

const jsonataLoop = `{"QueryLanguage":"JSONata","StartAt":"Init","States":{
 "Init":{"Type":"Pass","Assign":{"i":0},"Next":"Check"},
 "Check":{"Type":"Choice","Choices":[{"Condition":"{% $i < 10000 %}","Next":"Inc"}],"Default":"Done"},
 "Inc":{"Type":"Pass","Assign":{"i":"{% $i + 1 %}"},"Next":"Check"},
 "Done":{"Type":"Succeed","Output":"{% $i %}"}}}`

func itemObjects(n int) any {
	arr := make([]any, n)
	for i := range arr {
		arr[i] = value.ObjectOf("name", "item", "price", value.Int(int64(i)), "qty", value.Int(3))
	}
	return value.ObjectOf("items", arr)
}

func BenchmarkJSONataTransform1000(b *testing.B) {
	benchRun(b, jsonataTransform, itemObjects(1000), nil)
}

func BenchmarkJSONataAssignLoop10000(b *testing.B) {
	benchRun(b, jsonataLoop, value.NewObject(0), nil)
}
