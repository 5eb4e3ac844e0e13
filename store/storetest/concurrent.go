package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stepd/stepd/store"
)

// concurrentMixed sends, from many goroutines at once, requests that fail
// (steps out of order, duplicate creations) among requests that succeed:
// a failing request must fail alone.
func concurrentMixed(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	const execs, stepsEach, dups = 16, 8, 8
	var wg sync.WaitGroup
	errs := make(chan error, execs+2*dups)
	for i := range execs {
		wg.Go(func() {
			e := exec("mix", fmt.Sprintf("x%d", i), i)
			if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
				errs <- err
				return
			}
			for k := int64(1); k <= stepsEach; k++ {
				if err := s.AppendStep(ctx, step(e.ARN, k+1, k+1, 1, "RUNNING")); err == nil {
					errs <- fmt.Errorf("%s: step %d accepted before step %d", e.Name, k+1, k)
					return
				}
				if err := s.AppendStep(ctx, step(e.ARN, k, k+1, 1, "RUNNING")); err != nil {
					errs <- fmt.Errorf("%s: step %d: %w", e.Name, k, err)
					return
				}
			}
		})
	}
	var created, createdSM sync.Map
	for i := range dups {
		wg.Go(func() {
			e := exec("mix", "dup", 100+i)
			err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING"))
			if err == nil {
				created.Store(i, true)
			} else if !errors.Is(err, store.ErrExists) {
				errs <- fmt.Errorf("duplicate execution: %w", err)
			}
		})
		wg.Go(func() {
			err := s.CreateStateMachine(ctx, sm("mix"))
			if err == nil {
				createdSM.Store(i, true)
			} else if !errors.Is(err, store.ErrExists) {
				errs <- fmt.Errorf("duplicate state machine: %w", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	count := func(m *sync.Map) int {
		n := 0
		m.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := count(&created); n != 1 {
		t.Errorf("%d concurrent creations of one execution succeeded, want 1", n)
	}
	if n := count(&createdSM); n != 1 {
		t.Errorf("%d concurrent creations of one state machine succeeded, want 1", n)
	}
	for i := range execs {
		steps, err := s.Steps(ctx, exec("mix", fmt.Sprintf("x%d", i), i).ARN)
		if err != nil || len(steps) != stepsEach+1 {
			t.Fatalf("execution %d: %d steps, %v", i, len(steps), err)
		}
		for k, st := range steps {
			if st.Seq != int64(k) || len(st.Events) != 1 || st.Events[0].ID != int64(k)+1 {
				t.Errorf("execution %d step %d: %+v", i, k, st)
			}
		}
	}
	if list, _, err := s.ListExecutions(ctx, sm("mix").ARN, "", store.Page{Limit: 1000}); err != nil || len(list) != execs+1 {
		t.Errorf("listed %d executions, want %d: %v", len(list), execs+1, err)
	}
}
