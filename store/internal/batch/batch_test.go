package batch_test

import (
	"context"
	"errors"
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
