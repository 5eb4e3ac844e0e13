package lsp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stepd/stepd/lsp"
	"github.com/stepd/stepd/lsp/lsptest"
)

// TestMatrix drives the server through OS pipes, as an editor does
// through the stdio of stepd lsp.
func TestMatrix(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := lsp.NewServer(lsp.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
		done <- err
	}()
	c := lsptest.New(t, outR, inW)
	lsptest.Matrix(t, c)
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestServeEnds: the server ends when its context does, even while it
// waits for input (stepd lsp's SIGTERM), and when the client exits
// without shutdown, with the protocol's error.
func TestServeEnds(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lsp.NewServer(lsp.Options{}).Serve(ctx, inR, io.Discard) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve after cancel: %v", err)
	}

	exit := `{"jsonrpc":"2.0","method":"exit"}`
	in := strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(exit), exit))
	if err := lsp.NewServer(lsp.Options{}).Serve(context.Background(), in, io.Discard); !errors.Is(err, lsp.ErrExitWithoutShutdown) {
		t.Errorf("exit without shutdown: %v", err)
	}
	in = strings.NewReader("Content-Length: 5\r\n\r\n{oops")
	var out strings.Builder
	if err := lsp.NewServer(lsp.Options{}).Serve(context.Background(), in, &out); err != nil || !strings.Contains(out.String(), `"code":-32700`) {
		t.Errorf("a body that is not JSON: %v, answered %q", err, out.String())
	}
}
