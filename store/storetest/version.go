package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

func version(smName, rev string) *store.Version {
	m := sm(smName)
	return &store.Version{StateMachineARN: m.ARN, Definition: `{"StartAt":"` + rev + `"}`, RoleARN: m.RoleARN, Type: m.Type,
		RevisionID: rev, Description: "d " + rev, Settings: `{"tracing":true}`, Created: t0.Add(time.Minute)}
}

func names2[T any](list []T, key func(T) string) string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = key(v)
	}
	return fmt.Sprint(out)
}

// versions checks versions, aliases, execution references and settings.
func versions(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	if _, _, err := s.PublishVersion(ctx, version("m", "r1"), 10); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("publishing a version of a missing state machine: %v, want ErrNotFound", err)
	}
	for _, n := range []string{"m", "other"} {
		if err := s.CreateStateMachine(ctx, sm(n)); err != nil {
			t.Fatal(err)
		}
	}
	v1, created, err := s.PublishVersion(ctx, version("m", "r1"), 3)
	if err != nil || !created || v1.Number != 1 || v1.ARN != sm("m").ARN+":1" {
		t.Fatalf("first version: %+v %v %v", v1, created, err)
	}
	again, created, err := s.PublishVersion(ctx, version("m", "r1"), 3)
	if err != nil || created || again.ARN != v1.ARN {
		t.Fatalf("publishing the same revision again: %+v %v %v, want version 1, not created", again, created, err)
	}
	v2, _, err := s.PublishVersion(ctx, version("m", "r2"), 3)
	if err != nil || v2.Number != 2 {
		t.Fatalf("second version: %+v %v", v2, err)
	}
	if o, _, err := s.PublishVersion(ctx, version("other", "r1"), 3); err != nil || o.Number != 1 {
		t.Fatalf("another state machine's numbers are its own: %+v %v", o, err)
	}
	got, err := s.GetVersion(ctx, v2.ARN)
	want := version("m", "r2")
	if err != nil || got.Definition != want.Definition || got.RoleARN != want.RoleARN || got.Type != want.Type || got.RevisionID != "r2" ||
		got.Description != want.Description || got.Settings != want.Settings || !got.Created.Equal(want.Created) || got.StateMachineARN != want.StateMachineARN {
		t.Fatalf("GetVersion: %+v %v", got, err)
	}
	if _, err := s.GetVersion(ctx, sm("m").ARN+":9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetVersion of a missing version: %v", err)
	}
	// Deleting the newest version does not free its number.
	if err := s.DeleteVersion(ctx, v2.ARN); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVersion(ctx, v2.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a deleted version: %v", err)
	}
	v3, _, err := s.PublishVersion(ctx, version("m", "r3"), 3)
	if err != nil || v3.Number != 3 {
		t.Fatalf("a version after deleting the newest: %+v %v, want number 3", v3, err)
	}
	if _, _, err := s.PublishVersion(ctx, version("m", "r4"), 2); !errors.Is(err, store.ErrLimit) {
		t.Errorf("a version beyond the limit: %v, want ErrLimit", err)
	}
	v4, _, err := s.PublishVersion(ctx, version("m", "r4"), 3)
	if err != nil {
		t.Fatal(err)
	}
	list, next, err := s.ListVersions(ctx, sm("m").ARN, store.Page{Limit: 2})
	key := func(v *store.Version) string { return fmt.Sprint(v.Number) }
	if err != nil || names2(list, key) != "[4 3]" || next == "" {
		t.Fatalf("versions, page 1: %v %q %v", names2(list, key), next, err)
	}
	list, next, err = s.ListVersions(ctx, sm("m").ARN, store.Page{Token: next, Limit: 2})
	if err != nil || names2(list, key) != "[1]" || next != "" {
		t.Fatalf("versions, page 2: %v %q %v", names2(list, key), next, err)
	}
	if _, _, err := s.ListVersions(ctx, sm("m").ARN, store.Page{Token: "garbage"}); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("versions, bad token: %v", err)
	}

	// Aliases.
	alias := func(name string, routes ...store.Route) *store.Alias {
		return &store.Alias{ARN: sm("m").ARN + ":" + name, StateMachineARN: sm("m").ARN, Name: name, Description: "about " + name,
			Routes: routes, Created: t0, Updated: t0}
	}
	prod := alias("prod", store.Route{VersionARN: v1.ARN, Weight: 90}, store.Route{VersionARN: v3.ARN, Weight: 10})
	if err := s.CreateAlias(ctx, prod, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAlias(ctx, prod, 2); !errors.Is(err, store.ErrExists) {
		t.Errorf("the same alias again: %v, want ErrExists", err)
	}
	if err := s.CreateAlias(ctx, alias("gone", store.Route{VersionARN: v2.ARN, Weight: 100}), 2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an alias to a deleted version: %v, want ErrNotFound", err)
	}
	if err := s.CreateAlias(ctx, alias("beta", store.Route{VersionARN: v4.ARN, Weight: 100}), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAlias(ctx, alias("dev", store.Route{VersionARN: v4.ARN, Weight: 100}), 2); !errors.Is(err, store.ErrLimit) {
		t.Errorf("an alias beyond the limit: %v, want ErrLimit", err)
	}
	a, err := s.GetAlias(ctx, prod.ARN)
	if err != nil || a.Name != "prod" || a.Description != "about prod" || !slices.Equal(a.Routes, prod.Routes) || !a.Created.Equal(t0) || a.StateMachineARN != sm("m").ARN {
		t.Fatalf("GetAlias: %+v %v", a, err)
	}
	a.Routes[0].Weight = 1 // the caller's copy
	if err := s.DeleteVersion(ctx, v3.ARN); !errors.Is(err, store.ErrInUse) {
		t.Errorf("deleting a version an alias routes to: %v, want ErrInUse", err)
	}
	upd := alias("prod", store.Route{VersionARN: v1.ARN, Weight: 100})
	upd.Description, upd.Updated, upd.Created = "changed", t0.Add(time.Hour), t0.Add(time.Hour)
	if err := s.UpdateAlias(ctx, upd); err != nil {
		t.Fatal(err)
	}
	if a, err := s.GetAlias(ctx, prod.ARN); err != nil || a.Description != "changed" || len(a.Routes) != 1 || a.Routes[0].Weight != 100 ||
		!a.Updated.Equal(t0.Add(time.Hour)) || !a.Created.Equal(t0) {
		t.Fatalf("alias after update: %+v %v", a, err)
	}
	if err := s.UpdateAlias(ctx, alias("prod", store.Route{VersionARN: v2.ARN, Weight: 100})); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updating an alias to a deleted version: %v", err)
	}
	if err := s.UpdateAlias(ctx, alias("nope", store.Route{VersionARN: v1.ARN, Weight: 100})); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updating a missing alias: %v", err)
	}
	if err := s.DeleteVersion(ctx, v3.ARN); err != nil {
		t.Errorf("deleting a version no alias routes to any more: %v", err)
	}
	aliases, next, err := s.ListAliases(ctx, sm("m").ARN, store.Page{Limit: 1})
	akey := func(a *store.Alias) string { return a.Name }
	if err != nil || names2(aliases, akey) != "[beta]" || next == "" {
		t.Fatalf("aliases, page 1: %v %q %v", names2(aliases, akey), next, err)
	}
	if aliases, next, err = s.ListAliases(ctx, sm("m").ARN, store.Page{Token: next, Limit: 1}); err != nil || names2(aliases, akey) != "[prod]" || next != "" {
		t.Fatalf("aliases, page 2: %v %q %v", names2(aliases, akey), next, err)
	}
	if err := s.DeleteAlias(ctx, sm("m").ARN+":beta"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAlias(ctx, sm("m").ARN+":beta"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a deleted alias: %v", err)
	}
	if _, err := s.GetAlias(ctx, sm("m").ARN+":beta"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted alias: %v", err)
	}

	// Executions started from versions and aliases. Asking before any
	// reference exists finds none, and must not hide the later ones.
	if refs, err := s.ExecutionRefs(ctx, []string{exec("m", "x0", 0).ARN}); err != nil || len(refs) != 0 {
		t.Fatalf("references before any was put: %v %v", refs, err)
	}
	var execs []*store.Execution
	for i, r := range []store.ExecutionRef{{VersionARN: v1.ARN, AliasARN: prod.ARN, TraceHeader: "Root=1"}, {VersionARN: v1.ARN}, {TraceHeader: "t"}, {VersionARN: v4.ARN}} {
		e := exec("m", fmt.Sprint("x", i), i)
		r.ExecutionARN = e.ARN
		if err := s.PutExecutionRef(ctx, &r); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
		execs = append(execs, e)
	}
	// A second start of an execution that exists changes nothing.
	if err := s.PutExecutionRef(ctx, &store.ExecutionRef{ExecutionARN: execs[0].ARN, VersionARN: v4.ARN}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendStep(ctx, step(execs[1].ARN, 1, 2, 1, "SUCCEEDED")); err != nil {
		t.Fatal(err)
	}
	arns := []string{execs[0].ARN, execs[1].ARN, execs[2].ARN, "arn:aws:states:us-east-1:1:execution:m:none"}
	refs, err := s.ExecutionRefs(ctx, arns)
	if err != nil || len(refs) != 3 || *refs[execs[0].ARN] != (store.ExecutionRef{ExecutionARN: execs[0].ARN, VersionARN: v1.ARN, AliasARN: prod.ARN, TraceHeader: "Root=1"}) ||
		refs[execs[1].ARN].VersionARN != v1.ARN || refs[execs[1].ARN].AliasARN != "" || refs[execs[2].ARN].VersionARN != "" || refs[execs[2].ARN].TraceHeader != "t" {
		t.Fatalf("ExecutionRefs: %v %v", refs, err)
	}
	ekey := func(e *store.Execution) string { return e.Name }
	for _, c := range []struct {
		ref, status string
		want        string
	}{{v1.ARN, "", "[x1 x0]"}, {prod.ARN, "", "[x0]"}, {v4.ARN, "", "[x3]"}, {v1.ARN, "SUCCEEDED", "[x1]"}, {v1.ARN, "RUNNING", "[x0]"}, {sm("m").ARN + ":7", "", "[]"}} {
		list, next, err := s.ListExecutionsOf(ctx, c.ref, c.status, store.Page{})
		if err != nil || names2(list, ekey) != c.want || next != "" {
			t.Errorf("executions of %s %q: %v %q %v, want %s", c.ref, c.status, names2(list, ekey), next, err, c.want)
		}
		for _, e := range list {
			if e.StateMachineARN != sm("m").ARN || e.Status == "" || e.Started.IsZero() {
				t.Errorf("listed execution: %+v", e)
			}
		}
	}
	page1, next, err := s.ListExecutionsOf(ctx, v1.ARN, "", store.Page{Limit: 1})
	if err != nil || names2(page1, ekey) != "[x1]" || next == "" {
		t.Fatalf("executions of version 1, page 1: %v %q %v", names2(page1, ekey), next, err)
	}
	if page2, next, err := s.ListExecutionsOf(ctx, v1.ARN, "", store.Page{Token: next, Limit: 1}); err != nil || names2(page2, ekey) != "[x0]" || next != "" {
		t.Fatalf("executions of version 1, page 2: %v %q %v", names2(page2, ekey), next, err)
	}
	if _, _, err := s.ListExecutionsOf(ctx, v1.ARN, "", store.Page{Token: "garbage"}); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("executions of a version, bad token: %v", err)
	}

	// Settings.
	if got, err := s.GetSettings(ctx, sm("m").ARN); err != nil || got != "" {
		t.Errorf("settings never put: %q %v", got, err)
	}
	if err := s.PutSettings(ctx, sm("m").ARN, `{"a":1}`); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSettings(ctx, sm("m").ARN, `{"a":2}`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSettings(ctx, sm("m").ARN); err != nil || got != `{"a":2}` {
		t.Errorf("settings: %q %v", got, err)
	}
	if err := s.PutSettings(ctx, sm("m").ARN, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSettings(ctx, sm("m").ARN); err != nil || got != "" {
		t.Errorf("settings removed: %q %v", got, err)
	}

	// Deleting a state machine's versions removes its aliases and
	// restarts its numbering; another state machine keeps its own.
	if err := s.DeleteVersions(ctx, sm("m").ARN); err != nil {
		t.Fatal(err)
	}
	if list, _, err := s.ListVersions(ctx, sm("m").ARN, store.Page{}); err != nil || len(list) != 0 {
		t.Errorf("versions after DeleteVersions: %v %v", names2(list, key), err)
	}
	if _, err := s.GetAlias(ctx, prod.ARN); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an alias after DeleteVersions: %v", err)
	}
	if v, _, err := s.PublishVersion(ctx, version("m", "r9"), 3); err != nil || v.Number != 1 {
		t.Errorf("the first version after DeleteVersions: %+v %v, want number 1", v, err)
	}
	if list, _, err := s.ListVersions(ctx, sm("other").ARN, store.Page{}); err != nil || len(list) != 1 {
		t.Errorf("another state machine's versions: %v %v", names2(list, key), err)
	}
}

// concurrentPublish publishes from several goroutines at once: numbers are
// never given twice, and one revision makes one version.
func concurrentPublish(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	if err := s.CreateStateMachine(ctx, sm("c")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]*store.Version, 16)
	errs := make([]error, 16)
	for i := range got {
		wg.Go(func() { got[i], _, errs[i] = s.PublishVersion(ctx, version("c", fmt.Sprint("r", i%8)), 100) })
	}
	wg.Wait()
	byRev := map[string]int64{}
	for i, v := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if n, ok := byRev[v.RevisionID]; ok && n != v.Number {
			t.Errorf("revision %s published as %d and %d", v.RevisionID, n, v.Number)
		}
		byRev[v.RevisionID] = v.Number
	}
	list, _, err := s.ListVersions(ctx, sm("c").ARN, store.Page{})
	if err != nil || len(list) != 8 || list[0].Number != 8 || list[7].Number != 1 {
		t.Errorf("versions: %d %v", len(list), err)
	}
}

// durableVersions checks that versions, aliases, references and settings
// survive a reopen.
func durableVersions(t *testing.T, open func(t *testing.T, dir string) store.Store) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.CreateStateMachine(ctx, sm("d")); err != nil {
		t.Fatal(err)
	}
	v1, _, err := s.PublishVersion(ctx, version("d", "r1"), 10)
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := s.PublishVersion(ctx, version("d", "r2"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVersion(ctx, v2.ARN); err != nil {
		t.Fatal(err)
	}
	a := &store.Alias{ARN: sm("d").ARN + ":live", StateMachineARN: sm("d").ARN, Name: "live", Routes: []store.Route{{VersionARN: v1.ARN, Weight: 100}}, Created: t0, Updated: t0}
	if err := s.CreateAlias(ctx, a, 10); err != nil {
		t.Fatal(err)
	}
	e := exec("d", "e", 1)
	if err := s.PutExecutionRef(ctx, &store.ExecutionRef{ExecutionARN: e.ARN, VersionARN: v1.ARN, AliasARN: a.ARN, TraceHeader: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSettings(ctx, sm("d").ARN, `{"x":1}`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	if got, err := s.GetVersion(ctx, v1.ARN); err != nil || got.Definition != v1.Definition || got.Description != v1.Description || !got.Created.Equal(v1.Created) {
		t.Fatalf("version after reopen: %+v %v", got, err)
	}
	if got, err := s.GetAlias(ctx, a.ARN); err != nil || !slices.Equal(got.Routes, a.Routes) {
		t.Fatalf("alias after reopen: %+v %v", got, err)
	}
	if refs, err := s.ExecutionRefs(ctx, []string{e.ARN}); err != nil || refs[e.ARN] == nil || refs[e.ARN].AliasARN != a.ARN || refs[e.ARN].TraceHeader != "h" {
		t.Fatalf("reference after reopen: %v %v", refs, err)
	}
	if got, err := s.GetSettings(ctx, sm("d").ARN); err != nil || got != `{"x":1}` {
		t.Fatalf("settings after reopen: %q %v", got, err)
	}
	if v3, _, err := s.PublishVersion(ctx, version("d", "r3"), 10); err != nil || v3.Number != 3 {
		t.Fatalf("the next version after reopen: %+v %v, want number 3", v3, err)
	}
}
