// Package batch holds what the durable stores' group commit shares: the
// hand-off of a write request to the store's one writer goroutine, which
// commits the requests it has gathered in one transaction.
//
// It imports nothing of stepd's and must not: the durable backends build
// on it.
package batch

import "context"

// Submit queues r for the writer on reqs and waits for the writer's answer
// on answer (a channel with room for one). done is closed when the store
// starts to close (no request is taken after it) and closed once the writer
// has stopped; errClosed is what a request refused for that returns. When
// ctx ends first Submit returns ctx's error, and the write may still
// commit.
func Submit[R any](ctx context.Context, reqs chan<- R, r R, answer <-chan error, done, closed <-chan struct{}, errClosed error) error {
	select {
	case <-done:
		return errClosed
	default:
	}
	select {
	case reqs <- r:
	case <-done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-answer:
		return err
	case <-closed:
		// The writer has stopped; it answered r if it took it.
		select {
		case err := <-answer:
			return err
		default:
			return errClosed
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}
