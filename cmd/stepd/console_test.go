package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsoleBrowser runs console/web/e2e/e2e.mjs in headless Chromium
// against two real stepd serve instances, one open and one that requires
// SigV4. It needs node, chromium and the console's npm packages (npm ci in
// console/web); without them it is skipped, unless CI=true, where that is a
// failure (.ci/run installs them). Screenshots go to $STEPD_ARTIFACTS, or
// console/web/e2e/artifacts.
func TestConsoleBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	web, err := filepath.Abs(filepath.Join("..", "..", "console", "web"))
	if err != nil {
		t.Fatal(err)
	}
	chromium := os.Getenv("STEPD_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install chromium)")
	}
	if _, err := os.Stat(filepath.Join(web, "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "playwright-core (npm ci in console/web)")
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the browser test needs %s", strings.Join(missing, ", "))
		}
		t.Skipf("the browser test needs %s", strings.Join(missing, ", "))
	}
	artifacts := os.Getenv("STEPD_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(web, "e2e", "artifacts")
	}

	// Read the script here so that go test's cache sees it: a changed
	// script must run again.
	if _, err := os.ReadFile(filepath.Join(web, "e2e", "e2e.mjs")); err != nil {
		t.Fatal(err)
	}
	open := startInProcess(t, "--data", filepath.Join(t.TempDir(), "data"))
	signed := startInProcess(t, "--data", "", "--access-keys", "console:s3cret-key")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(web, "e2e", "e2e.mjs"), open, artifacts, signed, "console", "s3cret-key")
	cmd.Env = append(os.Environ(), "STEPD_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("node e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser test failed: %v (screenshots in %s)", err, artifacts)
	}
	t.Logf("screenshots in %s", artifacts)
}

// startInProcess runs stepd serve with args on a free loopback port until
// the test ends, and returns its URL once it answers.
func startInProcess(t *testing.T, args ...string) string {
	t.Helper()
	// freeAddr's port may be taken by another test before serve listens
	// on it: serve then exits at once, and a fresh port is tried.
	for try := 1; ; try++ {
		url, code, ok := tryStartInProcess(t, args)
		if ok {
			return url
		}
		if try == 3 {
			t.Fatalf("stepd serve exited with %d, three times", code)
		}
	}
}

// tryStartInProcess runs stepd serve in process on a free port until the
// test ends; ok is false (with its exit code) when it exits before
// answering.
func tryStartInProcess(t *testing.T, args []string) (url string, code int, ok bool) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve", "--addr", addr}, args...), strings.NewReader(""), io.Discard, io.Discard)
	}()
	url = "http://" + addr + "/"
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			break
		}
		select {
		case code := <-done:
			cancel()
			return "", code, false
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("stepd serve did not answer at %s: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("stepd serve did not stop")
		}
	})
	return url, 0, true
}

// TestServeConsoleRoutes checks that GET / serves the console, open even
// when the API requires signatures, while POST / stays the API.
func TestServeConsoleRoutes(t *testing.T) {
	t.Parallel()
	url := startInProcess(t, "--data", "", "--access-keys", "k:s")
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "stepd console") {
		t.Errorf("GET /: %d %.80s", res.StatusCode, b)
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 403 || !strings.Contains(string(b), "MissingAuthenticationTokenException") {
		t.Errorf("unsigned POST /: %d %s", res.StatusCode, b)
	}
	req, _ = http.NewRequest("PUT", url, nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(b), "UnknownOperationException") {
		t.Errorf("PUT /: %d %s, want the API's answer", res.StatusCode, b)
	}

	off := startInProcess(t, "--data", "", "--console=false")
	res, err = http.Get(off)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("GET / with --console=false: %d, want the API's 404", res.StatusCode)
	}
}
