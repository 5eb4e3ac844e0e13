package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
)

// forcedGCs counts the collections forced by the program (FreeOSMemory
// forces one).
func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// idleServer serves h, and returns what sends it one request.
func idleServer(t *testing.T) (*api.Handler, func()) {
	t.Helper()
	svc := service.New(service.Config{Store: memory.New()})
	t.Cleanup(svc.Close)
	h := api.New(svc, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, func() {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{}`))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListActivities")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// ReleaseWhenIdle, on its own ticker, hands memory back after a burst of
// requests.
func TestReleaseWhenIdle(t *testing.T) {
	h, request := idleServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { h.ReleaseWhenIdle(ctx, 40*time.Millisecond); close(stopped) }()
	defer func() { cancel(); <-stopped }() // no release after the test
	before := forcedGCs()
	request()
	for deadline := time.Now().Add(10 * time.Second); forcedGCs() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no collection forced after the requests stopped")
		}
	}
}

// ReleaseWhenIdle hands memory back once after a burst of requests, once
// the API has been idle for the idle period, then not again until requests
// come and go once more. The test sends the ticks: each send returns once
// the previous tick has been dealt with, so a tick sent twice makes sure
// the first was.
func TestReleaseOnceWhenIdle(t *testing.T) {
	h, request := idleServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	ticks, stopped := make(chan time.Time), make(chan struct{})
	const idle = time.Minute
	t0 := time.Unix(1_000_000, 0)
	go func() { api.ReleaseWhenIdleTicks(ctx, h, idle, ticks, t0); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	tick := func(at time.Duration) {
		ticks <- t0.Add(at)
		ticks <- t0.Add(at) // the first has been dealt with
	}
	released := func(at time.Duration, want bool, why string) uint64 {
		t.Helper()
		before := forcedGCs()
		tick(at)
		if got := forcedGCs() > before; got != want {
			t.Fatalf("at %v: released %v, want %v (%s)", at, got, want, why)
		}
		return forcedGCs()
	}
	released(time.Second, false, "nothing has been served")
	request()
	released(2*time.Second, false, "a request came")
	released(2*time.Second+idle-time.Millisecond, false, "not idle for the idle period yet")
	released(2*time.Second+idle, true, "idle for the idle period after a request")
	released(2*time.Second+2*idle, false, "idle since the release")
	released(2*time.Second+10*idle, false, "idle since the release")
	request()
	released(11*idle, false, "a request came")
	released(12*idle, true, "idle for the idle period after a request")
}

// TestReleaseAfterWork: executions that run on after the requests that
// started them (Handler.Work moves) put the release off until they too
// have stood still for the idle period.
func TestReleaseAfterWork(t *testing.T) {
	h, request := idleServer(t)
	var work atomic.Int64
	h.Work = work.Load
	ctx, cancel := context.WithCancel(context.Background())
	ticks, stopped := make(chan time.Time), make(chan struct{})
	const idle = time.Minute
	t0 := time.Unix(1_000_000, 0)
	go func() { api.ReleaseWhenIdleTicks(ctx, h, idle, ticks, t0); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	released := func(at time.Duration, want bool, why string) {
		t.Helper()
		before := forcedGCs()
		ticks <- t0.Add(at)
		ticks <- t0.Add(at) // the first has been dealt with
		if got := forcedGCs() > before; got != want {
			t.Fatalf("at %v: released %v, want %v (%s)", at, got, want, why)
		}
	}
	request()
	released(time.Second, false, "a request came")
	work.Add(10)
	released(time.Second+idle/2, false, "executions stepped")
	work.Add(10)
	released(time.Second+idle, false, "executions stepped since")
	released(time.Second+idle+idle/2-time.Millisecond, false, "the work has not stood still for the idle period yet")
	released(time.Second+2*idle, true, "the work stood still for the idle period")
}
