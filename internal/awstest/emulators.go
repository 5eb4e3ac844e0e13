package awstest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Emulator is a third-party emulator of an AWS service, started from the
// npm packages installed (npm ci) in a testdata folder.
type Emulator struct {
	// Name is the npm package: s3rver, dynalite or fauxqs.
	Name string
	// URL is its endpoint on 127.0.0.1.
	URL    string
	cmd    *exec.Cmd
	out    *bytes.Buffer
	exited chan struct{}
	data   string // s3rver's folder
}

var (
	emuMu   sync.Mutex
	running = map[string]*Emulator{}
)

// StartEmulator starts the named emulator (s3rver for S3, dynalite for
// DynamoDB, fauxqs for SQS and SNS) once per test binary, from the npm
// packages in dir/node_modules. Without node or the packages the test
// skips, and fails when CI=true. StopEmulators ends them.
func StartEmulator(t *testing.T, dir, name string) *Emulator {
	t.Helper()
	emuMu.Lock()
	defer emuMu.Unlock()
	if e, ok := running[name]; ok {
		return e
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("emulator %s: %s", name, why)
		}
		t.Skipf("emulator %s: %s (run npm ci in %s)", name, why, dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	scripts := map[string]string{
		"s3rver":   "node_modules/s3rver/bin/s3rver.js",
		"dynalite": "node_modules/dynalite/cli.js",
		"fauxqs":   "node_modules/fauxqs/dist/cli.js",
	}
	script := filepath.Join(dir, scripts[name])
	if _, err := os.Stat(script); err != nil {
		missing(script + " is missing")
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("emulator %s: %v", name, err)
	}
	p := strconv.Itoa(port)
	var args []string
	env := os.Environ()
	switch name {
	case "s3rver":
		data, err := os.MkdirTemp("", "stepd-s3rver-")
		if err != nil {
			t.Fatal(err)
		}
		args = []string{script, "-d", data, "-a", "127.0.0.1", "-p", p, "--silent"}
		defer func() {
			if e := running[name]; e != nil {
				e.data = data
			} else {
				os.RemoveAll(data)
			}
		}()
	case "dynalite":
		args = []string{script, "--host", "127.0.0.1", "--port", p, "--createTableMs", "0", "--deleteTableMs", "0"}
	case "fauxqs":
		args = []string{script}
		env = append(env, "FAUXQS_PORT="+p, "FAUXQS_HOST=127.0.0.1", "FAUXQS_LOGGER=false")
	default:
		t.Fatalf("unknown emulator %s", name)
	}
	cmd := exec.Command(node, args...)
	cmd.Env = env
	cmd.Dir = dir
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, killed whole by StopEmulators; and killed with
	// the test binary if that dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("emulator %s: %v", name, err)
	}
	e := &Emulator{Name: name, URL: "http://127.0.0.1:" + p, cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(e.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-e.exited:
			t.Fatalf("emulator %s exited: %s", name, out.String())
		default:
		}
		if time.Now().After(deadline) {
			e.stop()
			t.Fatalf("emulator %s did not listen on %s within 30 s: %s", name, p, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	running[name] = e
	return e
}

func (e *Emulator) stop() {
	if e.cmd.Process != nil {
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.exited
	}
	if e.data != "" {
		os.RemoveAll(e.data)
	}
}

// StopEmulators ends the emulators StartEmulator started; call it from
// TestMain after m.Run.
func StopEmulators() {
	emuMu.Lock()
	defer emuMu.Unlock()
	for name, e := range running {
		e.stop()
		delete(running, name)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
