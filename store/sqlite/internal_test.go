package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// hold blocks the writer until the returned function is called, so that
// the requests sent meanwhile wait in the queue and form one batch.
func hold(t *testing.T, s *Store) (release func()) {
	t.Helper()
	entered, unblock := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.write(context.Background(), func(*sql.Tx) error {
			close(entered)
			<-unblock
			return nil
		})
	}()
	<-entered
	return func() {
		close(unblock)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// waitQueued waits until n requests are queued.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(s.reqs) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", len(s.reqs), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func newExec(t *testing.T, s *Store, name string) string {
	t.Helper()
	arn := "arn:aws:states:us-east-1:1:execution:m:" + name
	e := &store.Execution{ARN: arn, Name: name, StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
	if err := s.CreateExecution(context.Background(), e, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	return arn
}

func appendAsync(s *Store, arn string, seq int64) chan error {
	c := make(chan error, 1)
	go func() {
		c <- s.AppendStep(context.Background(), &store.Step{ExecutionARN: arn, Seq: seq, Status: "RUNNING",
			Events: []store.Event{{ID: seq + 1, Type: "PassStateEntered", JSON: []byte(`{}`)}}})
	}()
	return c
}

// TestGroupCommit checks that waiting requests share one transaction and
// that refused requests (a step out of order, a duplicate, a missing
// execution) do not cost the others their batch.
func TestGroupCommit(t *testing.T) {
	s := openTest(t)
	const n = 50
	arns := make([]string, n)
	for i := range arns {
		arns[i] = newExec(t, s, fmt.Sprint(i))
	}
	release := hold(t, s)
	before := s.commits.Load()
	var good, bad []chan error
	for i, arn := range arns {
		good = append(good, appendAsync(s, arn, 1))
		bad = append(bad, appendAsync(s, arn, int64(3+i%2)))
	}
	bad = append(bad, appendAsync(s, "arn:aws:states:us-east-1:1:execution:m:none", 1))
	dup := make(chan error, 1)
	go func() {
		dup <- s.CreateExecution(context.Background(), &store.Execution{ARN: arns[0], Status: "RUNNING"}, nil)
	}()
	waitQueued(t, s, 2*n+2)
	release()
	for i, c := range good {
		if err := <-c; err != nil {
			t.Errorf("step 1 of %d: %v", i, err)
		}
	}
	for i, c := range bad {
		if err := <-c; err == nil {
			t.Errorf("bad request %d accepted", i)
		}
	}
	if err := <-dup; !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate: %v", err)
	}
	// The held request's transaction and the batch.
	if got := s.commits.Load() - before; got != 2 {
		t.Errorf("%d transactions, want 2", got)
	}
	for _, arn := range arns {
		if steps, err := s.Steps(context.Background(), arn); err != nil || len(steps) != 2 {
			t.Errorf("%s: %d steps, %v", arn, len(steps), err)
		}
	}
}

// TestBatchReplay checks that a request failing after it wrote rolls its
// batch back, and that the other requests are committed on their own.
func TestBatchReplay(t *testing.T) {
	s := openTest(t)
	arn := newExec(t, s, "a")
	other := newExec(t, s, "b")
	release := hold(t, s)
	ok1 := appendAsync(s, arn, 1)
	boom := make(chan error, 1)
	go func() {
		boom <- s.write(context.Background(), func(tx *sql.Tx) error {
			if _, err := tx.Exec(`INSERT INTO activities VALUES ('x', 'x', 0)`); err != nil {
				return err
			}
			return errors.New("boom")
		})
	}()
	waitQueued(t, s, 2)
	ok2 := appendAsync(s, other, 1)
	waitQueued(t, s, 3)
	release()
	if err := <-ok1; err != nil {
		t.Error(err)
	}
	if err := <-ok2; err != nil {
		t.Error(err)
	}
	if err := <-boom; err == nil || err.Error() != "boom" {
		t.Errorf("failing request: %v", err)
	}
	if _, err := s.GetActivity(context.Background(), "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the failed request's write was committed: %v", err)
	}
	// The writer's cache was rebuilt: the next steps are 2.
	for _, a := range []string{arn, other} {
		if err := <-appendAsync(s, a, 2); err != nil {
			t.Error(err)
		}
	}
}

// TestSummaryUpdate checks the executions row against steps that do not
// change the status (an empty status keeps it).
func TestSummaryUpdate(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	arn := newExec(t, s, "a")
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 1, Output: "{}", Stopped: time.Unix(5, 0)}); err != nil {
		t.Fatal(err)
	}
	e, err := s.GetExecution(ctx, arn)
	if err != nil || e.Status != "RUNNING" || e.Output != "{}" || !e.Stopped.Equal(time.Unix(5, 0)) {
		t.Fatalf("after a step without status: %+v %v", e, err)
	}
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 2, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	if e, err = s.GetExecution(ctx, arn); err != nil || e.Status != "RUNNING" || e.Output != "" || !e.Stopped.IsZero() {
		t.Fatalf("after a plain running step: %+v %v", e, err)
	}
}

// TestPageStability checks that executions started between two calls do
// not shift the next page, and that a token only serves its own list.
func TestPageStability(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	create := func(name string) {
		arn := "arn:aws:states:us-east-1:1:execution:m:" + name
		if err := s.CreateExecution(ctx, &store.Execution{ARN: arn, Name: name, StateMachineARN: "sm", Status: "RUNNING"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		create(fmt.Sprint("old", i))
	}
	first, next, err := s.ListExecutions(ctx, "sm", "", store.Page{Limit: 2})
	if err != nil || len(first) != 2 || first[0].Name != "old3" || next == "" {
		t.Fatalf("first page: %v %q %v", first, next, err)
	}
	create("new")
	rest, last, err := s.ListExecutions(ctx, "sm", "", store.Page{Token: next, Limit: 2})
	if err != nil || len(rest) != 2 || rest[0].Name != "old1" || rest[1].Name != "old0" || last != "" {
		t.Fatalf("second page after a new execution: %v %q %v", rest, last, err)
	}
	for _, tc := range []struct{ sm, status string }{{"other", ""}, {"sm", "RUNNING"}} {
		if _, _, err := s.ListExecutions(ctx, tc.sm, tc.status, store.Page{Token: next}); !errors.Is(err, store.ErrBadToken) {
			t.Errorf("token used for %q %q: %v", tc.sm, tc.status, err)
		}
	}
	if _, _, err := s.ListStateMachines(ctx, store.Page{Token: next}); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("executions token used for state machines: %v", err)
	}
	// A token altered by one character is refused.
	b := []byte(next)
	b[len(b)/2] ^= 1
	if _, _, err := s.ListExecutions(ctx, "sm", "", store.Page{Token: string(b)}); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("altered token: %v", err)
	}
}

// TestClose checks that Close commits what is queued, can be called
// twice, and that writes after it fail instead of hanging.
func TestClose(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), filepath.Join(dir, "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	arn := newExec(t, s, "a")
	release := hold(t, s)
	queued := appendAsync(s, arn, 1)
	waitQueued(t, s, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for !isClosing(s) {
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := <-queued; err != nil {
		t.Fatalf("a write queued before Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := <-appendAsync(s, arn, 2); !errors.Is(err, errClosed) {
		t.Errorf("write after Close: %v", err)
	}
	s, err = Open(context.Background(), filepath.Join(dir, "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if steps, err := s.Steps(context.Background(), arn); err != nil || len(steps) != 2 {
		t.Errorf("after reopen: %d steps, %v", len(steps), err)
	}
}

func isClosing(s *Store) bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// TestMigrate opens a database of the first layout: a steps table keyed
// by (exec, seq) without the summary columns, holding an execution whose
// second step has no events. Its steps move to the step_log table with their
// events, the empty step gets the empty range after its predecessor, and
// the execution goes on.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(ids ...int64) []byte {
		var evs []store.Event
		for _, id := range ids {
			evs = append(evs, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(fmt.Sprintf(`{"id":%d}`, id))})
		}
		return codec.AppendEvents([]byte{}, evs)
	}
	arn := "arn:aws:states:us-east-1:1:execution:m:old"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`CREATE TABLE executions (seq INTEGER PRIMARY KEY AUTOINCREMENT, arn TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
			state_machine_arn TEXT NOT NULL, state_machine_name TEXT NOT NULL, definition TEXT NOT NULL, type TEXT NOT NULL,
			role_arn TEXT NOT NULL, test_case TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
			output TEXT NOT NULL, error TEXT NOT NULL, cause TEXT NOT NULL, started INTEGER NOT NULL, stopped INTEGER NOT NULL)`, nil},
		{`CREATE TABLE steps (exec INTEGER NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, input BLOB,
			first_event INTEGER NOT NULL, last_event INTEGER NOT NULL, events BLOB NOT NULL, PRIMARY KEY (exec, seq)) WITHOUT ROWID`, nil},
		{`CREATE INDEX steps_by_event ON steps (exec, last_event)`, nil},
		{`INSERT INTO executions VALUES (7, ?, 'old', 'sm', 'm', '{}', 'STANDARD', '', '', '{}', 'RUNNING', '', '', '', 1, 0)`, []any{arn}},
		{`INSERT INTO steps VALUES (7, 0, 1, NULL, 1, 2, ?)`, []any{ev(1, 2)}},
		{`INSERT INTO steps VALUES (7, 1, 2, x'7b7d', 0, -1, ?)`, []any{ev()}},
		{`INSERT INTO steps VALUES (7, 2, 3, x'7b7d', 3, 3, ?)`, []any{ev(3)}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	db.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	steps, err := s.Steps(ctx, arn)
	if err != nil || len(steps) != 3 || len(steps[0].Events) != 2 || len(steps[1].Events) != 0 || steps[2].Events[0].ID != 3 || string(steps[1].Input) != "{}" {
		t.Fatalf("steps after migration: %+v %v", steps, err)
	}
	for _, tt := range []struct {
		after   int64
		reverse bool
		want    int
	}{{0, false, 3}, {1, false, 2}, {2, false, 1}, {3, false, 0}, {0, true, 3}, {3, true, 2}, {2, true, 1}} {
		if evs, err := s.Events(ctx, arn, tt.after, 10, tt.reverse); err != nil || len(evs) != tt.want {
			t.Errorf("Events(after %d, reverse %v) = %d events %v, want %d", tt.after, tt.reverse, len(evs), err, tt.want)
		}
	}
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 3, Status: "SUCCEEDED", Output: "{}",
		Events: []store.Event{{ID: 4, Type: "ExecutionSucceeded", JSON: []byte(`{}`)}}}); err != nil {
		t.Fatalf("next step after migration: %v", err)
	}
	if e, err := s.GetExecution(ctx, arn); err != nil || e.Status != "SUCCEEDED" {
		t.Errorf("execution after migration: %+v %v", e, err)
	}
	var n int
	if err := s.db.db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name IN ('steps', 'steps_by_event')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("old table left: %d %v", n, err)
	}
}

// TestMigrateWake: a step_log made before Step.Wake gets the column (zero
// for the steps it holds) and keeps what new steps record.
func TestMigrateWake(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:states:us-east-1:1:execution:m:w"
	e := &store.Execution{ARN: arn, Name: "w", StateMachineARN: "sm", StateMachineName: "m", Definition: "{}", Type: "STANDARD", Input: "{}", Status: "RUNNING"}
	if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: arn, Events: []store.Event{{ID: 1, Type: "ExecutionStarted", JSON: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Turn step_log back into what an older stepd made.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`ALTER TABLE step_log DROP COLUMN wake`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wake := time.Unix(0, 1700000000123456789).UTC()
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 1, Status: "RUNNING", Wake: wake}); err != nil {
		t.Fatal(err)
	}
	steps, err := s.Steps(ctx, arn)
	if err != nil || len(steps) != 2 || !steps[0].Wake.IsZero() || !steps[1].Wake.Equal(wake) {
		t.Fatalf("steps after migration: %+v %v", steps, err)
	}
}

// TestBatchedSteps checks that the steps of one batch that leave their
// executions running, held by the writer and inserted several rows a
// statement (150 of them: statements of 64, 64, 16, 4 and 2 rows), are
// stored field for field beside steps that end or change an execution and
// new executions, all in one transaction.
func TestBatchedSteps(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	const n = 150
	arns := make([]string, n)
	for i := range arns {
		arns[i] = newExec(t, s, fmt.Sprint(i))
	}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	want := make([]*store.Step, 0, n+2)
	for i, arn := range arns {
		st := &store.Step{ExecutionARN: arn, Seq: 1, At: at.Add(time.Duration(i) * time.Millisecond), Status: "RUNNING"}
		switch i % 5 {
		case 0: // no input, no events
		case 1:
			st.Input = []byte(fmt.Sprintf(`{"v":1,"kind":"TaskDone","id":%d}`, i))
			st.Wake = at.Add(time.Hour + time.Duration(i))
		case 4:
			st.Status, st.Output, st.Stopped = "SUCCEEDED", fmt.Sprintf(`{"i":%d}`, i), at.Add(time.Second)
			fallthrough
		default:
			st.Input = []byte(fmt.Sprintf(`{"i":%d}`, i))
			for j := range i%3 + 1 {
				st.Events = append(st.Events, store.Event{ID: int64(2 + j), Type: fmt.Sprintf("T%d", j), JSON: []byte(fmt.Sprintf(`{"e":"%d.%d"}`, i, j))})
			}
		}
		want = append(want, st)
	}
	release := hold(t, s)
	before := s.commits.Load()
	var errs []chan error
	for _, st := range want {
		c := make(chan error, 1)
		go func() { c <- s.AppendStep(ctx, st) }()
		errs = append(errs, c)
	}
	fresh := &store.Execution{ARN: "arn:aws:states:us-east-1:1:execution:m:fresh", Name: "fresh", StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
	created := make(chan error, 1)
	go func() {
		created <- s.CreateExecution(ctx, fresh, &store.Step{ExecutionARN: fresh.ARN, Status: "RUNNING", At: at,
			Events: []store.Event{{ID: 1, Type: "ExecutionStarted", JSON: []byte(`{}`)}}})
	}()
	waitQueued(t, s, n+1)
	release()
	for i, c := range append(errs, created) {
		if err := <-c; err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if got := s.commits.Load() - before; got != 2 {
		t.Errorf("%d transactions, want 2 (the held one and the batch)", got)
	}
	for i, w := range want {
		steps, err := s.Steps(ctx, w.ExecutionARN)
		if err != nil || len(steps) != 2 {
			t.Fatalf("execution %d: %d steps, %v", i, len(steps), err)
		}
		g := steps[1]
		if g.Seq != 1 || !g.At.Equal(w.At) || string(g.Input) != string(w.Input) || (g.Input == nil) != (w.Input == nil) ||
			!g.Wake.Equal(w.Wake) || g.Status != w.Status || g.Output != w.Output || !g.Stopped.Equal(w.Stopped) ||
			fmt.Sprint(g.Events) != fmt.Sprint(w.Events) {
			t.Errorf("execution %d: step %+v, want %+v", i, g, w)
		}
		e, err := s.GetExecution(ctx, w.ExecutionARN)
		if err != nil || e.Status != w.Status || e.Output != w.Output {
			t.Errorf("execution %d: %+v %v, want status %s", i, e, err, w.Status)
		}
		// The next step goes after the batched one.
		if err := s.AppendStep(ctx, &store.Step{ExecutionARN: w.ExecutionARN, Seq: 1, Status: "RUNNING"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("execution %d: step 1 again: %v, want ErrConflict", i, err)
		}
	}
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: fresh.ARN, Seq: 1, Status: "RUNNING"}); err != nil {
		t.Errorf("step 1 of the execution created in the batch: %v", err)
	}
	if evs, err := s.Events(ctx, fresh.ARN, 0, 10, false); err != nil || len(evs) != 1 || evs[0].Type != "ExecutionStarted" {
		t.Errorf("events of the execution created in the batch: %v %v", evs, err)
	}
}

// TestBatchedStepFails checks that a batched insert of steps that fails (a
// step the writer's cache wrongly took for the next one, which the
// database refuses) rolls its batch back and that the batch's requests
// are then committed or refused one by one.
func TestBatchedStepFails(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	stale, other := newExec(t, s, "stale"), newExec(t, s, "other")
	if err := <-appendAsync(s, stale, 1); err != nil {
		t.Fatal(err)
	}
	// Make the cache believe step 1 of stale is still to come.
	if err := s.write(ctx, func(*sql.Tx) error {
		s.cache[stale].next = 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release := hold(t, s)
	dup := appendAsync(s, stale, 1)
	waitQueued(t, s, 1)
	ok := appendAsync(s, other, 1)
	waitQueued(t, s, 2)
	before := s.commits.Load()
	release()
	if err := <-ok; err != nil {
		t.Errorf("the other step: %v", err)
	}
	if err := <-dup; !errors.Is(err, store.ErrConflict) {
		t.Errorf("step 1 again: %v, want ErrConflict", err)
	}
	// The held request's, then the replay's (the refused request commits
	// nothing but its empty transaction).
	if got := s.commits.Load() - before; got != 3 {
		t.Errorf("%d transactions, want 3", got)
	}
	for _, a := range []string{stale, other} {
		if steps, err := s.Steps(ctx, a); err != nil || len(steps) != 2 {
			t.Errorf("%s: %d steps, %v", a, len(steps), err)
		}
		if err := <-appendAsync(s, a, 2); err != nil {
			t.Errorf("%s: step 2: %v", a, err)
		}
	}
}
