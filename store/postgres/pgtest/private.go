package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// An Instance is a PostgreSQL server of a test's own (initdb and pg_ctl in
// a folder of its own, on a port of its own), which the test may stop,
// restart or freeze without disturbing the shared server or other tests.
type Instance struct {
	tb   testing.TB
	bin  string // the folder of initdb, pg_ctl and postgres
	data string // the data folder
	port int
	as   *user.User // the user the server runs as (postgres when this process is root)
	log  string     // the server's log file
}

// PrivateOptions tunes Private.
type PrivateOptions struct {
	// Dir is the folder the data folder is made in (a small filesystem,
	// for a test of a full disk); empty: a temporary folder.
	Dir string
	// WALDir, when set, is the folder the write-ahead log's folder is
	// made in (initdb -X), apart from the data folder, with the server's
	// log: a test can then fill the data folder's filesystem alone, which
	// PostgreSQL answers with errors (SQLSTATE 53100) rather than by
	// stopping, as it does when it cannot write its WAL. Like Dir, the
	// server's user must be able to reach it.
	WALDir string
}

// Private starts a PostgreSQL server of the test's own and stops it (and
// removes its files) when tb ends. It skips the test when initdb is not
// installed (fails it when CI=true). The database is postgres, the user
// postgres, with trust authentication on 127.0.0.1.
func Private(tb testing.TB, opts PrivateOptions) *Instance {
	tb.Helper()
	bin, err := serverBin()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("a private PostgreSQL: %v (CI=true: .ci/run installs it)", err)
		}
		tb.Skipf("a private PostgreSQL: %v; skipping", err)
	}
	i := &Instance{tb: tb, bin: bin}
	if os.Geteuid() == 0 {
		// initdb refuses root: the server runs as postgres.
		if i.as, err = user.Lookup("postgres"); err != nil {
			tb.Fatalf("a private PostgreSQL as root needs the user postgres: %v", err)
		}
	}
	parent, err := os.MkdirTemp(opts.Dir, "stepd-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		tb.Fatal(err)
	}
	i.data, i.log = filepath.Join(parent, "data"), filepath.Join(parent, "server.log")
	if err := os.Mkdir(i.data, 0o700); err != nil {
		tb.Fatal(err)
	}
	for _, p := range []string{parent, i.data} {
		i.own(p)
	}
	args := []string{"-D", i.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"}
	if opts.WALDir != "" {
		walParent, err := os.MkdirTemp(opts.WALDir, "stepd-pg-wal-")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(walParent) })
		if err := os.Chmod(walParent, 0o755); err != nil {
			tb.Fatal(err)
		}
		i.own(walParent)
		i.log = filepath.Join(walParent, "server.log")
		args = append(args, "-X", filepath.Join(walParent, "wal")) // initdb makes it
	}
	if out, err := i.run("initdb", args...); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	// The log file is made by this process (as the server's user) so that
	// the server can append to it.
	if err := os.WriteFile(i.log, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	i.own(i.log)
	i.port = freePort(tb)
	i.Start()
	tb.Cleanup(func() {
		if out, err := i.run("pg_ctl", "-D", i.data, "-m", "immediate", "-w", "stop"); err != nil && !strings.Contains(string(out), "PID file") {
			tb.Logf("stopping the private PostgreSQL: %v\n%s", err, out)
		}
	})
	return i
}

// DSN is the connection string of the instance's database postgres.
func (i *Instance) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", i.port)
}

// Start starts the server (again) and waits until it takes connections.
func (i *Instance) Start() {
	i.tb.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories='' -c fsync=off -c max_connections=200", i.port)
	if out, err := i.run("pg_ctl", "-D", i.data, "-l", i.log, "-o", opts, "-w", "-t", "120", "start"); err != nil {
		i.tb.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, i.Log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		c, err := pgx.Connect(ctx, i.DSN())
		if err == nil {
			c.Close(ctx)
			return
		}
		if ctx.Err() != nil {
			i.tb.Fatalf("the private PostgreSQL does not take connections: %v\n%s", err, i.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server: mode is pg_ctl's (immediate: as a crash, every
// connection cut; fast: as a clean shutdown).
func (i *Instance) Stop(mode string) {
	i.tb.Helper()
	if out, err := i.run("pg_ctl", "-D", i.data, "-m", mode, "-w", "-t", "120", "stop"); err != nil {
		i.tb.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Freeze stops every process of the server with SIGSTOP (a host that
// hangs: connections stay open and nothing answers); Thaw continues them.
func (i *Instance) Freeze() { i.signal(syscall.SIGSTOP) }

// Thaw continues a frozen server.
func (i *Instance) Thaw() { i.signal(syscall.SIGCONT) }

// signal sends sig to the postmaster and its children.
func (i *Instance) signal(sig syscall.Signal) {
	i.tb.Helper()
	b, err := os.ReadFile(filepath.Join(i.data, "postmaster.pid"))
	if err != nil {
		i.tb.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		i.tb.Fatalf("postmaster.pid: %v", err)
	}
	pids := []int{pid}
	if out, err := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
}

// Log returns what the server logged.
func (i *Instance) Log() string {
	b, _ := os.ReadFile(i.log)
	return string(b)
}

// run runs one of the server's commands, as the server's user.
func (i *Instance) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(i.bin, name), args...)
	if i.as != nil {
		uid, _ := strconv.Atoi(i.as.Uid)
		gid, _ := strconv.Atoi(i.as.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "HOME="+i.as.HomeDir, "USER=postgres", "LOGNAME=postgres")
	}
	return cmd.CombinedOutput()
}

// own gives path to the server's user.
func (i *Instance) own(path string) {
	if i.as == nil {
		return
	}
	uid, _ := strconv.Atoi(i.as.Uid)
	gid, _ := strconv.Atoi(i.as.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		i.tb.Fatal(err)
	}
}

// serverBin finds the folder of initdb, pg_ctl and postgres: the one of
// initdb on PATH (its symbolic link followed), or Debian's.
func serverBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) > 0 {
		return filepath.Dir(m[len(m)-1]), nil
	}
	return "", fmt.Errorf("initdb is not installed (Debian: apt-get install postgresql)")
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
