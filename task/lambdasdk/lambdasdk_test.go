package lambdasdk

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/internal/awstest"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/lambdashape"
	"github.com/stepd/stepd/value"
)

func TestNew(t *testing.T) {
	awstest.Env(t, "")
	for _, tt := range []struct {
		cfg      Config
		function string
		want     string
	}{
		{Config{Region: "us-east-1"}, "", "no function"},
		{Config{Region: "us-east-1", Endpoint: "ftp://x"}, "f", `want an http or https Endpoint URL, got "ftp://x"`},
		{Config{}, "f", "no region"},
	} {
		if _, err := New(&tt.cfg, tt.function, time.Second); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v, %q): %v, want an error containing %q", tt.cfg, tt.function, err, tt.want)
		}
	}
	t.Setenv("AWS_REGION", "ap-south-1")
	if _, err := New(&Config{}, "f", time.Second); err != nil {
		t.Errorf("region from AWS_REGION: %v", err)
	}
}

// TestInvoker calls a fake Lambda Invoke API: Invoke calls the function New
// was given, InvokeFunction the function and qualifier the task names.
func TestInvoker(t *testing.T) {
	awstest.Env(t, "")
	calls := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls <- r.URL.RequestURI()
		if !strings.Contains(r.Header.Get("Authorization"), "/eu-west-3/lambda/aws4_request") {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		if strings.Contains(r.URL.Path, "fails") {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorMessage":"no items","errorType":"OrderError"}`))
			return
		}
		w.Write(append(append([]byte(`{"got":`), body...), '}'))
	}))
	defer srv.Close()
	inv, err := New(&Config{Region: "eu-west-3", Endpoint: srv.URL}, "echo", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	in := value.ObjectOf("n", value.Int(1))

	res := inv.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::aws-sdk:lambda:invoke", Input: in})
	if res.Failed() || value.String(res.Output) != `{"got":{"n":1}}` {
		t.Errorf("Invoke: %+v", res)
	}
	if c := <-calls; c != "/2015-03-31/functions/echo/invocations" {
		t.Errorf("Invoke called %s", c)
	}

	for _, tt := range []struct{ input, call, error string }{
		{`{"FunctionName":"other","Qualifier":"prod"}`, "/2015-03-31/functions/other/invocations?Qualifier=prod", ""},
		{`{"FunctionName":"other:7","Qualifier":"prod"}`, "/2015-03-31/functions/other%3A7/invocations", ""},
		{`{"FunctionName":"fails"}`, "/2015-03-31/functions/fails/invocations", "OrderError"},
	} {
		params, err := value.ParseString(tt.input)
		if err != nil {
			t.Fatal(err)
		}
		req := &task.Request{Resource: "arn:aws:states:::lambda:invoke", Input: params}
		call, ok := lambdashape.CallOf(req)
		if !ok {
			t.Fatalf("%s: not a Lambda call", tt.input)
		}
		req.Input = in
		res := inv.InvokeFunction(context.Background(), req, call)
		if res.Error != tt.error {
			t.Errorf("%s: %+v, want error %q", tt.input, res, tt.error)
		}
		if c := <-calls; c != tt.call {
			t.Errorf("%s: called %s, want %s", tt.input, c, tt.call)
		}
	}
}
