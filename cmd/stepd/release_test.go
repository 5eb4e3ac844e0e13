package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestVersion checks `stepd version` and `stepd --version` in process.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		code, stdout, _ := runMain(t, "", arg)
		if code != 0 || !strings.HasPrefix(stdout, "stepd ") || !strings.Contains(stdout, runtime.Version()) {
			t.Errorf("stepd %s: exit %d, %q", arg, code, stdout)
		}
	}
}

// TestReleaseArchive runs the release recipe for this machine's platform
// and checks its archive: a static binary (no interpreter, no shared
// library) that reports the version it was built with, the README and the
// manual it links to (docs/cli.md among them);
// and SHA256SUMS naming the archive.
func TestReleaseArchive(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the archive check reads an ELF binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		skipUnlessCI(t, "bash is not installed: %v", err)
	}
	out := t.TempDir()
	const version = "v9.8.7"
	cmd := exec.Command("bash", "../../scripts/release.sh", version, out)
	cmd.Env = append(os.Environ(), "TARGETS=linux/"+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	name := "stepd_9.8.7_linux_" + runtime.GOARCH
	files := untar(t, filepath.Join(out, name+".tar.gz"))
	bin := files[name+"/stepd"]
	if bin == nil || files[name+"/README.md"] == nil || files[name+"/docs/cli.md"] == nil {
		t.Fatalf("archive holds %d files, want %s/stepd, %s/README.md and %s/docs/cli.md", len(files), name, name, name)
	}
	checkStatic(t, "the release binary", bin)
	path := filepath.Join(t.TempDir(), "stepd")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(path, "--version").Output()
	if err != nil || !strings.HasPrefix(string(got), "stepd "+version+"\n") {
		t.Errorf("stepd --version: %q, %v", got, err)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), name+".tar.gz") {
		t.Errorf("SHA256SUMS: %q, %v", sums, err)
	}
}

// checkStatic fails the test unless the ELF binary bin is statically
// linked: no interpreter (PT_INTERP), no dynamic section, no shared
// library needed (DT_NEEDED).
func checkStatic(t *testing.T, what string, bin []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (program header %v)", what, p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		t.Errorf("%s needs shared libraries: %v", what, libs)
	}
}

// TestStaticBuild runs the build line of the README (CGO_ENABLED=0 go
// build …) with its output in a temporary folder, and checks that the
// binary is static, as the release script's and the image's are.
func TestStaticBuild(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the check reads an ELF binary")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.SplitSeq(string(readme), "\n") {
		if strings.HasPrefix(l, "CGO_ENABLED=0 go build ") {
			line = l
		}
	}
	args := strings.Fields(line)
	if len(args) < 4 || args[len(args)-1] != "./cmd/stepd" || !slices.Contains(args, "-o") {
		t.Fatalf("README.md has no line CGO_ENABLED=0 go build … -o FILE ./cmd/stepd: %q", line)
	}
	out := filepath.Join(t.TempDir(), "stepd")
	args[slices.Index(args, "-o")+1] = out
	build := exec.Command(args[1], args[2:]...)
	build.Dir = "../.."
	build.Env = append(os.Environ(), args[0])
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkStatic(t, "the README's build", bin)
	if got, err := exec.Command(out, "version").Output(); err != nil || !strings.HasPrefix(string(got), "stepd ") {
		t.Errorf("stepd version: %q, %v", got, err)
	}
}

// untar reads a .tar.gz archive's regular files.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

// skipUnlessCI skips the test, or fails it when CI=true.
func skipUnlessCI(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TestDockerImage builds the Dockerfile and runs the image: it serves
// /readyz on port 8083 as a non-root user, and its HEALTHCHECK (stepd
// health) reports it healthy; the shell variant (--target shell) has sh
// and runs stepd the same way. Docker's engine is often not reachable (as
// in CI sandboxes): the test then skips, also under CI=true.
func TestDockerImage(t *testing.T) {
	t.Parallel()
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("docker's engine is not available (docker info: %v); the image is not built", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tag := fmt.Sprintf("stepd-test:%d", time.Now().UnixNano())
	build := exec.CommandContext(ctx, "docker", "build", "-t", tag, "--build-arg", "VERSION=v0.0.0-test", "../..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, b)
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	user, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", "{{.Config.User}}", tag).Output()
	if err != nil || strings.TrimSpace(string(user)) == "" || strings.HasPrefix(string(user), "0") || strings.HasPrefix(string(user), "root") {
		t.Errorf("the image's user: %q, %v; want a non-root one", user, err)
	}
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	id, err := exec.CommandContext(ctx, "docker", "run", "-d", "--rm", "-p", "127.0.0.1:"+port+":8083", tag).Output()
	if err != nil {
		t.Fatalf("docker run: %v", err)
	}
	defer exec.Command("docker", "rm", "-f", strings.TrimSpace(string(id))).Run()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "logs", strings.TrimSpace(string(id))).CombinedOutput()
			t.Fatalf("the container did not get ready: %v\n%s", err, logs)
		}
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		health, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Health.Status}}", strings.TrimSpace(string(id))).Output()
		if err == nil && strings.TrimSpace(string(health)) == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container's HEALTHCHECK: %q, %v; want healthy", health, err)
		}
	}
	got, err := exec.CommandContext(ctx, "docker", "run", "--rm", tag, "version").Output()
	if err != nil || !strings.HasPrefix(string(got), "stepd v0.0.0-test") {
		t.Errorf("docker run IMAGE version: %q, %v", got, err)
	}

	shell := tag + "-shell"
	build = exec.CommandContext(ctx, "docker", "build", "--target", "shell", "-t", shell, "--build-arg", "VERSION=v0.0.0-test", "../..")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build --target shell: %v\n%s", err, b)
	}
	defer exec.Command("docker", "rmi", "-f", shell).Run()
	got, err = exec.CommandContext(ctx, "docker", "run", "--rm", "--entrypoint", "sh", shell, "-c", "id -u && stepd version").Output()
	if err != nil || !strings.HasPrefix(string(got), "65532\nstepd v0.0.0-test") {
		t.Errorf("the shell variant: sh -c 'id -u && stepd version': %q, %v", got, err)
	}
}
