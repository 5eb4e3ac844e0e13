// Package lsptest is a Language Server Protocol client for tests: it
// frames JSON-RPC messages on a server's stdin and stdout, matches
// answers to requests and keeps the diagnostics the server publishes;
// and Matrix, the checks every way of running stepd lsp passes.
//
// It imports no stepd package but lsp (its protocol types), and only
// tests import it.
package lsptest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stepd/stepd/lsp"
)

// Client talks to one server.
type Client struct {
	t    testing.TB
	w    io.Writer
	wmu  sync.Mutex
	mu   sync.Mutex
	cond *sync.Cond
	next int
	// answers by request id
	answers map[int]rpcAnswer
	// diags holds the last publishDiagnostics of each document, and
	// their versions.
	diags    map[string]Published
	readErr  error
	finished bool
}

type rpcAnswer struct {
	Result json.RawMessage
	Error  *RPCError
}

// RPCError is an error answer.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Published is one textDocument/publishDiagnostics.
type Published struct {
	URI         string           `json:"uri"`
	Version     int              `json:"version"`
	Diagnostics []lsp.Diagnostic `json:"diagnostics"`
	Count       int              `json:"-"` // how many were published for the document so far
}

// New starts reading the server's output r; requests go to w.
func New(t testing.TB, r io.Reader, w io.Writer) *Client {
	c := &Client{t: t, w: w, answers: map[int]rpcAnswer{}, diags: map[string]Published{}}
	c.cond = sync.NewCond(&c.mu)
	go c.read(bufio.NewReader(r))
	return c
}

func (c *Client) read(r *bufio.Reader) {
	var err error
	defer func() {
		c.mu.Lock()
		c.readErr, c.finished = err, true
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	for {
		var body []byte
		body, err = lsp.ReadMessage(r)
		if err != nil {
			return
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if err = json.Unmarshal(body, &m); err != nil {
			err = fmt.Errorf("the server sent a message that is not JSON: %w: %s", err, body)
			return
		}
		c.mu.Lock()
		switch {
		case m.Method == "textDocument/publishDiagnostics":
			var p Published
			if err = json.Unmarshal(m.Params, &p); err != nil {
				c.mu.Unlock()
				return
			}
			p.Count = c.diags[p.URI].Count + 1
			c.diags[p.URI] = p
		case m.Method == "" && m.ID != nil:
			c.answers[*m.ID] = rpcAnswer{Result: m.Result, Error: m.Error}
		}
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

func (c *Client) send(v any) {
	body, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// Call sends a request and waits for its answer; an error answer is
// returned as *RPCError.
func (c *Client) Call(method string, params, result any) error {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if a, ok := c.answers[id]; ok {
			delete(c.answers, id)
			if a.Error != nil {
				return a.Error
			}
			if result != nil {
				if err := json.Unmarshal(a.Result, result); err != nil {
					c.t.Fatalf("%s: the answer %s: %v", method, a.Result, err)
				}
			}
			return nil
		}
		if c.finished {
			c.t.Fatalf("%s: the server's output ended before the answer: %v", method, c.readErr)
		}
		c.cond.Wait()
	}
}

// MustCall is Call that fails the test on an error answer.
func (c *Client) MustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.Call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Diagnostics waits for the diagnostics of a document's version.
func (c *Client) Diagnostics(uri string, version int) []lsp.Diagnostic {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if p, ok := c.diags[uri]; ok && p.Version == version {
			return p.Diagnostics
		}
		if c.finished {
			c.t.Fatalf("the server's output ended before the diagnostics of %s version %d: %v", uri, version, c.readErr)
		}
		c.cond.Wait()
	}
}

// Open sends didOpen and returns the diagnostics of the document.
func (c *Client) Open(uri, text string) []lsp.Diagnostic {
	c.t.Helper()
	c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "json", "version": 1, "text": text}})
	return c.Diagnostics(uri, 1)
}

// Change sends the whole new text as version and returns its
// diagnostics.
func (c *Client) Change(uri string, version int, text string) []lsp.Diagnostic {
	c.t.Helper()
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"text": text}}})
	return c.Diagnostics(uri, version)
}

// Wait waits for the server's output to end (after exit) and returns
// why it ended: nil at the end of the output.
func (c *Client) Wait() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.finished {
		c.cond.Wait()
	}
	if errors.Is(c.readErr, io.EOF) {
		return nil
	}
	return c.readErr
}
