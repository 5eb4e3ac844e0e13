package storetest

import (
	"context"
	"testing"

	"github.com/stepd/stepd/store"
)

// oddTexts are strings that a store must give back exactly as it was given
// them: NUL (which PostgreSQL's text cannot hold), bytes that are not
// UTF-8, U+FFFF (the PostgreSQL store's escape) and the look of an escape.
var oddTexts = []string{"a\x00b", "bad \xff\xfe utf-8", "\uffff", "\uffff00 x", "\x00", "plain"}

// text checks that the strings that reach a store as a caller gave them
// (errors and causes of executions, steps and Map Run children, version
// and alias descriptions, trace headers) round-trip byte for byte.
func text(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	if err := s.CreateStateMachine(ctx, sm("m")); err != nil {
		t.Fatal(err)
	}
	for i, odd := range oddTexts {
		e := exec("m", "odd"+string(rune('a'+i)), i)
		if err := s.PutExecutionRef(ctx, &store.ExecutionRef{ExecutionARN: e.ARN, TraceHeader: odd}); err != nil {
			t.Fatalf("PutExecutionRef with trace header %q: %v", odd, err)
		}
		if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
		st := step(e.ARN, 1, 2, 1, "FAILED")
		st.Output, st.Error, st.Cause = "", odd, odd+" cause"
		if err := s.AppendStep(ctx, st); err != nil {
			t.Fatalf("AppendStep with error %q: %v", odd, err)
		}
		got, err := s.GetExecution(ctx, e.ARN)
		if err != nil || got.Error != odd || got.Cause != odd+" cause" {
			t.Errorf("GetExecution: error %q cause %q (%v), want %q", got.Error, got.Cause, err, odd)
		}
		steps, err := s.Steps(ctx, e.ARN)
		if err != nil || len(steps) != 2 || steps[1].Error != odd || steps[1].Cause != odd+" cause" {
			t.Errorf("Steps: %+v %v, want error %q", steps, err, odd)
		}
		refs, err := s.ExecutionRefs(ctx, []string{e.ARN})
		if err != nil || refs[e.ARN] == nil || refs[e.ARN].TraceHeader != odd {
			t.Errorf("ExecutionRefs: %v %v, want trace header %q", refs[e.ARN], err, odd)
		}

		v := version("m", "r"+string(rune('a'+i)))
		v.Description = odd
		pub, _, err := s.PublishVersion(ctx, v, 100)
		if err != nil {
			t.Fatalf("PublishVersion with description %q: %v", odd, err)
		}
		if got, err := s.GetVersion(ctx, pub.ARN); err != nil || got.Description != odd {
			t.Errorf("GetVersion: description %q %v, want %q", got.Description, err, odd)
		}
		a := &store.Alias{ARN: sm("m").ARN + ":al" + string(rune('a'+i)), StateMachineARN: sm("m").ARN, Name: "al" + string(rune('a'+i)),
			Description: odd, Routes: []store.Route{{VersionARN: pub.ARN, Weight: 100}}, Created: t0, Updated: t0}
		if err := s.CreateAlias(ctx, a, 100); err != nil {
			t.Fatalf("CreateAlias with description %q: %v", odd, err)
		}
		if got, err := s.GetAlias(ctx, a.ARN); err != nil || got.Description != odd {
			t.Errorf("GetAlias: description %q %v, want %q", got.Description, err, odd)
		}
		a.Description = odd + " again"
		if err := s.UpdateAlias(ctx, a); err != nil {
			t.Fatalf("UpdateAlias with description %q: %v", a.Description, err)
		}
		if list, _, err := s.ListAliases(ctx, sm("m").ARN, store.Page{}); err != nil || list[len(list)-1].Description != a.Description {
			t.Errorf("ListAliases: %v, want the last with description %q", err, a.Description)
		}

		c := &store.ChildExecution{MapRunARN: "arn:aws:states:us-east-1:1:mapRun:m/M:1", Execution: store.Execution{
			ARN: "arn:aws:states:us-east-1:1:execution:m/M:c" + string(rune('a'+i)), Name: "c", StateMachineARN: "arn:aws:states:us-east-1:1:stateMachine:m/M",
			StateMachineName: "m/M", Type: "STANDARD", Input: `{}`, Status: "FAILED", Error: odd, Cause: odd, Started: t0, Stopped: t0}}
		if err := s.PutMapRuns(ctx, nil, []*store.ChildExecution{c}); err != nil {
			t.Fatalf("PutMapRuns with a child's error %q: %v", odd, err)
		}
		if got, err := s.GetChildExecution(ctx, c.ARN); err != nil || got.Error != odd || got.Cause != odd {
			t.Errorf("GetChildExecution: error %q %v, want %q", got.Error, err, odd)
		}
	}
	if list, _, err := s.ListVersions(ctx, sm("m").ARN, store.Page{}); err != nil || len(list) != len(oddTexts) || list[len(list)-1].Description != oddTexts[0] {
		t.Errorf("ListVersions: %v, want %d with the oldest described %q", err, len(oddTexts), oddTexts[0])
	}
}
