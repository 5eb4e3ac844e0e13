package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHealth runs stepd health against a real stepd serve on 127.0.0.1:
// exit 0 when it is ready (/readyz) or alive (--live), 1 when nothing
// answers or the answer is not 200, each failure told in one line.
func TestHealth(t *testing.T) {
	t.Parallel()
	url, _ := serveLogging(t, "--data", "")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	_, port, _ := net.SplitHostPort(addr)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"health", "--addr", addr}, "http://" + addr + `/readyz: {"resumed":0,"status":"ok","store":"ok"}`},
		{[]string{"health", "--addr", "0.0.0.0:" + port}, "http://" + addr + `/readyz: {"resumed":0,"status":"ok"`},
		{[]string{"health", "--addr", addr, "--live"}, "http://" + addr + `/healthz: {"status":"ok"}`},
		{[]string{"health", "--endpoint", "http://localhost:" + port + "/"}, "http://localhost:" + port + `/readyz: {"resumed":0,"status":"ok"`},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != exitOK || !strings.HasPrefix(stdout, tt.want) || stderr != "" {
			t.Errorf("stepd %s: exit %d, stdout %q, stderr %q; want 0 and %q…", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
		}
	}
	// The binary, with the address in the environment, as a container's
	// HEALTHCHECK runs it.
	cmd := exec.Command(stepdBinary(t), "health")
	cmd.Env = append(os.Environ(), "STEPD_ADDR="+addr)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"status":"ok"`) {
		t.Errorf("stepd health with STEPD_ADDR=%s: %v, %q", addr, err, out)
	}

	// Nothing listening: a port that was free a moment ago.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"health", "--addr", closed}, "stepd health: http://" + closed + "/readyz: dial tcp " + closed + ": connect: connection refused\n"},
		// The server answers, but not 200: its API's 404 under another path.
		{[]string{"health", "--endpoint", "http://127.0.0.1:" + port + "/elsewhere"}, "stepd health: http://127.0.0.1:" + port + "/elsewhere/readyz: 404 Not Found"},
	} {
		code, stdout, stderr := runMain(t, "", tt.args...)
		if code != exitFail || stdout != "" || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("stepd %s: exit %d, stdout %q, stderr %q; want 1 and %q…", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
		}
	}
}
