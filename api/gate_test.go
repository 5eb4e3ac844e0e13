package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
)

// TestReadGate checks that the operations of readOps take their turn at
// the handler's places and the others do not: with every place taken, a
// DescribeExecution waits (and gives up when its request ends), while a
// StartExecution is answered; once a place is free, the read is answered.
func TestReadGate(t *testing.T) {
	svc := service.New(service.Config{Store: memory.New(), Log: slog.New(slog.DiscardHandler)})
	defer svc.Close()
	h := New(svc, slog.New(slog.DiscardHandler))
	for name := range readOps {
		if h.ops[name] == nil {
			t.Errorf("readOps names %s, which is no operation", name)
		}
	}
	call := func(ctx context.Context, op, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).WithContext(ctx)
		req.Host = "127.0.0.1"
		req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	ctx := context.Background()
	if code := call(ctx, "CreateStateMachine", `{"name":"g","roleArn":"arn:aws:iam::123456789012:role/r","definition":"{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"}`); code != 200 {
		t.Fatalf("CreateStateMachine: %d", code)
	}
	for range cap(h.reads) {
		h.reads <- struct{}{}
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	describe := `{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:g:e1"}`
	if code := call(ended, "DescribeExecution", describe); code != 503 {
		t.Errorf("a read whose request ended while every place was taken: %d, want 503", code)
	}
	if code := call(ctx, "StartExecution", `{"stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:g","name":"e1"}`); code != 200 {
		t.Errorf("StartExecution while every read place was taken: %d, want 200", code)
	}
	<-h.reads
	if code := call(ctx, "DescribeExecution", describe); code != 200 {
		t.Errorf("a read with a place free: %d, want 200", code)
	}
	if len(h.reads) != cap(h.reads)-1 {
		t.Errorf("%d places taken after the read, want %d", len(h.reads), cap(h.reads)-1)
	}
}
