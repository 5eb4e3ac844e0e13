package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// webDir holds the console's sources, relative to this package.
const webDir = "web"

// sourceFiles lists the files the build depends on, as console/web/build.mjs
// does: build.mjs, package.json, package-lock.json and everything under src,
// as slash-separated paths relative to dir, sorted.
func sourceFiles(dir string) ([]string, error) {
	files := []string{"build.mjs", "package-lock.json", "package.json"}
	err := filepath.WalkDir(filepath.Join(dir, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(files)
	return files, err
}

// sourceHash is build.mjs's sourceHash: sha256 over each file's path, NUL,
// length in bytes, NUL and contents.
func sourceHash(dir string) (string, error) {
	files, err := sourceFiles(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func builtHash(t *testing.T) string {
	t.Helper()
	b, err := fs.ReadFile(Files, "source.sha256")
	if err != nil {
		t.Fatalf("the console is not built: %v (run npm run build in console/web)", err)
	}
	return strings.TrimSpace(string(b))
}

// TestBuildIsFresh fails when a source of the console changed after the
// committed build in console/dist was made.
func TestBuildIsFresh(t *testing.T) {
	got, err := sourceHash(webDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := builtHash(t); got != want {
		t.Fatalf("console/dist is stale: its sources hash to %s, the build was made from %s; run npm run build in console/web and commit console/dist", got, want)
	}
}

// TestSourceHashSeesChanges copies the sources, changes one byte of one
// file, and checks that the hash no longer matches the build: the freshness
// test above can fail.
func TestSourceHashSeesChanges(t *testing.T) {
	files, err := sourceFiles(webDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, changed := range []string{"src/main.js", "package-lock.json", "src/NEW.js"} {
		dir := t.TempDir()
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(webDir, filepath.FromSlash(f)))
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if f == changed {
				b = append(b, ' ')
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if changed == "src/NEW.js" {
			if err := os.WriteFile(filepath.Join(dir, "src", "NEW.js"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := sourceHash(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got == builtHash(t) {
			t.Errorf("changing %s does not change the source hash", changed)
		}
	}
}

// TestSize keeps the whole page (every file it loads) within 300 KiB
// gzipped.
func TestSize(t *testing.T) {
	var total int
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		b, err := fs.ReadFile(Files, name)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		z.Write(b)
		z.Close()
		total += buf.Len()
	}
	t.Logf("the console weighs %d bytes gzipped", total)
	if total > 300<<10 {
		t.Errorf("the console weighs %d bytes gzipped, more than 300 KiB", total)
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	tests := []struct {
		method, path string
		status       int
		ctype, body  string
	}{
		{"GET", "/", 200, "text/html", "<title>stepd console</title>"},
		{"GET", "/app.js", 200, "javascript", ""},
		{"GET", "/app.css", 200, "text/css", ""},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/index.html", 404, "", ""},
		{"GET", "/missing.js", 404, "", ""},
		{"GET", "/../console.go", 404, "", ""},
		{"POST", "/app.js", 405, "", ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, res.StatusCode, tt.status)
			continue
		}
		if !strings.Contains(res.Header.Get("Content-Type"), tt.ctype) {
			t.Errorf("%s %s: Content-Type %q, want %q", tt.method, tt.path, res.Header.Get("Content-Type"), tt.ctype)
		}
		if !strings.Contains(string(b), tt.body) {
			t.Errorf("%s %s: body does not contain %q", tt.method, tt.path, tt.body)
		}
		if tt.status == 200 && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s %s: no Content-Security-Policy", tt.method, tt.path)
		}
	}
}

// TestJavaScript runs the unit tests of the console's modules (status
// colouring from histories, the graph model, Choice labels, diagnostic
// locations, layout) with node --test. Without node or the npm packages
// (npm ci in console/web) it is skipped, unless CI=true.
func TestJavaScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(webDir, "node_modules", "@dagrejs", "dagre"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the console's unit tests need node and npm ci in console/web: %v", err)
		}
		t.Skipf("the console's unit tests need node and npm ci in console/web: %v", err)
	}
	// Read the tests and fixtures here so that go test's cache sees them.
	err = filepath.WalkDir(filepath.Join(webDir, "test"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--test", "test/")
	cmd.Dir = webDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
