package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

const mapRunDef = `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"L","ItemsPath":"$.items","ToleratedFailureCount":%d,%s
	"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[{"Variable":"$.fail","BooleanEquals":true,"Next":"F"}],"Default":"P"},
		"F":{"Type":"Fail","Error":"Bad","Cause":"item"},
		"P":{"Type":"Pass","End":true}}},"End":true}}}`

func childHistory(k *interp.ChildExecution) string {
	var b []string
	for _, e := range k.Events {
		b = append(b, fmt.Sprintf("%d<%d %s", e.ID, e.PreviousEventID, e.Type))
	}
	return strings.Join(b, ", ")
}

// TestMapRunChildren runs a Distributed Map whose second item fails: each
// item is a child execution with its own history, ARN and status, and the
// Map Run's counts follow them; within the tolerance the run succeeds,
// beyond it it fails and the children still running are aborted.
func TestMapRunChildren(t *testing.T) {
	t.Parallel()
	in, _ := value.ParseString(`{"items":[{"fail":false},{"fail":true},{"fail":false}]}`)
	info := interp.Info{Name: "x", StateMachineName: "sm", ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:sm:x", MapRuns: true,
		Region: "us-east-1", Account: "123456789012", StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		tolerated, conc                     int
		status                              interp.Status
		run                                 string
		succeeded, failed, aborted, pending int64
		events                              string
	}{
		{1, 0, interp.Succeeded, "SUCCEEDED", 2, 1, 0, 0, "MapRunStarted MapRunSucceeded MapStateSucceeded MapStateExited"},
		// The three run interleaved: the failure aborts the other two.
		{0, 0, interp.Failed, "FAILED", 0, 1, 2, 0, "MapRunStarted MapRunFailed MapStateFailed"},
		{0, 1, interp.Failed, "FAILED", 1, 1, 0, 1, "MapRunStarted MapRunFailed MapStateFailed"},
	} {
		conc := ""
		if tc.conc > 0 {
			conc = fmt.Sprintf(`"MaxConcurrency":%d,`, tc.conc)
		}
		p := compile(t, fmt.Sprintf(mapRunDef, tc.tolerated, conc))
		x := engine.Run(context.Background(), p, info, in, engine.Options{})
		if x.Status() != tc.status {
			t.Fatalf("tolerated %d: status %s, want %s (%+v)", tc.tolerated, x.Status(), tc.status, x.Failure())
		}
		var parent []string
		for _, e := range x.History() {
			if strings.HasPrefix(e.Type, "MapRun") || strings.HasPrefix(e.Type, "MapState") && e.Type != "MapStateEntered" && e.Type != "MapStateStarted" {
				parent = append(parent, e.Type)
			}
			if strings.HasPrefix(e.Type, "MapIteration") {
				t.Errorf("a Distributed Map's parent history has %s", e.Type)
			}
		}
		if got := strings.Join(parent, " "); got != tc.events {
			t.Errorf("tolerated %d: parent's Map events %q, want %q", tc.tolerated, got, tc.events)
		}
		runs, kids := x.TakeMapRuns()
		if len(runs) != 1 {
			t.Fatalf("%d map runs", len(runs))
		}
		r := runs[0]
		if !strings.HasPrefix(r.Arn, "arn:aws:states:us-east-1:123456789012:mapRun:sm/L:") || r.Status != tc.run || r.Total != 3 ||
			r.Succeeded != tc.succeeded || r.Failed != tc.failed || r.Aborted != tc.aborted || r.Pending != tc.pending || r.Running != 0 ||
			r.ToleratedFailureCount != int64(tc.tolerated) || r.MaxConcurrency != tc.conc {
			t.Errorf("tolerated %d conc %d: map run %+v", tc.tolerated, tc.conc, *r)
		}
		if int64(len(kids)) != 3-tc.pending {
			t.Fatalf("%d children", len(kids))
		}
		for _, k := range kids {
			if k.MapRunArn != r.Arn || !strings.HasPrefix(k.Arn, "arn:aws:states:us-east-1:123456789012:execution:sm/L:") ||
				k.StateMachineArn != "arn:aws:states:us-east-1:123456789012:stateMachine:sm/L" || !strings.HasSuffix(k.Arn, ":"+k.Name) {
				t.Errorf("child %+v", *k)
			}
			h := childHistory(k)
			var want string
			switch {
			case k.Status == interp.Succeeded:
				want = "1<0 ExecutionStarted, 2<0 ChoiceStateEntered, 3<2 ChoiceStateExited, 4<3 PassStateEntered, 5<4 PassStateExited, 6<5 ExecutionSucceeded"
			case k.Status == interp.Failed:
				want = "1<0 ExecutionStarted, 2<0 ChoiceStateEntered, 3<2 ChoiceStateExited, 4<3 FailStateEntered, 5<4 ExecutionFailed"
				if k.Failure == nil || k.Failure.Error != "Bad" {
					t.Errorf("failed child's failure %+v", k.Failure)
				}
			case k.Status == interp.Aborted:
				if !strings.HasPrefix(h, "1<0 ExecutionStarted") || !strings.HasSuffix(h, "ExecutionAborted") {
					t.Errorf("aborted child's history %s", h)
				}
				continue
			default:
				t.Errorf("child status %s", k.Status)
			}
			if h != want {
				t.Errorf("%s child's history:\n%s\nwant\n%s", k.Status, h, want)
			}
		}
		if again, kids := x.TakeMapRuns(); len(again) != 0 || len(kids) != 0 {
			t.Errorf("TakeMapRuns again: %d %d", len(again), len(kids))
		}
	}
}
