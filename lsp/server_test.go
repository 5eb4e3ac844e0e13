package lsp_test

import (
	"context"
	"os"
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
