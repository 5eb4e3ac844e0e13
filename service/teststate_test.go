package service_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/value"
)

var placeholder = regexp.MustCompile(`<[^<>]*>`)

// like compares an expected value (with the corpus's wildcards) to a
// result.
func like(want, got any) bool {
	switch w := want.(type) {
	case string:
		if w == "date" || w == "datetime" || w == "timestamp" || (strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">")) {
			return true
		}
		g, ok := got.(string)
		if !ok {
			return false
		}
		if !strings.Contains(w, "<") {
			return w == g
		}
		parts := placeholder.Split(w, -1)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		g = strings.NewReplacer("arn:aws:", "arn:<partition>:", ":us-east-1:", ":<region>:").Replace(g)
		return regexp.MustCompile("^"+strings.Join(parts, ".*")+"$").MatchString(g) || w == g
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !like(w[i], g[i]) {
				return false
			}
		}
		return true
	case *value.Object:
		g, ok := got.(*value.Object)
		if !ok || g.Len() != w.Len() {
			return false
		}
		for k, v := range w.All {
			gv, ok := g.Get(k)
			if !ok || !like(v, gv) {
				return false
			}
		}
		return true
	}
	return value.Equal(want, got)
}

// TestTestStateCorpus runs the AWS-recorded TestState cases and reports how
// many match status, output, error, cause and next state. It fails if the
// count falls below the floor recorded here (which may only rise).
func TestTestStateCorpus(t *testing.T) {
	files := shared.Cases(t, "test_state.*.json")
	svc := service.New(service.Config{Account: "111111111111", MockResults: awsmodel.CheckResult})
	defer svc.Close()
	passed, total := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := value.Parse(data)
		c := v.(*value.Object)
		reqV, _ := c.Get("request")
		req := reqV.(*value.Object)
		expV, _ := c.Get("expected")
		exp := expV.(*value.Object)
		total++
		in := api.TestStateRequest(req)
		if exp.Has("error") && !exp.Has("status") {
			// AWS rejected the request: the same error code and message.
			code, _ := exp.Get("error")
			msg, _ := exp.Get("message")
			_, err := svc.TestState(context.Background(), in)
			if gotCode, gotMsg, ok := api.AWSError(err); !ok || gotCode != code || gotMsg != msg {
				t.Logf("%s: rejection %v, want %v: %v", filepath.Base(f), err, code, msg)
				continue
			}
			passed++
			continue
		}
		if mocks, ok := c.Get("mocks"); ok && mocks != nil {
			cfg, err := mock.FromValue(mocks)
			if err == nil {
				in.Invoker, _ = cfg.Invoker("", "")
			}
		}
		out, err := svc.TestState(context.Background(), in)
		if err != nil {
			t.Logf("%s: %v", filepath.Base(f), err)
			continue
		}
		if why := compareTestState(exp, out); why != "" {
			t.Logf("%s: %s", filepath.Base(f), why)
			continue
		}
		passed++
	}
	t.Logf("TestState cases: %d of %d match status, output, error, cause and next state", passed, total)
	if floor := 118; passed < floor {
		t.Errorf("only %d TestState cases pass; the floor is %d", passed, floor)
	}
}

func str(o *value.Object, k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

func compareTestState(exp *value.Object, out *interp.TestOutcome) string {
	if s := str(exp, "status"); s != out.Status {
		return "status " + out.Status + ", want " + s
	}
	if s := str(exp, "nextState"); s != out.NextState {
		return "nextState " + out.NextState + ", want " + s
	}
	if e, ok := exp.Get("error"); ok && e != out.Error {
		return "error " + out.Error + ", want " + value.String(e)
	}
	if c, ok := exp.Get("cause"); ok {
		if cs, isStr := c.(string); isStr && !like(cs, out.Cause) {
			return "cause " + out.Cause + ", want " + cs
		}
	}
	if o, ok := exp.Get("output"); ok && !like(o, out.Output) {
		return "output " + value.String(out.Output) + ", want " + value.String(o)
	}
	return ""
}
