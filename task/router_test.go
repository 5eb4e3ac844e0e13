package task

import (
	"context"
	"strings"
	"testing"
)

// answer is an invoker that answers with its name.
type answer string

func (a answer) Invoke(ctx context.Context, req *Request) Result { return Result{Output: string(a)} }

// picky serves only the states it lists; otherwise it answers with an error
// naming itself.
type picky struct {
	name   string
	states []string
}

func (p picky) Serves(req *Request) bool {
	for _, s := range p.states {
		if s == req.StateName {
			return true
		}
	}
	return false
}

func (p picky) Invoke(ctx context.Context, req *Request) Result {
	if p.Serves(req) {
		return Result{Output: p.name}
	}
	return Result{Error: "States.Runtime", Cause: p.name + " has no mock for " + req.StateName}
}

func TestRouter(t *testing.T) {
	t.Parallel()
	r := &Router{Fallback: picky{"mock", []string{"Mocked"}}}
	r.Handle("arn:aws:states:::*", answer("states prefix"))
	r.Handle("arn:aws:states:::sqs:sendMessage", answer("exact sqs"))
	r.Handle("arn:aws:states:::lambda:*", picky{"lambda mock", []string{"L"}})
	r.Handle("arn:aws:states:::lambda:*", answer("lambda command"))
	r.Handle("arn:aws:lambda:*", picky{"direct mock", []string{"D"}})

	tests := []struct{ state, resource, want string }{
		{"Any", "arn:aws:states:::sqs:sendMessage", "exact sqs"},
		{"Any", "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "states prefix"},
		{"L", "arn:aws:states:::lambda:invoke", "lambda mock"},
		{"Other", "arn:aws:states:::lambda:invoke", "lambda command"},
		{"Mocked", "arn:aws:states:::dynamodb:getItem", "states prefix"},
		{"Mocked", "arn:aws:lambda:us-east-1:111111111111:function:f", "mock"},
		{"D", "arn:aws:lambda:us-east-1:111111111111:function:f", "direct mock"},
		{"Mocked", "custom-resource", "mock"},
		// Nobody serves: the most specific candidate explains.
		{"X", "arn:aws:lambda:us-east-1:111111111111:function:f", "error:direct mock has no mock for X"},
		{"X", "custom-resource", "error:mock has no mock for X"},
	}
	for _, tt := range tests {
		res := r.Invoke(context.Background(), &Request{StateName: tt.state, Resource: tt.resource})
		got, _ := res.Output.(string)
		if res.Failed() {
			got = "error:" + res.Cause
		}
		if got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.state, tt.resource, got, tt.want)
		}
	}

	star := &Router{}
	star.Handle("*", answer("everything"))
	if res := star.Invoke(context.Background(), &Request{Resource: "x"}); res.Output != "everything" {
		t.Errorf("*: %+v", res)
	}
	empty := &Router{}
	res := empty.Invoke(context.Background(), &Request{StateName: "S", Resource: "arn:x"})
	if res.Error != "States.Runtime" || !strings.Contains(res.Cause, "arn:x") || !strings.Contains(res.Cause, `"S"`) {
		t.Errorf("empty router: %+v", res)
	}
}

func TestRouterImmediate(t *testing.T) {
	t.Parallel()
	r := &Router{Fallback: answer("blocking fallback")}
	r.Handle("fast", ImmediateFunc(func(context.Context, *Request) Result { return Result{Output: "fast"} }))
	r.Handle("slow", answer("slow"))
	if !r.Immediate(&Request{Resource: "fast"}) {
		t.Error("a request routed to an ImmediateFunc is not immediate")
	}
	for _, res := range []string{"slow", "other"} {
		if r.Immediate(&Request{Resource: res}) {
			t.Errorf("a request for %s, routed to an invoker that may block, is immediate", res)
		}
	}
	if !(&Router{}).Immediate(&Request{Resource: "x"}) {
		t.Error("a request no invoker serves (answered with an error at once) is not immediate")
	}
	if IsImmediate(answer("a"), &Request{}) {
		t.Error("an invoker without Immediate is immediate")
	}
}
