package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// MaxMessage bounds the body of one message (Content-Length), so a bad
// header cannot make the server allocate without limit.
const MaxMessage = 64 << 20

// maxHeader bounds one header line.
const maxHeader = 4096

// ErrFraming is a message whose header is malformed.
var ErrFraming = errors.New("lsp: malformed message header")

// ReadMessage reads one message in the base protocol's framing: header
// lines ("Name: value", ended by CRLF) up to an empty line, then
// Content-Length bytes of body. Content-Type is accepted and not checked
// (the protocol has only one). At the end of the input it returns io.EOF.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	first := true
	for {
		line, err := readLine(r)
		if err != nil {
			if first && errors.Is(err, io.EOF) && line == "" {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%w: the input ends inside the header", ErrFraming)
			}
			return nil, err
		}
		first = false
		if line == "" {
			break
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not Name: value", ErrFraming, line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: Content-Length %q", ErrFraming, strings.TrimSpace(val))
			}
			if n > MaxMessage {
				return nil, fmt.Errorf("%w: Content-Length %d is over the limit of %d", ErrFraming, n, MaxMessage)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: no Content-Length", ErrFraming)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("lsp: reading a body of %d bytes: %w", length, err)
	}
	return body, nil
}

// readLine reads a header line ended by CRLF (a bare LF is accepted too),
// without its end.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return string(b), err
		}
		if c == '\n' {
			return strings.TrimSuffix(string(b), "\r"), nil
		}
		if len(b) >= maxHeader {
			return "", fmt.Errorf("%w: a header line longer than %d bytes", ErrFraming, maxHeader)
		}
		b = append(b, c)
	}
}

// writer sends messages; one at a time.
type writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *writer) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("lsp: encoding a message: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := fmt.Fprintf(w.w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err = w.w.Write(body)
	return err
}

// message is a JSON-RPC 2.0 request, notification or response.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// response is what the server answers a request with: exactly one of
// Result and Error (a null Result is sent as null).
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
	Error   *rpcError       `json:"error,omitempty"`
}

type errResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// JSON-RPC and LSP error codes.
const (
	codeParseError           = -32700
	codeInvalidRequest       = -32600
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeInternalError        = -32603
	codeServerNotInitialized = -32002
	codeRequestFailed        = -32803
)
