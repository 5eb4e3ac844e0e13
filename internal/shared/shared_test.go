package shared

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFindsSharedBesideModule(t *testing.T) {
	r := findRoot()
	if r == "" {
		t.Skip("no ../shared beside this checkout")
	}
	if _, err := os.Stat(filepath.Join(r, "conformance")); err != nil {
		t.Fatalf("Root() = %s, which has no conformance folder: %v", r, err)
	}
}

func TestOverride(t *testing.T) {
	d := t.TempDir()
	t.Setenv("STEPD_SHARED", d)
	if got := findRoot(); got != d {
		t.Fatalf("findRoot() with STEPD_SHARED=%s = %q", d, got)
	}
}

// recorder is a testing.TB that records whether the test would have been
// skipped or failed, without ending the calling test.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Fatal(...any)          { r.failed = true }

func TestMissingSkipsOrFailsInCI(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	missing(r, "gone")
	if !r.skipped || r.failed {
		t.Fatalf("without CI: skipped=%v failed=%v, want a skip", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	missing(r, "gone")
	if r.skipped || !r.failed {
		t.Fatalf("with CI=true: skipped=%v failed=%v, want a failure", r.skipped, r.failed)
	}
}
