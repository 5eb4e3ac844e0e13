package fault

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestError(t *testing.T) {
	err := New(ErrNoTask, "Task Does Not Exist: %s", "no task")
	if err.Error() != "Task Does Not Exist: no task" {
		t.Fatalf("Error() = %q", err)
	}
	wrapped := fmt.Errorf("forwarding: %w", err)
	if !errors.Is(wrapped, ErrNoTask) || errors.Is(wrapped, ErrTaskClosed) {
		t.Fatalf("errors.Is through a wrap: %v", wrapped)
	}
	if msg, kind := Of(wrapped); kind != ErrNoTask || msg != "Task Does Not Exist: no task" {
		t.Fatalf("Of = %q, %v", msg, kind)
	}
	if msg, kind := Of(fmt.Errorf("x: %w", ErrConflict)); kind != ErrConflict || msg != "x: conflict" {
		t.Fatalf("Of(a wrapped sentinel) = %q, %v", msg, kind)
	}
	if _, kind := Of(errors.New("plain")); kind != nil {
		t.Fatalf("Of(plain) = %v", kind)
	}
}

// TestAll: All lists every sentinel that fault.go declares, once.
func TestAll(t *testing.T) {
	seen := map[error]bool{}
	for _, k := range All() {
		if seen[k] || k == nil {
			t.Fatalf("%v twice or nil", k)
		}
		seen[k] = true
	}
	f, err := parser.ParseFile(token.NewFileSet(), "fault.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for _, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Err") {
					declared++
				}
			}
		}
		return true
	})
	if declared != len(All()) {
		t.Fatalf("fault.go declares %d sentinels, All lists %d", declared, len(All()))
	}
}
