package interp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// TestExpressChildContext: the child executions of a Distributed Map whose
// ExecutionType is EXPRESS see no $$.Execution.RedriveCount (AWS's
// Express executions are never redriven and their Context object has
// none); STANDARD children and the parent keep it.
func TestExpressChildContext(t *testing.T) {
	t.Parallel()
	const def = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ResultPath":"$.kids",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"%s"},"StartAt":"B","States":{
			"B":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"e.$":"$$.Execution"},"End":true}}}]}}},
		"Next":"Top"},
		"Top":{"Type":"Pass","Parameters":{"e.$":"$$.Execution","kids.$":"$.kids"},"End":true}}}`
	in, _ := value.ParseString(`{"items":[1]}`)
	for _, typ := range []string{"EXPRESS", "STANDARD"} {
		for _, mapRuns := range []bool{false, true} {
			info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: mapRuns,
				Region: "us-east-1", Account: "123456789012", StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			x := engine.Run(context.Background(), compile(t, fmt.Sprintf(def, typ)), info, in, engine.Config{})
			if x.Status() != interp.Succeeded {
				t.Fatalf("%s: %s %+v", typ, x.Status(), x.Failure())
			}
			out := x.Output().(*value.Object)
			top, _ := out.Get("e")
			if !top.(*value.Object).Has("RedriveCount") {
				t.Errorf("%s: the parent's $$.Execution has no RedriveCount: %s", typ, value.String(top))
			}
			kids, _ := out.Get("kids")
			child := kids.([]any)[0].([]any)[0].(*value.Object)
			e, _ := child.Get("e")
			if got, want := e.(*value.Object).Has("RedriveCount"), typ == "STANDARD"; got != want {
				t.Errorf("%s (MapRuns %v): child's $$.Execution %s, RedriveCount present %v, want %v", typ, mapRuns, value.String(e), got, want)
			}
		}
	}
}
