// Package shared finds the project's shared material for tests: the
// AWS-recorded conformance cases, the official JSONata test suite and the
// benchmark workloads, copied into the repository's testdata/shared (see
// scripts/refresh-testdata, which refreshes the copy from ../shared). It is
// the one place that knows where they are. It imports nothing of the
// project's and must not: every package's tests import it.
//
// The material is part of the repository, so a test that needs it and does
// not find it fails, naming what is missing: a fidelity suite never skips.
package shared

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Root returns the shared material's folder, testdata/shared under the
// module's root (the directory holding go.mod), or "" when there is none.
// STEPD_SHARED overrides it (for example with ../shared itself).
func Root() string {
	rootOnce.Do(func() { root = findRoot() })
	return root
}

var (
	rootOnce sync.Once
	root     string
)

func findRoot() string {
	if d := os.Getenv("STEPD_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "testdata", "shared")
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return d
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the folder sub of the shared material (e.g. "conformance/cases",
// "jsonata-test-suite"), or fails tb, naming it, when it is absent.
func Dir(tb testing.TB, sub string) string {
	tb.Helper()
	r := Root()
	d := filepath.Join(r, filepath.FromSlash(sub))
	if r == "" {
		missing(tb, "the shared material (testdata/shared under the module's root, or $STEPD_SHARED) was not found")
		return ""
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		missing(tb, d+" was not found")
		return ""
	}
	return d
}

// CasesDir returns the folder of the AWS-recorded conformance cases.
func CasesDir(tb testing.TB) string {
	tb.Helper()
	return Dir(tb, "conformance/cases")
}

// Cases returns the paths of the conformance cases whose file names match
// pattern (a filepath.Match pattern such as "*.json" or
// "test_state.*.json"), sorted, or fails tb when there is none.
func Cases(tb testing.TB, pattern string) []string {
	tb.Helper()
	dir := CasesDir(tb)
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		tb.Fatalf("shared: bad pattern %q: %v", pattern, err)
	}
	if len(files) == 0 {
		missing(tb, "no conformance case in "+dir+" matches "+pattern)
	}
	return files
}

// JSONataSuiteDir returns the folder of the official JSONata 2.0.6 suite.
func JSONataSuiteDir(tb testing.TB) string {
	tb.Helper()
	return Dir(tb, "jsonata-test-suite")
}

func missing(tb testing.TB, why string) {
	tb.Helper()
	tb.Fatalf("%s: run scripts/refresh-testdata, or set STEPD_SHARED to a copy of the shared material", why)
}
