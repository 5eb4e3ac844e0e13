package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/store/storetest"
)

func open(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.DSN(t)) })
}

func TestDurable(t *testing.T) {
	pgtest.Server(t)
	var mu sync.Mutex
	dsns := map[string]string{} // a directory of the suite → its schema
	storetest.RunDurable(t, func(t *testing.T, dir string) store.Store {
		mu.Lock()
		defer mu.Unlock()
		if dsns[dir] == "" {
			dsns[dir] = pgtest.DSN(t)
		}
		return open(t, dsns[dir])
	})
}

// BenchmarkAppendStep commits steps of 3 small events, each goroutine to
// its own execution, on PostgreSQL and, in the same run, on SQLite, and
// reports steps per second, transactions per second, steps per
// transaction, and the disk's raw fsync rate measured in the same run,
// with the ratio of steps/s to it.
func BenchmarkAppendStep(b *testing.B) {
	fsyncs := storetest.FsyncRate(b, 200)
	for _, conc := range []int{1, 100, 1000} {
		for _, kind := range []string{"postgres", "sqlite"} {
			b.Run(fmt.Sprintf("goroutines=%d/store=%s", conc, kind), func(b *testing.B) {
				var s store.Store
				var commits func() int64
				if kind == "postgres" {
					p := open(b, pgtest.DSN(b))
					s, commits = p, p.Commits
				} else {
					q, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "stepd.db"))
					if err != nil {
						b.Fatal(err)
					}
					s, commits = q, func() int64 { return 0 }
				}
				defer s.Close()
				benchAppendStep(b, s, conc, commits, fsyncs)
			})
		}
	}
}

func benchAppendStep(b *testing.B, s store.Store, conc int, commits func() int64, fsyncs float64) {
	ctx := context.Background()
	arns := make([]string, conc)
	for i := range arns {
		arns[i] = fmt.Sprintf("arn:aws:states:us-east-1:1:execution:b:e%d", i)
		e := &store.Execution{ARN: arns[i], Name: fmt.Sprint(i), StateMachineARN: "sm", Status: "RUNNING", Input: "{}"}
		if err := s.CreateExecution(ctx, e, &store.Step{ExecutionARN: arns[i], Status: "RUNNING"}); err != nil {
			b.Fatal(err)
		}
	}
	per := (b.N + conc - 1) / conc
	before := commits()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			for k := 1; k <= per; k++ {
				st := &store.Step{ExecutionARN: arns[i], Seq: int64(k), At: start, Input: []byte(`{"kind":1,"id":1}`), Status: "RUNNING"}
				for j := range 3 {
					id := int64(3*(k-1) + j + 1)
					st.Events = append(st.Events, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(`{"type":"PassStateEntered","details":{"input":"{}"}}`)})
				}
				if err := s.AppendStep(ctx, st); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	b.StopTimer()
	steps := float64(per * conc)
	b.ReportMetric(steps/secs, "steps/s")
	if txs := float64(commits() - before); txs > 0 {
		b.ReportMetric(txs/secs, "txs/s")
		b.ReportMetric(steps/txs, "steps/tx")
	}
	b.ReportMetric(fsyncs, "disk-fsyncs/s")
	b.ReportMetric(steps/secs/fsyncs, "steps/disk-fsync")
}

func TestShared(t *testing.T) {
	pgtest.Server(t)
	storetest.RunShared(t, func(t *testing.T) (func() store.Shared, func(store.Shared)) {
		dsn := pgtest.DSN(t)
		node := func() store.Shared {
			s, err := postgres.OpenOptions(context.Background(), dsn, postgres.Options{Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		expire := func(s store.Shared) {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), `UPDATE nodes SET lease_until = now() - interval '1 second' WHERE id = $1`, s.(*postgres.Store).Node()); err != nil {
				t.Fatal(err)
			}
		}
		return node, expire
	})
}

// TestLeaseRenewed keeps a node with a one-second lease for three seconds:
// it renews its lease, so it can still commit, and keeps its executions
// from another node's claims.
func TestLeaseRenewed(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, err := postgres.OpenOptions(ctx, dsn, postgres.Options{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := open(t, dsn)
	defer b.Close()
	arn := "arn:aws:states:us-east-1:1:execution:m:e"
	if err := a.CreateExecution(ctx, &store.Execution{ARN: arn, Name: "e", StateMachineARN: "sm", Status: "RUNNING"}, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 3; seq++ {
		time.Sleep(time.Second)
		if claimed, err := b.Claim(ctx); err != nil || len(claimed) != 0 {
			t.Fatalf("after %d s, another node claimed %d executions: %v", seq, len(claimed), err)
		}
		if err := a.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: seq, Status: "RUNNING"}); err != nil {
			t.Fatalf("after %d s: %v", seq, err)
		}
	}
	select {
	case <-a.Lost():
		t.Fatal("the node lost its lease")
	default:
	}
}

// TestStepLanded writes a step again, as a writer does whose commit
// landed but whose answer was lost with its connection: the same step, to
// the byte, is accepted; another step at its Seq is still a conflict.
func TestStepLanded(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.DSN(t))
	defer s.Close()
	arn := "arn:aws:states:us-east-1:1:execution:m:landed"
	if err := s.CreateExecution(ctx, &store.Execution{ARN: arn, Name: "landed", StateMachineARN: "sm", Status: "RUNNING"}, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 5)
	step := func(typ string) *store.Step {
		return &store.Step{ExecutionARN: arn, Seq: 1, At: at, Status: "RUNNING",
			Events: []store.Event{{ID: 1, Type: typ, JSON: []byte(`{"a":1}`)}}}
	}
	if err := s.AppendStep(ctx, step("PassStateEntered")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, step("PassStateEntered")); err != nil {
		t.Fatalf("the same step again: %v, want it accepted", err)
	}
	if err := s.AppendStep(ctx, step("PassStateExited")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another step at the same Seq: %v, want ErrConflict", err)
	}
	if err := s.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 2, At: at, Status: "RUNNING"}); err != nil {
		t.Fatalf("the next step: %v", err)
	}
}
