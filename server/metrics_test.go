package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/store/sqlite"
)

// TestReadiness checks that /readyz answers 503 while resuming, when the
// store (a real SQLite store, closed) does not answer, and once stopping.
func TestReadiness(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	r := newReadiness(st)
	srv := httptest.NewServer(r)
	defer srv.Close()
	check := func(when string, code int, reason string) {
		t.Helper()
		got, body := getJSON(t, srv.URL)
		if got != code || !strings.Contains(fmt.Sprint(body["reason"]), reason) {
			t.Errorf("%s: %d %v, want %d with reason %q", when, got, body, code, reason)
		}
	}
	check("resuming", 503, "resuming")
	r.Resumed(0)
	check("resumed", 200, "")
	r.Stopping()
	check("stopping", 503, "stopping")
	r.Resumed(0)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	check("store closed", 503, "the store does not answer")
}

// getJSON gets url and decodes its JSON object.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v", url, res.StatusCode, err)
	}
	return res.StatusCode, body
}
