package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
	"github.com/stepd/stepd/store/internal/sqlrow"
)

// TestRecentWindow checks that lists served from the windows of recent
// executions are the lists the database gives, page by page, for every
// status filter: while executions are created and end in batches, after a
// batch that was rolled back and replayed, past the window's size (where
// older pages come from the database), and after executions are deleted.
func TestRecentWindow(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	const a, b = "arn:aws:states:us-east-1:1:stateMachine:a", "arn:aws:states:us-east-1:1:stateMachine:b"

	// A window made before any execution exists is complete and empty.
	if l, _, err := s.ListExecutions(ctx, a, "", store.Page{}); err != nil || len(l) != 0 {
		t.Fatalf("empty list: %v, %v", l, err)
	}

	create := func(i int) string {
		sm, smName := a, "a"
		if i%5 == 0 {
			sm, smName = b, "b"
		}
		name := fmt.Sprintf("e%05d", i)
		arn := "arn:aws:states:us-east-1:1:execution:" + smName + ":" + name
		e := &store.Execution{ARN: arn, Name: name, StateMachineARN: sm, StateMachineName: smName, Type: "STANDARD", Status: "RUNNING",
			Input: "{}", Started: time.Unix(int64(1000+i), 0)}
		if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
			t.Error(err)
		}
		return arn
	}
	end := func(arn string, i int) {
		status := [...]string{"SUCCEEDED", "FAILED", "ABORTED"}[i%3]
		var output, errName string
		if status == "SUCCEEDED" {
			output = fmt.Sprintf(`{"i":%d}`, i)
		} else {
			errName = "E"
		}
		if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 1, Status: status, Stopped: time.Unix(int64(5000+i), 0), Output: output, Error: errName,
			Events: []store.Event{{ID: 1, Type: "ExecutionSucceeded", JSON: []byte(`{}`)}}}); err != nil {
			t.Error(err)
		}
	}
	check := func(when string, limits ...int) {
		t.Helper()
		for _, sm := range []string{a, b} {
			for _, status := range []string{"", "RUNNING", "SUCCEEDED", "FAILED", "ABORTED"} {
				for _, limit := range limits {
					comparePages(t, s, sm, status, limit, when)
				}
			}
		}
	}

	// Executions are created and end from many goroutines, so that the
	// writer commits them in batches, while lists are read.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < 1200; i += 8 {
				arn := create(i)
				if i%4 != 0 {
					end(arn, i)
				}
				if i%100 == 0 {
					if _, _, err := s.ListExecutions(ctx, a, "RUNNING", store.Page{}); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	check("after concurrent writes", 7, 100, 1000)
	if w := s.recent.sms[a]; w == nil || w.loading || !w.complete {
		t.Fatalf("the window of %s: %+v, want one complete", a, w)
	}

	// A batch rolled back and replayed one request at a time: the
	// creation in it is applied once, and the failed request's none.
	release := hold(t, s)
	made := make(chan string, 1)
	go func() { made <- create(1200) }()
	waitQueued(t, s, 1)
	boom := make(chan error, 1)
	go func() {
		boom <- s.write(ctx, func(tx *sql.Tx) error {
			// A request that changed an execution, then failed.
			if _, err := tx.Exec(`UPDATE executions SET status='FAILED'`); err != nil {
				return err
			}
			s.changes = append(s.changes, change{kind: created, s: summary{key: 1 << 40, arn: "phantom", smARN: a, status: "RUNNING"}})
			return errors.New("boom")
		})
	}()
	waitQueued(t, s, 2)
	release()
	<-made
	if err := <-boom; err == nil {
		t.Fatal("the failing request succeeded")
	}
	check("after a replayed batch", 100)

	// Past the window's size: the newest pages come from memory, the
	// older from the database.
	for i := 1201; i < 1201+2*recentWindow+100; i++ {
		arn := create(i)
		if i%3 == 0 {
			end(arn, i)
		}
	}
	check("past the window", 100, 1000)
	if w := s.recent.sms[a]; w == nil || w.complete || len(w.items) < recentWindow {
		t.Fatalf("the window of %s after %d executions: complete %v, %d items", a, 3300, w.complete, len(w.items))
	}
	if _, _, ok := s.recent.list(ctx, a, "", 1<<62, 101, s.fillRecent); !ok {
		t.Fatal("the first page did not come from the window")
	}

	// Deleted executions leave the lists.
	n, err := s.DeleteEnded(ctx, time.Unix(5600, 0), 10000)
	if err != nil || n == 0 {
		t.Fatalf("DeleteEnded: %d, %v", n, err)
	}
	check("after deletions", 100)
}

// comparePages reads every page of a list through ListExecutions and
// through the database alone, and fails where they differ.
func comparePages(t *testing.T, s *Store, sm, status string, limit int, when string) {
	t.Helper()
	ctx := context.Background()
	var got, want store.Page
	got.Limit, want.Limit = limit, limit
	for page := 0; ; page++ {
		g, gNext, err := s.ListExecutions(ctx, sm, status, got)
		if err != nil {
			t.Fatal(err)
		}
		w, wNext, err := bySeq(ctx, s.db, kindExecutions, codec.FilterHash(sm, status), `SELECT `+listColumns+` FROM executions WHERE state_machine_arn=?`,
			[]any{sm}, status, want, scanListed)
		if err != nil {
			t.Fatal(err)
		}
		if len(g) != len(w) || gNext != wNext {
			t.Fatalf("%s: %s %q limit %d page %d: %d executions, next %q; the database: %d, next %q", when, sm, status, limit, page, len(g), gNext, len(w), wNext)
		}
		for i := range g {
			if *g[i] != *w[i] {
				t.Fatalf("%s: %s %q limit %d page %d item %d: %+v, the database: %+v", when, sm, status, limit, page, i, *g[i], *w[i])
			}
		}
		for _, e := range g {
			// The row as DescribeExecution reads it, against the database.
			got, err := s.GetExecution(ctx, e.ARN)
			if err != nil {
				t.Fatal(err)
			}
			want, err := sqlrow.ScanExec(s.db.QueryRowContext(ctx, `SELECT `+sqlrow.ExecColumns+` FROM executions WHERE arn=?`, e.ARN))
			if err != nil {
				t.Fatal(err)
			}
			if *got != *want {
				t.Fatalf("%s: GetExecution: %+v, the database: %+v", when, *got, *want)
			}
		}
		if gNext == "" {
			return
		}
		got.Token, want.Token = gNext, wNext
	}
}

// TestReleaseMemory checks that freeing the caches' memory leaves the
// store whole: what was committed reads back, and writes go on.
func TestReleaseMemory(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	arn := newExec(t, s, "a")
	if err := <-appendAsync(s, arn, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseMemory(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-appendAsync(s, arn, 2); err != nil {
		t.Fatal(err)
	}
	steps, err := s.Steps(ctx, arn)
	if err != nil || len(steps) != 3 {
		t.Fatalf("%d steps, %v; want 3", len(steps), err)
	}
}
