package awstest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartMoto starts moto's server (moto_server, from the moto Python
// package) on 127.0.0.1 once per test binary: one endpoint for every
// service moto emulates. Without moto_server the test skips, and fails
// when CI=true. StopEmulators ends it.
func StartMoto(t *testing.T) *Emulator {
	t.Helper()
	emuMu.Lock()
	defer emuMu.Unlock()
	if e, ok := running["moto"]; ok {
		return e
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		// Under CI a missing moto fails the test, unless .ci/run found
		// none to install (STEPD_NO_MOTO: it comes from PyPI only).
		if os.Getenv("CI") == "true" && os.Getenv("STEPD_NO_MOTO") == "" {
			t.Fatal("moto_server is not installed (the moto Python package)")
		}
		t.Skip("moto_server is not installed (the moto Python package, from PyPI)")
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(port)
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", p)
	// None of the test's AWS settings: botocore, which moto uses, refuses
	// an empty AWS_PROFILE (awstest.Env sets one).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("moto_server: %v", err)
	}
	e := &Emulator{Name: "moto", URL: "http://127.0.0.1:" + p, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(e.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-e.exited:
			t.Fatalf("moto_server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			e.stop()
			t.Fatalf("moto_server did not listen on %s within 60 s: %s", p, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	running["moto"] = e
	return e
}
