package shared

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFindsTheRepositorysCopy(t *testing.T) {
	t.Setenv("STEPD_SHARED", "")
	r := findRoot()
	if filepath.Base(r) != "shared" || filepath.Base(filepath.Dir(r)) != "testdata" {
		t.Fatalf("findRoot() = %q, want the module's testdata/shared", r)
	}
	for _, sub := range []string{"conformance/cases", "jsonata-test-suite/groups", "bench/workloads"} {
		if _, err := os.Stat(filepath.Join(r, sub)); err != nil {
			t.Errorf("the copy has no %s: %v", sub, err)
		}
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

// A suite whose material is missing fails, with or without CI: the material
// is part of the repository.
func TestMissingFails(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		missing(r, "gone")
		if r.skipped || !r.failed {
			t.Fatalf("CI=%q: skipped=%v failed=%v, want a failure", ci, r.skipped, r.failed)
		}
	}
}
