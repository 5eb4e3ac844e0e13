package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsAddr: with --access-keys and --metrics-addr, GET
// /metrics answers unsigned on the metrics listener (behind the Host
// check), and the API's listener answers it no more; /healthz stays on
// the API's listener, unsigned.
func TestServeMetricsAddr(t *testing.T) {
	t.Parallel()
	stdout, logs := &lockedBuffer{}, &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", "", "--access-keys", "k:secret", "--metrics-addr", "127.0.0.1:0"},
			strings.NewReader(""), stdout, logs)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	var api, metrics string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out := stdout.String()
		if _, rest, ok := strings.Cut(out, "listening on "); ok {
			api, _, _ = strings.Cut(rest, "\n")
			_, rest, _ = strings.Cut(out, "metrics at ")
			metrics, _, _ = strings.Cut(rest, "\n")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stepd serve did not start: %s %s", out, logs)
		}
	}
	if !strings.HasSuffix(metrics, "/metrics") {
		t.Fatalf("stepd serve --metrics-addr printed no metrics address: %q", stdout.String())
	}
	get := func(url, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(metrics, ""); code != 200 || !strings.Contains(body, "stepd_") {
		t.Errorf("GET %s: %d %.200s, want 200 with stepd's metrics", metrics, code, body)
	}
	if code, _ := get(metrics, "rebound.example"); code != 403 {
		t.Errorf("GET %s for Host rebound.example: %d, want 403", metrics, code)
	}
	if code, body := get(api+"/metrics", ""); code != 404 {
		t.Errorf("GET /metrics on the API's listener: %d %s, want 404", code, body)
	}
	if code, body := get(api+"/healthz", ""); code != 200 {
		t.Errorf("GET /healthz: %d %s, want 200", code, body)
	}
}
