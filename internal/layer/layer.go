// Package layer checks stepd's layering: the pure packages (the interpreter
// and what it builds on) must not depend, directly or through another
// package, on the packages that do I/O with the outside world: net/http,
// os/exec, database/sql and the AWS SDK. Check walks the import graph that
// `go list -deps` reports and names the import chain of every violation.
//
// It imports nothing of stepd's and must not: it reads the import graph
// from go list rather than importing what it checks.
package layer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// Pure are the packages that must stay free of the Forbidden ones.
var Pure = []string{
	"github.com/stepd/stepd/value",
	"github.com/stepd/stepd/arn",
	"github.com/stepd/stepd/asl",
	"github.com/stepd/stepd/jsonpath",
	"github.com/stepd/stepd/intrinsic",
	"github.com/stepd/stepd/jsonata",
	"github.com/stepd/stepd/validate",
	"github.com/stepd/stepd/history",
	"github.com/stepd/stepd/interp",
}

// Forbidden reports whether a pure package must not depend on the package
// with the import path p: net/http, os/exec, database/sql, or any package
// under github.com/aws/ (the AWS SDK and smithy-go).
func Forbidden(p string) bool {
	switch p {
	case "net/http", "os/exec", "database/sql":
		return true
	}
	return strings.HasPrefix(p, "github.com/aws/")
}

// Violation is a forbidden package that a checked package depends on.
type Violation struct {
	// Chain is the shortest import chain from the checked package (first)
	// to the forbidden one (last).
	Chain []string
}

// Package is the checked package.
func (v Violation) Package() string { return v.Chain[0] }

// Import is the forbidden package.
func (v Violation) Import() string { return v.Chain[len(v.Chain)-1] }

// String is the import chain, e.g. "a -> b -> net/http".
func (v Violation) String() string { return strings.Join(v.Chain, " -> ") }

// Check lists the dependencies of the packages (import paths or patterns, as
// `go list` takes them, resolved in the current directory's module) with the
// go command, and returns the violations: for each package, every forbidden
// package it reaches without passing through another forbidden one, with the
// shortest chain that reaches it.
func Check(ctx context.Context, forbidden func(string) bool, pkgs ...string) ([]Violation, error) {
	if len(pkgs) == 0 {
		return nil, errors.New("layer: no packages to check")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}, pkgs...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("layer: go list %s: %w: %s", strings.Join(pkgs, " "), err, strings.TrimSpace(stderr.String()))
	}
	imports := map[string][]string{}
	var roots []string
	dec := json.NewDecoder(&stdout)
	for {
		var p struct {
			ImportPath string
			Imports    []string
			DepOnly    bool
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("layer: reading go list's output: %w", err)
		}
		imports[p.ImportPath] = p.Imports
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	return Violations(imports, roots, forbidden), nil
}

// Violations finds the violations of the roots in an import graph (each
// package's direct imports): a breadth-first walk from each root that does
// not go past forbidden packages, so each chain ends at the first forbidden
// package on its way and is a shortest one. Roots are taken in order,
// violations of one root sorted by forbidden package.
func Violations(imports map[string][]string, roots []string, forbidden func(string) bool) []Violation {
	var out []Violation
	for _, root := range roots {
		from := map[string]string{root: ""}
		queue := []string{root}
		var found []Violation
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if forbidden(p) {
				var chain []string
				for q := p; q != ""; q = from[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				found = append(found, Violation{Chain: chain})
				continue
			}
			for _, q := range imports[p] {
				if _, seen := from[q]; !seen {
					from[q] = p
					queue = append(queue, q)
				}
			}
		}
		slices.SortFunc(found, func(a, b Violation) int { return strings.Compare(a.Import(), b.Import()) })
		out = append(out, found...)
	}
	return out
}
