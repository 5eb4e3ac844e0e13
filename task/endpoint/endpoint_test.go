package endpoint

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// TestInvoker POSTs task inputs to a local server and checks the request it
// sends and how each kind of answer becomes the task result.
func TestInvoker(t *testing.T) {
	t.Parallel()
	type seen struct{ method, contentType, resource, state, token, body string }
	got := make(chan seen, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Stepd-Resource"), r.Header.Get("X-Stepd-State-Name"), r.Header.Get("X-Stepd-Task-Token"), string(body)}:
		default:
		}
		switch r.URL.Path {
		case "/echo":
			w.Write(append(append([]byte(`{"got":`), body...), '}'))
		case "/empty":
		case "/text":
			w.Write([]byte("not json"))
		case "/broken":
			http.Error(w, strings.Repeat("x", 3000)+" database down", http.StatusBadGateway)
		case "/asl-error":
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"Error":"My.Error","Cause":"why"}`))
		case "/function-error":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorMessage":"no stock","errorType":"OutOfStock"}`))
		case "/shaped":
			w.Write([]byte(`{"errorType":"CustomError","errorMessage":"boom"}`))
		case "/unknown-function-error":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`"out of memory"`))
		case "/slow":
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)

	tests := []struct {
		name, path   string
		lambda       bool
		shaped       bool
		timeout      time.Duration
		output       string // JSON when error is empty
		error, cause string // error name, and text its cause contains
	}{
		{name: "JSON answer", path: "/echo", output: `{"got":{"n":[1,"é"]}}`},
		{name: "no answer is null", path: "/empty", output: `null`},
		{name: "text answer", path: "/text", error: "States.TaskFailed", cause: "answered with something other than JSON"},
		{name: "error status quotes the end of the body", path: "/broken", error: "States.TaskFailed", cause: "502 Bad Gateway: ...xxx"},
		{name: "ASL error object", path: "/asl-error", error: "My.Error", cause: "why"},
		// X-Amz-Function-Error fails the task from any handler, as Lambda.
		{name: "function error header on a Url", path: "/function-error", error: "OutOfStock", cause: `"errorMessage":"no stock"`},
		{name: "Lambda function error", path: "/function-error", lambda: true, error: "OutOfStock", cause: `"errorMessage":"no stock"`},
		{name: "function error without errorType", path: "/unknown-function-error", error: "Lambda.Unknown", cause: `"out of memory"`},
		// Lambda's error shape without the header fails only a handler
		// marked Lambda-shaped.
		{name: "error shape from an unmarked Url", path: "/shaped", output: `{"errorType":"CustomError","errorMessage":"boom"}`},
		{name: "error shape from a Lambda-shaped Url", path: "/shaped", shaped: true, error: "CustomError", cause: `"errorMessage":"boom"`},
		{name: "Lambda-shaped Url answering a result", path: "/echo", shaped: true, output: `{"got":{"n":[1,"é"]}}`},
		{name: "error shape from a Lambda-shaped endpoint", path: "/shaped", lambda: true, shaped: true, error: "CustomError", cause: `"errorType":"CustomError"`},
		{name: "timeout", path: "/slow", timeout: 50 * time.Millisecond, error: "States.Timeout", cause: "did not answer within 50ms"},
	}
	for _, tt := range tests {
		timeout := tt.timeout
		if timeout == 0 {
			timeout = 10 * time.Second
		}
		inv := &Invoker{URL: srv.URL + tt.path, Lambda: tt.lambda, LambdaShaped: tt.shaped, Timeout: timeout}
		in, err := value.ParseString(`{"n":[1,"é"]}`)
		if err != nil {
			t.Fatal(err)
		}
		res := inv.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::sqs:sendMessage", StateName: "Send", TaskToken: "tok-1", Input: in})
		if res.Error != tt.error || !strings.Contains(res.Cause, tt.cause) {
			t.Errorf("%s: error %q cause %q, want %q containing %q", tt.name, res.Error, res.Cause, tt.error, tt.cause)
		} else if tt.error == "" && value.String(res.Output) != tt.output {
			t.Errorf("%s: output %s, want %s", tt.name, value.String(res.Output), tt.output)
		}
		s := <-got
		want := seen{http.MethodPost, "application/json", "arn:aws:states:::sqs:sendMessage", "Send", "tok-1", `{"n":[1,"é"]}`}
		if s != want {
			t.Errorf("%s: request %+v, want %+v", tt.name, s, want)
		}
	}
}
