package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// BenchmarkReads measures the reads of the API (GetExecutionHistory's
// first page, DescribeExecution, ListExecutions' first page) on 1000
// executions of 3 steps each, while a writer commits steps of another
// execution, as under a mixed load: SQLite drops a reader connection's page
// cache whenever the database changed since its last read transaction, so
// what a read costs depends on how many transactions it opens.
func BenchmarkReads(b *testing.B) {
	s := open(b, b.TempDir())
	defer s.Close()
	ctx := context.Background()
	const sm = "arn:aws:states:us-east-1:1:stateMachine:b"
	arn := func(i int) string { return fmt.Sprintf("arn:aws:states:us-east-1:1:execution:b:e%d", i) }
	step := func(a string, seq int64) *store.Step {
		st := &store.Step{ExecutionARN: a, Seq: seq, At: time.Unix(1, 0), Input: []byte(`{"kind":1,"id":1}`), Status: "RUNNING"}
		for j := range 3 {
			id := 3*seq + int64(j) + 1
			st.Events = append(st.Events, store.Event{ID: id, Type: "PassStateEntered", JSON: []byte(`{"type":"PassStateEntered","details":{"input":"{}"}}`)})
		}
		return st
	}
	for i := range 1001 {
		e := &store.Execution{ARN: arn(i), Name: fmt.Sprint(i), StateMachineARN: sm, StateMachineName: "b", Type: "STANDARD", Status: "RUNNING", Input: "{}", Started: time.Unix(1, 0)}
		if err := s.CreateExecution(ctx, e, step(arn(i), 0)); err != nil {
			b.Fatal(err)
		}
		for k := int64(1); k < 3 && i < 1000; k++ {
			if err := s.AppendStep(ctx, step(arn(i), k)); err != nil {
				b.Fatal(err)
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the writer: execution 1000 moves on
		for k := int64(1); ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.AppendStep(ctx, step(arn(1000), k)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	for _, r := range []struct {
		name string
		read func(i int) error
	}{
		{"history", func(i int) error {
			evs, err := s.Events(ctx, arn(i), 0, 1001, false)
			if err == nil && len(evs) != 9 {
				err = fmt.Errorf("%d events, want 9", len(evs))
			}
			return err
		}},
		{"describe", func(i int) error { _, err := s.GetExecution(ctx, arn(i)); return err }},
		{"list", func(int) error {
			l, _, err := s.ListExecutions(ctx, sm, "", store.Page{Limit: 100})
			if err == nil && len(l) != 100 {
				err = fmt.Errorf("%d executions, want 100", len(l))
			}
			return err
		}},
	} {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := r.read(i % 1000); err != nil {
					b.Fatal(err)
				}
				i += 7
			}
		})
	}
}
