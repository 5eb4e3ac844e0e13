package jsonata

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/value"
)

const suiteDir = "../../shared/jsonata-test-suite"

type suiteCase struct {
	id       string
	expr     string
	input    any
	hasInput bool
	bindings map[string]any
	result   any
	want     string // "result", "undefined" or "error"
	code     string
	timeout  time.Duration
}

func loadSuite(t *testing.T) []suiteCase {
	groups, _ := filepath.Glob(filepath.Join(suiteDir, "groups", "*"))
	if len(groups) == 0 {
		t.Skipf("JSONata test suite not found at %s; skipping", suiteDir)
	}
	datasets := map[string]any{}
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
			for i, e := range list {
				o := e.(*value.Object)
				id := filepath.Base(g) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
				if isList {
					id += "[" + value.String(value.Int(int64(i))) + "]"
				}
				c := suiteCase{id: id, timeout: 5 * time.Second}
				if s, ok := o.Get("expr"); ok {
					c.expr, _ = s.(string)
				} else if ef, ok := o.Get("expr-file"); ok {
					b, err := os.ReadFile(filepath.Join(g, ef.(string)))
					if err != nil {
						t.Fatal(err)
					}
					c.expr = string(b)
				}
				if d, ok := o.Get("data"); ok {
					c.input, c.hasInput = d, true
				} else if ds, _ := o.Get("dataset"); ds != nil {
					name := ds.(string)
					if _, ok := datasets[name]; !ok {
						b, err := os.ReadFile(filepath.Join(suiteDir, "datasets", name+".json"))
						if err != nil {
							t.Fatal(err)
						}
						datasets[name], _ = value.Parse(b)
					}
					c.input, c.hasInput = datasets[name], true
				}
				if b, ok := o.Get("bindings"); ok {
					bo, _ := b.(*value.Object)
					c.bindings = map[string]any{}
					for k, bv := range bo.All {
						c.bindings[k] = bv
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
						if eobj, ok := eo.(*value.Object); ok {
							code, _ := eobj.Get("code")
							c.code, _ = code.(string)
						}
					}
				}
				if tl, ok := o.Get("timelimit"); ok {
					if n, ok := tl.(value.Number); ok && n.Float64() > 0 {
						c.timeout = time.Duration(n.Float64()*4) * time.Millisecond
					}
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// run evaluates one case and reports whether it matched, with a reason.
func (c *suiteCase) run() (bool, string) {
	type outcome struct {
		v   any
		ok  bool
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: errors.New("panic")}
			}
		}()
		x, err := Compile(c.expr)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		v, ok, err := x.eval(ctx, c.input, c.hasInput, c.bindings, false)
		done <- outcome{v, ok, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(c.timeout + time.Second):
		return false, "timed out"
	}
	switch c.want {
	case "error":
		if o.err == nil {
			return false, "want error " + c.code + ", got " + value.String(o.v)
		}
		var e *Error
		if c.code != "" && errors.As(o.err, &e) && e.Code != "" && e.Code != c.code {
			return false, "want error " + c.code + ", got " + o.err.Error()
		}
		return true, ""
	case "undefined":
		if o.err != nil || o.ok {
			return false, "want undefined"
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

// TestSuite runs the official JSONata 2.0.6 test suite through the adapter
// and enforces the known-failures list in testdata.
func TestSuite(t *testing.T) {
	cases := loadSuite(t)
	knownData, _ := os.ReadFile(filepath.Join("testdata", "suite_known_failures.txt"))
	known := map[string]bool{}
	for _, line := range strings.Split(string(knownData), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			known[f[0]] = true
		}
	}
	passed := 0
	var complaints []string
	for i := range cases {
		c := &cases[i]
		ok, why := c.run()
		if ok {
			passed++
		}
		switch {
		case !ok && !known[c.id]:
			complaints = append(complaints, c.id+": "+why)
		case ok && known[c.id]:
			complaints = append(complaints, c.id+": passes now; remove it from the known failures")
		}
	}
	t.Logf("JSONata suite: %d of %d cases pass (%.1f%%)", passed, len(cases), float64(passed)*100/float64(len(cases)))
	if len(complaints) > 0 {
		t.Errorf("known-failures list is out of date:\n%s", strings.Join(complaints, "\n"))
	}
}
