package jsonata

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

const knownFailuresFile = "testdata/jsonata_known_failures.txt"

type suiteCase struct {
	id       string
	expr     string
	input    any
	hasInput bool // false: the input is undefined
	bindings map[string]any
	want     string // "result", "undefined" or "error"
	result   any
	code     string // the expected error code, if any
	timeout  time.Duration
}

// loadSuite reads every case: each groups/*/*.json file holds one case or
// an array of cases; expr-file names a file beside it.
func loadSuite(t *testing.T) []suiteCase {
	t.Helper()
	suiteDir := shared.JSONataSuiteDir(t)
	groups, _ := filepath.Glob(filepath.Join(suiteDir, "groups", "*"))
	if len(groups) == 0 {
		t.Fatalf("no test group in %s", suiteDir)
	}
	datasets := map[string]any{}
	dataset := func(name string) any {
		if v, ok := datasets[name]; ok {
			return v
		}
		b, err := os.ReadFile(filepath.Join(suiteDir, "datasets", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Parse(b)
		if err != nil {
			t.Fatalf("dataset %s: %v", name, err)
		}
		datasets[name] = v
		return v
	}
	var cases []suiteCase
	for _, g := range groups {
		files, _ := filepath.Glob(filepath.Join(g, "*.json"))
		slices.Sort(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := value.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			list, isList := v.([]any)
			if !isList {
				list = []any{v}
			}
			base := filepath.Base(g) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
			for i, e := range list {
				o, ok := e.(*value.Object)
				if !ok {
					t.Fatalf("%s: case %d is not an object", f, i)
				}
				id := base
				if isList {
					id = fmt.Sprintf("%s[%d]", base, i)
				}
				cases = append(cases, parseCase(t, id, g, o, dataset))
			}
		}
	}
	return cases
}

func parseCase(t *testing.T, id, dir string, o *value.Object, dataset func(string) any) suiteCase {
	c := suiteCase{id: id, timeout: 5 * time.Second}
	if s, ok := o.Get("expr"); ok {
		c.expr, _ = s.(string)
	} else if ef, ok := o.Get("expr-file"); ok {
		name, _ := ef.(string)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		c.expr = string(b)
	}
	if d, ok := o.Get("data"); ok {
		c.input, c.hasInput = d, true
	} else if ds, _ := o.Get("dataset"); ds != nil {
		name, _ := ds.(string)
		c.input, c.hasInput = dataset(name), true
	}
	if b, ok := o.Get("bindings"); ok {
		if bo, ok := b.(*value.Object); ok {
			c.bindings = map[string]any{}
			for k, bv := range bo.All {
				c.bindings[k] = bv
			}
		}
	}
	switch {
	case o.Has("result"):
		c.result, _ = o.Get("result")
		c.want = "result"
	case o.Has("undefinedResult"):
		c.want = "undefined"
	default:
		c.want = "error"
		if code, ok := o.Get("code"); ok {
			c.code, _ = code.(string)
		} else if eo, ok := o.Get("error"); ok {
			if code, ok := value.AsObject(eo).Get("code"); ok {
				c.code, _ = code.(string)
			}
		}
	}
	// The JavaScript runner stops a case after timelimit ms with U1001;
	// gnata has no such hook, so the limit becomes the context deadline,
	// with room for a slower machine.
	if tl, ok := o.Get("timelimit"); ok {
		if n, ok := tl.(value.Number); ok && n.Float64() > 0 {
			c.timeout = max(time.Duration(n.Float64())*time.Millisecond*4, time.Second)
		}
	}
	return c
}

type outcome struct {
	v   any
	ok  bool
	err error
}

// run evaluates one case in plain JSONata's environment and reports
// whether it matched, with a reason when it did not. A case that outlives
// its deadline by a second is abandoned (its goroutine is left to finish).
func (c *suiteCase) run() (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		x, err := compile(c.expr)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		v, ok, err := x.eval(ctx, c.input, c.hasInput, c.bindings, false, Options{})
		done <- outcome{v, ok, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(c.timeout + time.Second):
		return false, "hung past its deadline"
	}
	return c.judge(o)
}

func (c *suiteCase) judge(o outcome) (bool, string) {
	switch c.want {
	case "error":
		if o.err == nil {
			if !o.ok {
				return false, "want error " + c.code + ", got undefined"
			}
			return false, "want error " + c.code + ", got " + value.String(o.v)
		}
		code := ""
		var e *Error
		switch {
		case errors.As(o.err, &e):
			code = e.Code
		case errors.Is(o.err, context.DeadlineExceeded):
			code = "U1001" // jsonata-js's code for a run stopped by its time limit
		}
		if c.code != "" && code != c.code {
			return false, "want error " + c.code + ", got " + o.err.Error()
		}
		return true, ""
	case "undefined":
		if o.err != nil {
			return false, "want undefined, got error " + o.err.Error()
		}
		if o.ok {
			return false, "want undefined, got " + value.String(o.v)
		}
		return true, ""
	}
	if o.err != nil {
		return false, "error: " + o.err.Error()
	}
	if !o.ok {
		return false, "got undefined"
	}
	if !value.Equal(c.result, o.v) {
		return false, "want " + value.String(c.result) + ", got " + value.String(o.v)
	}
	return true, ""
}

func readKnownFailures(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(knownFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			t.Errorf("%s: %s has no reason", knownFailuresFile, id)
		}
		known[id] = reason
	}
	return known
}

// TestSuite runs the official JSONata 2.0.6 test suite through the adapter
// (plain JSONata environment: the suite tests $eval and unseeded $random)
// and enforces the known-failures list: a listed case that passes and an
// unlisted case that fails both fail the test.
func TestSuite(t *testing.T) {
	cases := loadSuite(t)
	known := readKnownFailures(t)
	passed := 0
	seen := map[string]bool{}
	var complaints []string
	for i := range cases {
		c := &cases[i]
		seen[c.id] = true
		ok, why := c.run()
		if ok {
			passed++
		}
		_, listed := known[c.id]
		switch {
		case !ok && !listed:
			complaints = append(complaints, c.id+": "+why)
		case ok && listed:
			complaints = append(complaints, c.id+": passes now; remove it from "+knownFailuresFile)
		}
	}
	for id := range known {
		if !seen[id] {
			complaints = append(complaints, id+": listed in "+knownFailuresFile+" but not in the suite")
		}
	}
	pct := float64(passed) * 100 / float64(len(cases))
	t.Logf("JSONata 2.0.6 suite: %d of %d cases pass (%.2f%%)", passed, len(cases), pct)
	if len(cases) < 1600 {
		t.Errorf("only %d cases loaded; the suite has 1625", len(cases))
	}
	if pct < 99 {
		t.Errorf("pass rate %.2f%% is below 99%%", pct)
	}
	if len(complaints) > 0 {
		slices.Sort(complaints)
		t.Errorf("known-failures list is out of date:\n%s", strings.Join(complaints, "\n"))
	}
}
