// Package console serves stepd's web console: a single page, built from the
// sources in console/web with npm and committed in console/dist, embedded in
// the binary so that go build alone builds everything. The page talks to the
// Step Functions API (POST / with X-Amz-Target) like every other client, so
// the console holds no data and needs no access of its own.
//
// It imports nothing of stepd's and must not: it reaches the service
// only through the HTTP API.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// Files is the built console: index.html, app.js, app.css and
// source.sha256.
var Files = mustSub(dist, "dist")

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return s
}

// csp keeps the page from loading or sending anything beyond its own origin.
const csp = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Handler serves the console's files for GET and HEAD: / is index.html,
// other paths name a file of the build; anything else is 404.
func Handler() http.Handler {
	files := http.FileServerFS(Files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if _, err := fs.Stat(Files, name); err != nil || name == "index.html" && r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// The files change with the binary, not with time: revalidate.
		h.Set("Cache-Control", "no-cache")
		if name == "index.html" {
			// http.FileServer redirects /index.html to /; serve the file itself.
			b, _ := fs.ReadFile(Files, name)
			h.Set("Content-Type", "text/html; charset=utf-8")
			if r.Method == http.MethodGet {
				_, _ = w.Write(b)
			}
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		files.ServeHTTP(w, r2)
	})
}
