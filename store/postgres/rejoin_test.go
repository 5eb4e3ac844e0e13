package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
)

// TestRejoin: a node whose row is removed (as a claimer removes a lapsed
// lease's) loses its lease, can commit nothing under it, rejoins under a
// new id, claims its own executions back and commits again; Rejoin
// refuses while the lease holds.
func TestRejoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := pgtest.DSN(t)
	a, err := postgres.OpenOptions(ctx, dsn, postgres.Options{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Rejoin(ctx); err == nil {
		t.Fatal("Rejoin while the lease holds")
	}
	arn := "arn:aws:states:us-east-1:1:execution:m:e"
	if err := a.CreateExecution(ctx, &store.Execution{ARN: arn, Name: "e", StateMachineARN: "sm", Status: "RUNNING"}, &store.Step{ExecutionARN: arn, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	old := a.Node()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM nodes WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	lost := a.Lost()
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("the node did not see its lease lost")
	}
	if err := a.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 1, Status: "RUNNING"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a step under the lost lease: %v, want a refusal", err)
	}
	if err := a.Rejoin(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Node() == old {
		t.Fatal("the node rejoined under its old id")
	}
	select {
	case <-a.Lost():
		t.Fatal("the new lease is lost")
	default:
	}
	claimed, err := a.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 1 || claimed[0].ARN != arn {
		t.Fatalf("claimed %v, want the node's own execution", claimed)
	}
	if err := a.AppendStep(ctx, &store.Step{ExecutionARN: arn, Seq: 1, Status: "RUNNING"}); err != nil {
		t.Fatalf("a step after rejoining: %v", err)
	}
}
