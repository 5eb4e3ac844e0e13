package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// TestServeSchedulesScaled runs a rate(1 minute) schedule on a server at
// --time-scale 0.001 (a minute is 60 ms), across a restart: due times are
// fired once each, whole minutes apart on the scaled clock (those that
// fell due while the server was down are skipped but for the first).
func TestServeSchedulesScaled(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	url, _, stop := serveInProcess(t, "--data", data, "--time-scale", "0.001")
	c := restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("tick"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"ScheduleExpression":"rate(1 minute)","FlexibleTimeWindow":{"Mode":"OFF"},"Target":{"Arn":"` + *sm.StateMachineArn +
		`","RoleArn":"arn:aws:iam::123456789012:role/r","Input":"{\"due\":\"<aws.scheduler.scheduled-time>\"}"}}`
	res, err := http.Post(url+"schedules/tick", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("CreateSchedule: %s", res.Status)
	}
	dues := func(min int) []string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: sm.StateMachineArn})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Executions) >= min || time.Now().After(deadline) {
				var ds []string
				for _, e := range out.Executions {
					d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
					if err != nil {
						t.Fatal(err)
					}
					var in struct{ Due string }
					if err := json.Unmarshal([]byte(*d.Input), &in); err != nil {
						t.Fatal(err)
					}
					ds = append(ds, in.Due)
				}
				slices.Sort(ds)
				return ds
			}
		}
	}
	dues(3)
	stop()
	url, _, _ = serveInProcess(t, "--data", data, "--time-scale", "0.001")
	c = restartingClient(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	ds := dues(8)
	if len(ds) < 8 {
		t.Fatalf("%d firings, want 8 or more: %v", len(ds), ds)
	}
	for i := 1; i < len(ds); i++ {
		a, err1 := time.Parse(time.RFC3339, ds[i-1])
		b, err2 := time.Parse(time.RFC3339, ds[i])
		if d := b.Sub(a); err1 != nil || err2 != nil || d <= 0 || d%time.Minute != 0 {
			t.Fatalf("due times not whole minutes apart (one fired twice?): %v", ds)
		}
	}
}
