package graph

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/value"
)

// TestBrowserRendering gives the Mermaid text and the SVG of several
// definitions (the examples and one with every kind of node, edge and
// awkward name) to headless Chromium (testdata/browser/render.mjs): the
// Mermaid text must pass Mermaid's own parser and renderer, and the SVG
// must draw every state. It needs node, chromium and the npm packages of
// testdata/browser (npm ci there); without them it is skipped, unless
// CI=true, where that is a failure (.ci/run installs them). The first
// case's pictures are saved in $STEPD_ARTIFACTS, or
// testdata/browser/artifacts.
func TestBrowserRendering(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "browser"))
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
	for _, pkg := range []string{"mermaid", "playwright-core"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
			missing = append(missing, pkg+" (npm ci in graph/testdata/browser)")
		}
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the browser test needs %s", strings.Join(missing, ", "))
		}
		t.Skipf("the browser test needs %s", strings.Join(missing, ", "))
	}
	// Read the script here so that go test's cache sees it.
	if _, err := os.ReadFile(filepath.Join(dir, "render.mjs")); err != nil {
		t.Fatal(err)
	}
	defs := []struct{ name, text string }{{"tricky", tricky}}
	for _, f := range []string{"data-pipeline/data-pipeline.json", "job-poller/job-poller.json", "nested-loop/nested-loop.json"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, struct{ name, text string }{f, string(data)})
	}
	var cases []any
	for _, d := range defs {
		top := Build(mustParse(t, d.text))
		states := 0
		Walk(top, func(n *Node, _ *Scope, _ int) {
			if n.Kind == KindState {
				states++
			}
		})
		cases = append(cases, value.ObjectOf("name", d.name, "mermaid", Mermaid(top, nil), "svg", SVG(top, nil), "states", value.Int(int64(states))))
	}
	in := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(in, []byte(value.String(cases)), 0o644); err != nil {
		t.Fatal(err)
	}
	artifacts := os.Getenv("STEPD_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(dir, "artifacts")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "render.mjs"), in, artifacts)
	cmd.Env = append(os.Environ(), "STEPD_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("node render.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser check failed: %v", err)
	}
}
