package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// get sends GET path to addr with the given Host header (and signed for
// service with key "k", when service is not empty) and returns the
// status and body.
func get(t *testing.T, addr net.Addr, host, path, service string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr.String()+path, nil)
	if host != "" {
		req.Host = host
	}
	if service != "" {
		sum := sha256.Sum256(nil)
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "k", SecretAccessKey: "secret"}, req, hash, service, "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestOpsHostCheck: /metrics, /healthz, /readyz and the console answer
// only requests addressed to a loopback name, an IP literal (as an
// orchestrator's probe is) or an --allow-host name, as the API does.
func TestOpsHostCheck(t *testing.T) {
	s, _ := start(t, Config{Console: true, AllowHosts: []string{"stepd.internal"}})
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/"} {
		for _, host := range []string{"", "localhost:8083", "10.1.2.3:8083", "[fd00::7]:8083", "stepd.internal"} {
			if code, body := get(t, s.Addr(), host, path, ""); code != 200 {
				t.Errorf("GET %s with Host %q: %d %s, want 200", path, host, code, body)
			}
		}
		for _, host := range []string{"evil.example:8083", "127.0.0.1.evil.example", "localhost.evil.example"} {
			if code, body := get(t, s.Addr(), host, path, ""); code != 403 || !strings.Contains(body, "AccessDeniedException") {
				t.Errorf("GET %s with Host %q: %d %s, want 403 AccessDeniedException", path, host, code, body)
			}
		}
	}
}

// TestMetricsNeedKeys: with access keys, /metrics needs a SigV4 signature
// (service states or aps); /healthz and /readyz do not, but keep the Host
// check. With a metrics listener of its own, /metrics is there, unsigned
// and Host-checked, and no longer on the API's listener.
func TestMetricsNeedKeys(t *testing.T) {
	keys := map[string]string{"k": "secret"}
	s, _ := start(t, Config{AccessKeys: keys, Region: "us-east-1"})
	if code, body := get(t, s.Addr(), "", "/metrics", ""); code != 403 || !strings.Contains(body, "MissingAuthenticationToken") {
		t.Errorf("unsigned /metrics: %d %s, want 403", code, body)
	}
	for _, service := range []string{"states", "aps"} {
		if code, body := get(t, s.Addr(), "", "/metrics", service); code != 200 || !strings.Contains(body, "stepd_") {
			t.Errorf("/metrics signed for %s: %d %.200s, want 200", service, code, body)
		}
	}
	if code, body := get(t, s.Addr(), "", "/metrics", "s3"); code != 403 {
		t.Errorf("/metrics signed for s3: %d %s, want 403", code, body)
	}
	if code, _ := get(t, s.Addr(), "", "/healthz", ""); code != 200 {
		t.Errorf("unsigned /healthz: %d, want 200", code)
	}
	if code, _ := get(t, s.Addr(), "evil.example", "/healthz", ""); code != 403 {
		t.Errorf("/healthz for evil.example: %d, want 403", code)
	}

	m, _ := start(t, Config{AccessKeys: keys, Region: "us-east-1", MetricsAddr: "127.0.0.1:0"})
	if m.MetricsAddr() == nil {
		t.Fatal("no metrics listener")
	}
	if code, body := get(t, m.MetricsAddr(), "10.0.0.5:9090", "/metrics", ""); code != 200 || !strings.Contains(body, "stepd_") {
		t.Errorf("unsigned /metrics on the metrics listener: %d %.200s, want 200", code, body)
	}
	if code, _ := get(t, m.MetricsAddr(), "evil.example", "/metrics", ""); code != 403 {
		t.Errorf("/metrics on the metrics listener for evil.example: %d, want 403", code)
	}
	if code, body := get(t, m.Addr(), "", "/metrics", "states"); code != 404 || !strings.Contains(body, "--metrics-addr") {
		t.Errorf("/metrics on the API's listener: %d %s, want 404 naming --metrics-addr", code, body)
	}
}
