package batch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stepd/stepd/store/internal/batch"
)

var errClosed = errors.New("closed")

func TestSubmit(t *testing.T) {
	ctx := context.Background()
	errWrite := errors.New("the write failed")

	// The writer takes the request and answers it.
	reqs, answer := make(chan int, 1), make(chan error, 1)
	done, closed := make(chan struct{}), make(chan struct{})
	go func() { <-reqs; answer <- errWrite }()
	if err := batch.Submit(ctx, reqs, 1, answer, done, closed, errClosed); err != errWrite {
		t.Errorf("answered: %v, want the writer's answer", err)
	}

	// The store is closing: nothing is queued.
	reqs = make(chan int, 1)
	shut := make(chan struct{})
	close(shut)
	if err := batch.Submit(ctx, reqs, 2, answer, shut, closed, errClosed); err != errClosed || len(reqs) != 0 {
		t.Errorf("closing: %v, %d queued; want errClosed and none", err, len(reqs))
	}

	// The writer stopped after it took the request, without answering.
	reqs = make(chan int, 1)
	stopped := make(chan struct{})
	go func() { <-reqs; close(stopped) }()
	if err := batch.Submit(ctx, reqs, 3, make(chan error, 1), done, stopped, errClosed); err != errClosed {
		t.Errorf("writer stopped: %v, want errClosed", err)
	}

	// The writer stopped after it answered: its answer wins.
	reqs, answered := make(chan int, 1), make(chan error, 1)
	answered <- nil
	if err := batch.Submit(ctx, reqs, 4, answered, done, stopped, errClosed); err != nil {
		t.Errorf("answered, then stopped: %v, want nil", err)
	}

	// ctx ends while nobody takes the request.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := batch.Submit(cctx, make(chan int), 5, answer, done, closed, errClosed); !errors.Is(err, context.Canceled) {
		t.Errorf("ctx ended: %v, want context.Canceled", err)
	}
}

// TestRun checks that Run commits the requests waiting as one batch, up
// to max, and, once done is closed, what is still queued before it
// returns.
func TestRun(t *testing.T) {
	reqs := make(chan int, 10)
	done := make(chan struct{})
	for i := range 5 {
		reqs <- i
	}
	var batches [][]int
	first := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		batch.Run(reqs, done, 3, func(b []int) {
			batches = append(batches, b)
			if len(batches) == 2 {
				close(first)
			}
		})
	}()
	<-first
	reqs <- 5
	reqs <- 6
	close(done)
	<-ended
	var all []int
	for _, b := range batches {
		if len(b) > 3 {
			t.Errorf("a batch of %d, want at most 3", len(b))
		}
		all = append(all, b...)
	}
	if fmt.Sprint(batches[:2]) != "[[0 1 2] [3 4]]" || fmt.Sprint(all) != "[0 1 2 3 4 5 6]" {
		t.Errorf("batches %v", batches)
	}
}
