package layer

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestPureLayers is the layering rule: the interpreter and the packages it
// builds on depend on none of net/http, os/exec, database/sql and the AWS
// SDK.
func TestPureLayers(t *testing.T) {
	vs, err := Check(context.Background(), Forbidden, Pure...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%s must not depend on %s: %s", v.Package(), v.Import(), v)
	}
}

// TestCheckFindsViolations runs the checker on packages that do depend on
// forbidden ones, so that TestPureLayers passing means something.
func TestCheckFindsViolations(t *testing.T) {
	const mod = "github.com/stepd/stepd/"
	vs, err := Check(context.Background(), Forbidden, mod+"task/lambdasdk", mod+"task/command", mod+"store/sqlite", mod+"api")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ pkg, imp string }{
		{mod + "task/lambdasdk", "github.com/aws/aws-sdk-go-v2/service/lambda"},
		{mod + "task/command", "os/exec"},
		{mod + "store/sqlite", "database/sql"},
		{mod + "api", "net/http"},
	} {
		i := slices.IndexFunc(vs, func(v Violation) bool { return v.Package() == want.pkg && v.Import() == want.imp })
		if i < 0 {
			t.Errorf("no violation %s -> %s among %v", want.pkg, want.imp, vs)
			continue
		}
		t.Logf("found %s", vs[i])
	}
	for _, v := range vs {
		if !Forbidden(v.Import()) || slices.ContainsFunc(v.Chain[:len(v.Chain)-1], Forbidden) {
			t.Errorf("chain %s: want a forbidden package at its end only", v)
		}
	}
}

// TestViolations checks the walk on a small graph: shortest chains, no walk
// past a forbidden package, each forbidden package reported once per root.
func TestViolations(t *testing.T) {
	imports := map[string][]string{
		"pure":    {"value"},
		"value":   {"strings"},
		"interp":  {"task", "value", "history"},
		"history": {"value"},
		"task":    {"lambda", "net/http"},
		"lambda":  {"os/exec", "github.com/aws/sdk"},
		"net/http": {
			"github.com/aws/behind", // not reported: net/http is already forbidden
		},
		"os/exec": {},
	}
	forbidden := func(p string) bool { return Forbidden(p) || p == "github.com/aws/sdk" }
	got := Violations(imports, []string{"pure", "interp"}, forbidden)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.String())
	}
	want := []string{
		"interp -> task -> lambda -> github.com/aws/sdk",
		"interp -> task -> net/http",
		"interp -> task -> lambda -> os/exec",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestForbidden(t *testing.T) {
	for p, want := range map[string]bool{
		"net/http": true, "os/exec": true, "database/sql": true,
		"github.com/aws/aws-sdk-go-v2/service/lambda": true, "github.com/aws/smithy-go": true,
		"net/http/httptest": false, "net/url": false, "os": false, "database/sql/driver": false,
		"github.com/stepd/stepd/task": false, "github.com/awslabs/x": false,
	} {
		if got := Forbidden(p); got != want {
			t.Errorf("Forbidden(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestCheckError(t *testing.T) {
	if _, err := Check(context.Background(), Forbidden, "github.com/stepd/stepd/no/such/package"); err == nil {
		t.Error("no error for a package that does not exist")
	}
	if _, err := Check(context.Background(), Forbidden); err == nil {
		t.Error("no error without packages")
	}
}

// TestRooms enforces the rules between the middle layers (Rooms).
func TestRooms(t *testing.T) {
	for _, r := range Rooms {
		vs, err := CheckRule(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			t.Errorf("%s must not import %s (%s): %s", v.Package(), v.Import(), r.Why, v)
		}
	}
}

// TestRoomsFindViolations checks that each kind of rule can fail: the
// service does reach the store and the runner, and the API reaches the
// store through the service (which a Direct rule allows).
func TestRoomsFindViolations(t *testing.T) {
	ctx := context.Background()
	vs, err := CheckRule(ctx, Rule{From: mod + "service", Not: among("runner", "store")})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 2 {
		t.Errorf("service reaches runner and store, found %v", vs)
	}
	vs, err = CheckRule(ctx, Rule{From: mod + "api", Not: among("runner")})
	if err != nil || len(vs) != 1 || len(vs[0].Chain) != 3 {
		t.Errorf("api reaches runner through service: %v, %v", vs, err)
	}
	vs, err = CheckRule(ctx, Rule{From: mod + "api", Not: among("runner"), Direct: true})
	if err != nil || len(vs) != 0 {
		t.Errorf("api does not import runner itself: %v, %v", vs, err)
	}
}
