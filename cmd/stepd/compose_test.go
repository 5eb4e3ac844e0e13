package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/internal/yamlvalue"
	"github.com/stepd/stepd/value"
)

// TestCompose runs the Docker Compose example of docs/deployment.md (two
// nodes and PostgreSQL): its compose file and its commands, as the page
// shows them, with the published ports moved to free ones and the image
// built from this clone. A state machine created on one node runs on the
// other, and one node's stepd health reaches the other by name. It skips,
// naming why, where Docker's engine, its compose plugin or the AWS CLI is
// missing.
func TestCompose(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("docker", "info").CombinedOutput(); err != nil {
		t.Skipf("docker's engine is not available (docker info: %v: %s); the compose example is not run", err, lastLine(out))
	}
	if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err != nil {
		t.Skipf("docker's compose plugin is not available (docker compose version: %v: %s); the compose example is not run", err, lastLine(out))
	}
	if _, err := exec.LookPath("aws"); err != nil {
		skipUnlessCI(t, "the AWS CLI (aws) is not on PATH: %v", err)
	}
	page, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	compose, commands := composeExample(t, string(page))
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := freePort(t), freePort(t)
	ports := strings.NewReplacer("127.0.0.1:8083", "127.0.0.1:"+p1, "localhost:8083", "localhost:"+p1,
		"127.0.0.1:8084", "127.0.0.1:"+p2, "localhost:8084", "localhost:"+p2)
	compose = strings.Replace(ports.Replace(compose), "build: .", "build: "+root, 1)
	commands = ports.Replace(commands)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), fmt.Sprintf("COMPOSE_PROJECT_NAME=stepd-test-%d", time.Now().UnixNano()),
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1", "AWS_PAGER=")
	t.Cleanup(func() {
		down := exec.Command("docker", "compose", "down", "-v")
		down.Dir, down.Env = dir, env
		_ = down.Run()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", commands)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the compose example's commands: %v\n%s", err, out)
	}
	for _, want := range []string{`/readyz: {"resumed":`, `"status": "SUCCEEDED"`, `"output": "\"hi\""`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output has no %s:\n%s", want, out)
		}
	}
}

// composeExample returns the compose file and the commands of the
// "Two nodes and PostgreSQL with Docker Compose" section of a page: its
// yaml block and the sh block after it.
func composeExample(t *testing.T, page string) (compose, commands string) {
	t.Helper()
	_, section, ok := strings.Cut(page, "#### Two nodes and PostgreSQL with Docker Compose\n")
	if !ok {
		t.Fatal("docs/deployment.md has no section Two nodes and PostgreSQL with Docker Compose")
	}
	block := func(info string) string {
		_, rest, ok := strings.Cut(section, "```"+info+"\n")
		if !ok {
			t.Fatalf("the compose section has no %s block", info)
		}
		body, after, ok := strings.Cut(rest, "```\n")
		if !ok {
			t.Fatalf("the compose section's %s block is not closed", info)
		}
		section = after
		return body
	}
	return block("yaml"), block("sh")
}

// lastLine is the last non-empty line of a command's output.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// freePort is a port of 127.0.0.1 that nothing listened on a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	_, port, _ := strings.Cut(freeAddr(t), ":")
	return port
}

// TestComposeExampleShape checks, without Docker, that the compose file
// of docs/deployment.md is YAML with the database and two nodes that
// share its store, each published on a port of its own, and that the
// commands after it use both nodes.
func TestComposeExampleShape(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	compose, commands := composeExample(t, string(page))
	doc, err := yamlvalue.Parse([]byte(compose), nil)
	if err != nil {
		t.Fatalf("the compose file: %v", err)
	}
	get := func(v any, path ...string) any {
		for _, k := range path {
			o, ok := v.(*value.Object)
			if !ok {
				return nil
			}
			v, _ = o.Get(k)
		}
		return v
	}
	for _, node := range []string{"stepd1", "stepd2"} {
		store, _ := get(doc, "services", node, "environment", "STEPD_STORE").(string)
		hosts, _ := get(doc, "services", node, "environment", "STEPD_ALLOW_HOSTS").(string)
		if !strings.HasPrefix(store, "postgres://stepd:stepd@db:5432/stepd") || hosts != "stepd1,stepd2" || get(doc, "services", node, "build") != "." {
			t.Errorf("%s: store %q, allowed hosts %q, build %v", node, store, hosts, get(doc, "services", node, "build"))
		}
	}
	if get(doc, "services", "db", "image") == nil || value.String(get(doc, "services", "stepd1", "ports")) == value.String(get(doc, "services", "stepd2", "ports")) {
		t.Errorf("the database or the nodes' ports: %s", value.String(doc))
	}
	for _, want := range []string{"docker compose up -d --build --wait", "http://127.0.0.1:8083", "http://localhost:8084", "health --endpoint http://stepd2:8083", "docker compose down -v"} {
		if !strings.Contains(commands, want) {
			t.Errorf("the commands have no %q:\n%s", want, commands)
		}
	}
}
