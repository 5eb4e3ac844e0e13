package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepd/stepd/store/memory"
)

// TestJavaScriptSDK runs testdata/jsclient/sdk.mjs, which drives a real
// server on 127.0.0.1 with the AWS SDK for JavaScript v3's SFN client,
// configured as docs/cli.md says. It needs node and the client (npm ci in
// api/testdata/jsclient); without them it is skipped, unless CI=true, where
// that is a failure (.ci/run installs them).
func TestJavaScriptSDK(t *testing.T) {
	dir := filepath.Join("testdata", "jsclient")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@aws-sdk", "client-sfn"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the JavaScript SDK test needs node and npm ci in %s: %v", dir, err)
		}
		t.Skipf("the JavaScript SDK test needs node and npm ci in %s: %v", dir, err)
	}
	// Read the script here so that go test's cache sees it change.
	if _, err := os.ReadFile(filepath.Join(dir, "sdk.mjs")); err != nil {
		t.Fatal(err)
	}
	_, url := newServer(t, memory.New(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sdk.mjs", url)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1") // the SDK's notice about future Node versions
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node sdk.mjs: %v", err)
	}
}
