package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
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

// ReleaseWhenIdle hands memory back once after a burst of requests, then
// not again until requests come and go once more.
func TestReleaseWhenIdle(t *testing.T) {
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	h := api.New(svc, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.ReleaseWhenIdle(ctx, 40*time.Millisecond)

	request := func() {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{}`))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListActivities")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	waitForced := func(after uint64) uint64 {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if n := forcedGCs(); n > after {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no collection forced after the requests stopped")
		return 0
	}
	n := waitForced(func() uint64 { b := forcedGCs(); request(); return b }())
	// Idle without requests: nothing more to release.
	time.Sleep(300 * time.Millisecond)
	if m := forcedGCs(); m != n {
		t.Errorf("%d collections forced while idle after the release, want none", m-n)
	}
	request()
	waitForced(n)
}
