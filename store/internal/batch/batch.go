// Package batch holds what the durable stores' group commit shares: the
// hand-off of a write request to the store's writer goroutine (Submit), and
// that goroutine's loop (Run), which gathers the requests waiting and
// commits them in one transaction.
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

// Run is a writer goroutine's loop: it waits for a request on reqs, takes
// every other request waiting (up to max in all) and hands them to commit
// as one batch, until done is closed; it then commits, in batches, what is
// still queued and returns.
func Run[R any](reqs <-chan R, done <-chan struct{}, max int, commit func(batch []R)) {
	for {
		var batch []R
		select {
		case r := <-reqs:
			batch = append(batch, r)
		case <-done:
			for {
				batch = more(reqs, nil, max)
				if len(batch) == 0 {
					return
				}
				commit(batch)
			}
		}
		commit(more(reqs, batch, max))
	}
}

// more adds the requests waiting on reqs to batch, up to max.
func more[R any](reqs <-chan R, batch []R, max int) []R {
	for len(batch) < max {
		select {
		case r := <-reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}
