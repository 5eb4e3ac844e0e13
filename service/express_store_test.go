package service_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/sqlite"
)

// TestExpressWritesNoStore runs Express executions, synchronous and not,
// on a service over each durable store, as stepd serve runs it, and fails
// if the store wrote anything meanwhile: a transaction of its writer, or
// a row more or less in any table. Express executions live in memory; only
// their state machine is read (and cached for starts).
func TestExpressWritesNoStore(t *testing.T) {
	t.Run("store=sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stepd.db")
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var commits atomic.Int64
		st.ObserveCommits(func(int, time.Duration) { commits.Add(1) })
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows := func() map[string]int64 {
			return countRows(t, func(q string) ([]string, error) { return queryStrings(db, q) }, db.QueryRow,
				`SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'`, `"%s"`)
		}
		svc := service.New(service.Config{Store: st})
		defer svc.Close()
		expressWrites(t, svc, func() int64 { return commits.Load() }, rows)
	})
	t.Run("store=postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		ctx := context.Background()
		rows := func() map[string]int64 {
			return countRows(t, func(q string) ([]string, error) {
				r, err := conn.Query(ctx, q)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(r, pgx.RowTo[string])
			}, func(q string, _ ...any) interface{ Scan(...any) error } { return conn.QueryRow(ctx, q) },
				`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`, `"%s"`)
		}
		svc := service.New(service.Config{Store: st, Shared: st}) // as stepd serve runs it
		defer svc.Close()
		expressWrites(t, svc, st.Commits, rows)
	})
}

// expressWrites runs Express executions on svc and fails if commits or
// rows changed meanwhile.
func expressWrites(t *testing.T, svc *service.Service, commits func() int64, rows func() map[string]int64) {
	ctx := context.Background()
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "fast", RoleARN: "arn:aws:iam::1:role/r", Type: "EXPRESS",
		Definition: `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"ok":true},"ResultPath":"$.r","Next":"B"},"B":{"Type":"Pass","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	// A first start, so that what it may read once (the state machine,
	// the token key) is read before counting.
	if _, err := svc.StartSyncExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: `{}`}); err != nil {
		t.Fatal(err)
	}
	before, rowsBefore := commits(), rows()
	for i := range 20 {
		e, err := svc.StartSyncExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: fmt.Sprintf("sync%d", i), Input: `{"i":1}`})
		if err != nil || e.Status != "SUCCEEDED" {
			t.Fatalf("StartSyncExecution: %v %v", e, err)
		}
		e, err = svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: fmt.Sprintf("async%d", i), Input: `{"i":2}`})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := svc.Wait(ctx, e.ARN); err != nil || d.Status != "SUCCEEDED" {
			t.Fatalf("Wait: %v %v", d, err)
		}
		if _, err := svc.DescribeExecution(ctx, e.ARN); err != nil {
			t.Fatal(err)
		}
	}
	if n := commits() - before; n != 0 {
		t.Errorf("the store's writer committed %d transactions during 40 Express executions, want none", n)
	}
	after := rows()
	for table, n := range after {
		if n != rowsBefore[table] {
			t.Errorf("table %s: %d rows before 40 Express executions, %d after; want no change", table, rowsBefore[table], n)
		}
	}
}

// countRows counts the rows of every table that list names (quoted with
// quote's format).
func countRows[R interface{ Scan(...any) error }](t *testing.T, query func(string) ([]string, error), row func(string, ...any) R, list, quote string) map[string]int64 {
	t.Helper()
	tables, err := query(list)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no tables listed")
	}
	out := map[string]int64{}
	for _, name := range tables {
		var n int64
		if err := row(`SELECT COUNT(*) FROM ` + fmt.Sprintf(quote, name)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	return out
}

// queryStrings returns the first column of q's rows.
func queryStrings(db *sql.DB, q string) ([]string, error) {
	r, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, r.Err()
}
