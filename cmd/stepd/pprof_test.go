package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServePprof: --pprof-addr serves Go's profiles on a listener of its
// own, and an address it cannot listen on is a usage error.
func TestServePprof(t *testing.T) {
	t.Parallel()
	stdout, logs := &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", "", "--pprof-addr", "127.0.0.1:0"}, strings.NewReader(""), stdout, logs)
	}()
	defer func() { cancel(); <-done }()
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stdout.String(), "pprof on "); ok {
			url, _, _ = strings.Cut(rest, "\n")
		} else if time.Now().After(deadline) {
			t.Fatalf("no pprof address printed: %s %s", stdout, logs)
		}
	}
	resp, err := http.Get(url + "cmdline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) == 0 {
		t.Errorf("GET %scmdline: %d %q", url, resp.StatusCode, b)
	}

	var out, errs strings.Builder
	if code := Main(context.Background(), []string{"serve", "--data", "", "--pprof-addr", "127.0.0.1:-1"}, strings.NewReader(""), &out, &errs); code != exitUsage ||
		!strings.Contains(errs.String(), "--pprof-addr") {
		t.Errorf("a bad --pprof-addr: exit %d, %q", code, errs.String())
	}
}
