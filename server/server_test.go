package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/postgres/pgtest"
)

// start starts a server on a port of the kernel's choosing, stopped when
// the test ends, and returns it with its log.
func start(t *testing.T, c Config) (*Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	c.Addr, c.Log, c.TimeScale = "127.0.0.1:0", slog.New(slog.NewTextHandler(logs, nil)), 1
	s, err := Start(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, s) })
	return s, logs
}

// stop shuts s down.
func stop(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// call sends one AWS JSON 1.0 request of the Step Functions API to s and
// decodes its answer, failing the test unless it is a 200.
func call(t *testing.T, s *Server, op string, in any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, "http://"+s.Addr().String()+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", op, res.StatusCode, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v: %s", op, err, data)
	}
	return out
}

// runToEnd creates a state machine that waits a moment and adds one, runs
// it and returns its DescribeExecution once it has ended.
func runToEnd(t *testing.T, s *Server) map[string]any {
	t.Helper()
	sm := call(t, s, "CreateStateMachine", map[string]any{"name": "add", "roleArn": "arn:aws:iam::123456789012:role/r",
		"definition": `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"Next":"P"},"P":{"Type":"Pass","Parameters":{"n.$":"States.MathAdd($.n, 1)"},"End":true}}}`})
	ex := call(t, s, "StartExecution", map[string]any{"stateMachineArn": sm["stateMachineArn"], "input": `{"n":41}`})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if d := call(t, s, "DescribeExecution", map[string]any{"executionArn": ex["executionArn"]}); d["status"] != "RUNNING" {
			return d
		}
	}
	t.Fatal("the execution did not end")
	return nil
}

// TestSQLite runs an execution to its end on a server over a SQLite file,
// then checks that a server started again on the same directory still
// has it, and that Wait returns once its context ends.
func TestSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, logs := start(t, Config{Data: dir})
	if d := runToEnd(t, s); d["status"] != "SUCCEEDED" || d["output"] != `{"n":42}` {
		t.Fatalf("%v", d)
	}
	if code, body := getJSON(t, "http://"+s.Addr().String()+"/readyz"); code != 200 || body["store"] != "ok" {
		t.Errorf("/readyz: %d %v", code, body)
	}
	stop(t, s)
	if !strings.Contains(logs.String(), "store=\"SQLite in "+dir+"\"") || !strings.Contains(logs.String(), "stopped; running executions resume on the next start") {
		t.Errorf("log:\n%s", logs)
	}

	ctx, cancel := context.WithCancel(t.Context())
	again, _ := start(t, Config{Data: dir})
	list := call(t, again, "ListExecutions", map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:add"})
	if execs, _ := list["executions"].([]any); len(execs) != 1 {
		t.Errorf("after a restart: %v", list)
	}
	cancel()
	if err := again.Wait(ctx); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestPostgres runs an execution to its end on a server over a PostgreSQL
// schema of its own (a store shared by several nodes).
func TestPostgres(t *testing.T) {
	t.Parallel()
	s, logs := start(t, Config{StoreURL: pgtest.DSN(t)})
	if d := runToEnd(t, s); d["status"] != "SUCCEEDED" || d["output"] != `{"n":42}` {
		t.Fatalf("%v", d)
	}
	stop(t, s)
	if !strings.Contains(logs.String(), "store=\"PostgreSQL ") || !strings.Contains(logs.String(), "stopped; the other nodes take this node's running executions over") {
		t.Errorf("log:\n%s", logs)
	}
}

// TestStartErrors: a Config that cannot start says why, and leaves
// nothing behind (the store closed, the port free).
func TestStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sm := func(name, def string) []StateMachine {
		return []StateMachine{{Source: name + ".json", Input: service.StateMachineInput{Name: name, Type: "STANDARD", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def}}}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{StoreURL: "mysql://x"}, "--store: want a postgres:// URL"},
		{Config{Data: dir, TimeScale: -1}, "--time-scale"},
		{Config{Data: dir, TimeScale: 1, Webhooks: []string{"ftp://x"}}, "--events-webhook"},
		{Config{Data: dir, TimeScale: 1, StateMachines: sm("bad", `{"StartAt":"X","States":{}}`)}, "bad.json: "},
		{Config{Data: dir, TimeScale: 1, Addr: "127.0.0.1:-1"}, "listen tcp"},
	} {
		c.cfg.Log = slog.New(slog.DiscardHandler)
		if c.cfg.Addr == "" {
			c.cfg.Addr = "127.0.0.1:0"
		}
		s, err := Start(t.Context(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, new(*ResumeError)) {
			if s != nil {
				stop(t, s)
			}
			t.Errorf("%+v: %v, want an error with %q", c.cfg, err, c.want)
		}
	}
	// The SQLite file is free again: a server starts on it.
	s, _ := start(t, Config{Data: dir})
	if d := runToEnd(t, s); d["status"] != "SUCCEEDED" {
		t.Errorf("%v", d)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
