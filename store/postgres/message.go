package postgres

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stepd/stepd/store"
)

// channel is the LISTEN channel of a node.
func channel(node string) string { return "stepd_" + node }

// sendInput inserts a message for the owner of a running execution and
// notifies the owner; replyKey, when not 0, asks for a reply for this
// node under that key.
const sendInput = `WITH i AS (
	INSERT INTO inputs (exec_arn, body, reply_to, reply_key) SELECT arn, $2, $3, $4 FROM executions WHERE arn = $1 AND status = 'RUNNING' RETURNING exec_arn)
	SELECT pg_notify('stepd_' || e.owner, '') FROM executions e JOIN i ON e.arn = i.exec_arn`

// Send implements store.Shared: the message is a row of inputs, and a
// notification wakes its owner.
func (s messagePart) Send(ctx context.Context, arn string, msg []byte) error {
	return s.send(ctx, arn, msg, "", 0)
}

func (s messagePart) send(ctx context.Context, arn string, msg []byte, replyTo string, replyKey int64) error {
	rows, err := s.pool.Query(ctx, sendInput, arn, msg, replyTo, replyKey)
	if err != nil {
		return fmt.Errorf("postgres store: send to %s: %w", arn, err)
	}
	defer rows.Close()
	sent := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: send to %s: %w", arn, err)
	}
	if !sent {
		return fmt.Errorf("execution %s is not running: %w", arn, store.ErrNotFound)
	}
	return nil
}

// askEvery is how often Ask looks for its reply without a notification
// (Receive not running, or its connection lost).
const askEvery = time.Second

// sweepReplies: every so many claims (seconds), a node deletes the replies
// nobody took for ten minutes.
const sweepReplies = 300

// Ask implements store.Shared. The message names this node and a random
// key; the owner leaves its reply under the key in replies and notifies
// this node, whose Receive wakes the asker.
func (s messagePart) Ask(ctx context.Context, arn string, msg []byte) ([]byte, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := int64(binary.LittleEndian.Uint64(b[:])>>1) | 1 // positive, never 0
	woken := s.await(key)
	defer s.unawait(key)
	if err := s.send(ctx, arn, msg, s.member.Load().node, key); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-woken:
			woken = s.await(key)
		case <-time.After(askEvery):
		}
		var reply []byte
		err := s.pool.QueryRow(ctx, `DELETE FROM replies WHERE key = $1 RETURNING body`, key).Scan(&reply)
		if err == nil {
			return reply, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("postgres store: the reply from the owner of %s: %w", arn, err)
		}
	}
}

// await returns a channel that is closed when a notification of the
// reply under key arrives.
func (s messagePart) await(key int64) <-chan struct{} {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	ch := make(chan struct{})
	s.replies[key] = ch
	return ch
}

func (s messagePart) unawait(key int64) {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	delete(s.replies, key)
}

// notified wakes the waiters of a notification; it reports whether it is
// a message for this node's executions.
func (s messagePart) notified(n *pgconn.Notification) bool {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	if n.Channel == tasksChannel {
		if ch, ok := s.offered[n.Payload]; ok {
			close(ch)
			delete(s.offered, n.Payload)
		}
		return false
	}
	if k, ok := strings.CutPrefix(n.Payload, "r"); ok {
		key, _ := strconv.ParseInt(k, 10, 64)
		if ch, ok := s.replies[key]; ok {
			close(ch)
			delete(s.replies, key)
		}
		return false
	}
	return true
}

// receiveEvery is how often Receive looks for messages without a
// notification: for those sent to an execution before this node claimed
// it, and those fn failed.
const receiveEvery = time.Second

// Receive implements store.Shared. It listens on the node's channel and,
// on each notification (or every receiveEvery), takes the messages of the
// executions it owns in one transaction, locked so that no other
// receiver takes them, and deletes those fn has handled.
func (s messagePart) Receive(ctx context.Context, fn func(ctx context.Context, arn string, msg []byte) ([]byte, error)) error {
	// Close ends it too, so that its connection goes back to the pool
	// before the pool closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	// It receives for the current membership: once its lease is lost,
	// Receive returns errFenced, and the node receives again after it
	// rejoins.
	m := s.member.Load()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres store: receive: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel(m.node)}.Sanitize()+`; LISTEN `+tasksChannel); err != nil {
		return fmt.Errorf("postgres store: receive: %w", err)
	}
	defer func() {
		// The connection goes back to the pool: stop listening.
		unlisten, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _ = conn.Exec(unlisten, `UNLISTEN *`)
	}()
	for {
		select {
		case <-m.lost:
			return errFenced
		default:
		}
		more, err := s.receiveSome(ctx, m, fn)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errFenced) {
			return err
		}
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(receiveEvery):
			}
			continue
		}
		if more {
			continue
		}
		// Wait for a message's notification (the others wake askers and
		// takers), or look again after receiveEvery.
		wait, cancel := context.WithTimeout(ctx, receiveEvery)
		for {
			n, err := conn.Conn().WaitForNotification(wait)
			if err == nil && !s.notified(n) {
				continue
			}
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("postgres store: receive: %w", err)
			}
			break
		}
	}
}

// receiveSome hands up to 100 messages to fn and deletes those it
// handled; more reports that there may be others.
func (s messagePart) receiveSome(ctx context.Context, m *membership, fn func(ctx context.Context, arn string, msg []byte) ([]byte, error)) (more bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	// As a writer's, the transaction holds the node's row: a node that
	// lost its lease receives nothing more.
	if err := holdOrLose(ctx, tx, m); err != nil {
		return false, err
	}
	rows, err := tx.Query(ctx, `SELECT i.id, i.exec_arn, i.body, i.reply_to, i.reply_key FROM inputs i JOIN executions e ON e.arn = i.exec_arn
		WHERE e.owner = $1 ORDER BY i.id LIMIT 100 FOR UPDATE OF i SKIP LOCKED`, m.node)
	if err != nil {
		return false, err
	}
	type message struct {
		id       int64
		arn      string
		body     []byte
		replyTo  string
		replyKey int64
	}
	msgs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (message, error) {
		var m message
		err := row.Scan(&m.id, &m.arn, &m.body, &m.replyTo, &m.replyKey)
		return m, err
	})
	if err != nil || len(msgs) == 0 {
		return false, err
	}
	var done []int64
	var askers []string
	var keys []int64
	var replies [][]byte
	failed := map[string]bool{} // an execution whose message failed keeps the later ones too
	for _, m := range msgs {
		if failed[m.arn] {
			continue
		}
		reply, err := fn(ctx, m.arn, m.body)
		if err != nil {
			failed[m.arn] = true
			continue
		}
		done = append(done, m.id)
		if m.replyTo != "" {
			askers, keys, replies = append(askers, m.replyTo), append(keys, m.replyKey), append(replies, append([]byte{}, reply...))
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM inputs WHERE id = ANY($1)`, done); err != nil {
		return false, err
	}
	if len(keys) > 0 {
		// The replies, and notifications (sent at the commit) that wake
		// their askers.
		if _, err := tx.Exec(ctx, `WITH r AS (INSERT INTO replies (key, body) SELECT * FROM unnest($1::int8[], $2::bytea[]) ON CONFLICT DO NOTHING)
			SELECT pg_notify('stepd_' || a.node, 'r' || a.key) FROM unnest($3::text[], $1::int8[]) AS a(node, key)`, keys, replies, askers); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	return len(msgs) == 100 && len(failed) == 0, nil
}
