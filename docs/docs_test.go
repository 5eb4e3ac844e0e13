package docs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// How the documentation's commands are run
//
// The pages are README.md, docs/*.md and examples/README.md. In them, a
// fenced block whose info string is
//
//   - sh holds commands: the test runs the block with bash -euo pipefail and
//     fails, naming the page, the line and the output, when it exits non-zero;
//   - console holds `$ command` lines, each followed by the output it prints:
//     the test runs each command (its exit status may be non-zero, as a
//     failing validation's is) and compares its output, standard output and
//     standard error together, with the text shown;
//   - anything else (text, json, yaml, …) is shown, not run. bash, shell and
//     zsh are refused, so that no command hides from the test behind them.
//
// A sh block that cannot run here — it needs Docker, real AWS, a module not
// published yet, or minutes of work another test does — is preceded by
// <!-- not run: REASON -->; the test lists those blocks and fails on a
// not-run comment without a reason.
//
// The test builds stepd once, from this clone, and puts it first on PATH, so
// `stepd …` runs it; it rewrites `go run ./cmd/stepd` to `stepd` (the same
// program, without a build per block). The blocks of a page run in order,
// in a copy of the repository of the page's own (without .git; node_modules
// folders linked), so that the pages' relative paths work and what a block
// writes stays in a temporary directory. Each block has two minutes.
//
// A sh block that is one `stepd serve …` command is started in the background
// instead, on a free port of 127.0.0.1 given through STEPD_ADDR (a served
// block must not name --addr), with its store in a temporary directory
// (STEPD_DATA); the test waits until it prints "listening on", runs the
// page's following blocks against it, and stops it at the end of the page (or
// when the page starts another). The pages show the server at port 8083, the
// default: in every block of the page, "127.0.0.1:8083" and "localhost:8083"
// become the free port. Its logs go to the test's log.
//
// The blocks run with dummy AWS credentials and region in the environment
// (no AWS configuration files, no proxies), TMPDIR in the page's temporary
// directory, and stepd's own variables unset. The AWS CLI is the aws on PATH;
// without it the pages that call it are skipped, and fail when CI=true.

// blockTimeout bounds each block, and the start of a server. A block may
// build stepd with CGO_ENABLED=0 (the README's static build), which
// compiles every package again, the standard library's too: on a busy
// machine of two cores that takes minutes.
const blockTimeout = 8 * time.Minute

// shownPort is the port the pages show for stepd serve.
const shownPort = "8083"

type block struct {
	page   string // relative to the repository root, with slashes
	line   int    // of the opening fence, from 1
	info   string // the info string's first word, in lower case
	text   string // the lines inside the fence, their indentation removed
	marked bool   // preceded by a not-run comment
	reason string // that comment's reason
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.page, b.line) }

var (
	fenceRe  = regexp.MustCompile("^( *)(`{3,}|~{3,})[ \t]*([^ \t`]*)")
	notRunRe = regexp.MustCompile(`^\s*<!--\s*not run\b(.*?)-->\s*$`)
)

// parse returns the fenced blocks of a page and what is wrong in how they
// are marked.
func parse(page, content string) (blocks []block, problems []string) {
	lines := strings.Split(content, "\n")
	pending, reason := 0, "" // line of a not-run comment waiting for its block, and its reason
	for i := 0; i < len(lines); i++ {
		if m := notRunRe.FindStringSubmatch(lines[i]); m != nil {
			if pending != 0 {
				problems = append(problems, fmt.Sprintf("%s:%d: a not-run comment with no sh block after it", page, pending))
			}
			pending, reason = i+1, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), ":"))
			continue
		}
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			if pending != 0 && strings.TrimSpace(lines[i]) != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: a not-run comment must come right before the sh block it is about", page, pending))
				pending = 0
			}
			continue
		}
		indent, fence := len(m[1]), m[2]
		b := block{page: page, line: i + 1, info: strings.ToLower(m[3])}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			l := lines[j]
			for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
				l = l[1:]
			}
			body = append(body, l)
		}
		if j == len(lines) {
			problems = append(problems, fmt.Sprintf("%s: the block has no closing fence", b.where()))
		}
		b.text = strings.Join(body, "\n") + "\n"
		switch b.info {
		case "bash", "shell", "zsh", "shell-session", "sh-session":
			problems = append(problems, fmt.Sprintf("%s: a %s block: use sh for commands the test runs, console for `$ command` lines with their output, text for anything else", b.where(), b.info))
		case "console":
			if !strings.HasPrefix(b.text, "$ ") {
				problems = append(problems, fmt.Sprintf("%s: a console block starts with a `$ command` line whose output follows; use text for output alone", b.where()))
			}
		}
		if pending != 0 {
			if b.info != "sh" {
				problems = append(problems, fmt.Sprintf("%s:%d: a not-run comment before a %q block: only sh blocks run", page, pending, b.info))
			} else if reason == "" {
				problems = append(problems, fmt.Sprintf("%s:%d: a not-run comment without a reason: write <!-- not run: REASON -->", page, pending))
			}
			b.marked, b.reason = true, reason
			pending = 0
		}
		blocks = append(blocks, b)
		i = j
	}
	if pending != 0 {
		problems = append(problems, fmt.Sprintf("%s:%d: a not-run comment with no sh block after it", page, pending))
	}
	return blocks, problems
}

// repoRoot is the module's root, the parent of this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod in %s: %v", root, err)
	}
	return root
}

// pages lists the documentation's pages, relative to the root.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, "docs/"+filepath.Base(d))
	}
	return append(out, "examples/README.md")
}

func readPage(t *testing.T, root, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rewrite adapts a block to the test: `go run ./cmd/stepd` is the stepd built
// once, and the port shown for stepd serve is the page's server's.
func rewrite(s, port string) string {
	s = strings.ReplaceAll(s, "go run ./cmd/stepd", "stepd")
	s = strings.ReplaceAll(s, "127.0.0.1:"+shownPort, "127.0.0.1:"+port)
	return strings.ReplaceAll(s, "localhost:"+shownPort, "localhost:"+port)
}

// commands returns a shell text's commands: its lines without blank and
// comment lines, those continued with a backslash joined.
func commands(s string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if c, ok := strings.CutSuffix(t, `\`); ok {
			cur.WriteString(strings.TrimSpace(c) + " ")
			continue
		}
		cur.WriteString(t)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

var serveRe = regexp.MustCompile(`(^|[\s;&|(])stepd serve\b`)

// serveCommand returns the command of a block that is one stepd serve, and
// what is wrong with a block that starts stepd serve otherwise.
func serveCommand(text string) (cmd string, ok bool, problem string) {
	cmds := commands(text)
	for _, c := range cmds {
		if !serveRe.MatchString(c) {
			continue
		}
		switch {
		case len(cmds) != 1 || !strings.HasPrefix(c, "stepd serve"):
			return "", false, "stepd serve must be the only command of its block, so that the test can run it in the background"
		case strings.Contains(c, "--addr"):
			return "", false, "the test gives stepd serve its address through STEPD_ADDR: a block with --addr must be marked not run"
		}
		return strings.TrimSpace(strings.TrimSuffix(c, "&")), true, ""
	}
	return "", false, ""
}

var awsRe = regexp.MustCompile(`(?m)(^|[\s;&|(])aws\s+[a-z]`)

// TestCommands runs every command the pages show (see the comment at the top).
func TestCommands(t *testing.T) {
	root := repoRoot(t)
	byPage := map[string][]block{}
	var problems []string
	var list []string
	for _, page := range pages(t, root) {
		blocks, p := parse(page, readPage(t, root, page))
		problems = append(problems, p...)
		for i, b := range blocks {
			if b.info != "sh" {
				continue
			}
			if blocks[i].marked {
				list = append(list, fmt.Sprintf("  %s: %s", b.where(), blocks[i].reason))
				continue
			}
			if _, _, problem := serveCommand(rewrite(b.text, shownPort)); problem != "" {
				problems = append(problems, b.where()+": "+problem)
			}
		}
		byPage[page] = blocks
	}
	if len(list) > 0 {
		t.Logf("blocks not run:\n%s", strings.Join(list, "\n"))
	}
	if len(problems) > 0 {
		t.Fatalf("the pages' blocks:\n%s", strings.Join(problems, "\n"))
	}

	awsPath, awsErr := exec.LookPath("aws")
	bin := buildStepd(t, root)
	for _, page := range pages(t, root) {
		var run []block
		usesAWS := false
		for _, b := range byPage[page] {
			if (b.info == "sh" && !b.marked) || b.info == "console" {
				run = append(run, b)
				usesAWS = usesAWS || awsRe.MatchString(b.text)
			}
		}
		if len(run) == 0 {
			continue
		}
		t.Run(page, func(t *testing.T) {
			t.Parallel()
			if usesAWS && awsErr != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("the AWS CLI (aws) is not on PATH, and %s calls it: %v", page, awsErr)
				}
				t.Skipf("the AWS CLI (aws) is not on PATH, and %s calls it (apt-get install awscli): %v", page, awsErr)
			}
			if usesAWS {
				t.Logf("the AWS CLI: %s", awsPath)
			}
			runPage(t, root, bin, run)
		})
	}
}

// buildStepd builds ./cmd/stepd into a directory of its own and returns it.
func buildStepd(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "stepd"), "./cmd/stepd")
	cmd.Dir = root
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/stepd: %v\n%s", err, out)
	}
	t.Logf("built stepd in %v", time.Since(start).Round(time.Millisecond))
	return dir
}

// page is what the blocks of one page share.
type page struct {
	t    *testing.T
	dir  string   // the working directory
	env  []string // the environment
	port string   // the server's
	srv  *server
}

func runPage(t *testing.T, root, bin string, blocks []block) {
	p := &page{t: t, dir: workdir(t, root), port: freePort(t)}
	tmp := t.TempDir()
	for _, d := range []string{"tmp", "data"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = environ(bin, tmp, p.port)
	t.Cleanup(func() {
		if p.srv != nil {
			p.srv.stop()
		}
	})
	for _, b := range blocks {
		text := rewrite(b.text, p.port)
		if b.info == "console" {
			p.console(b, text)
			continue
		}
		if cmd, ok, _ := serveCommand(text); ok {
			if p.srv != nil {
				p.srv.stop()
			}
			p.srv = p.serve(b, cmd)
			continue
		}
		start := time.Now()
		out, err := p.run(text, "-euo", "pipefail")
		if err != nil {
			t.Fatalf("%s: the sh block failed: %v\n--- block:\n%s\n--- output:\n%s", b.where(), err, quote(text), quote(out))
		}
		t.Logf("%s: ok in %v\n%s", b.where(), time.Since(start).Round(time.Millisecond), quote(out))
	}
}

// console runs each `$ command` of a console block and compares its output.
func (p *page) console(b block, text string) {
	type step struct{ cmd, want string }
	var steps []step
	for _, l := range strings.SplitAfter(text, "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{cmd: strings.TrimSpace(c)})
		} else if len(steps) > 0 {
			steps[len(steps)-1].want += l
		}
	}
	for _, s := range steps {
		out, err := p.run(s.cmd, "-o", "pipefail")
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			p.t.Fatalf("%s: $ %s: %v\n%s", b.where(), s.cmd, err, quote(out))
		}
		if got, want := normalize(out), normalize(s.want); got != want {
			p.t.Errorf("%s: $ %s printed\n%s\n--- the page shows:\n%s", b.where(), s.cmd, quote(got), quote(want))
		}
	}
}

// quote marks each line of a command's output in the test's log, where a
// line such as "--- PASS: …" would otherwise read as the test's own.
func quote(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  | (nothing)"
	}
	return "  | " + strings.ReplaceAll(s, "\n", "\n  | ")
}

func normalize(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}

// run runs a script with bash in the page's directory and environment, in a
// process group of its own, which is killed when the script ends or its
// time is up.
func (p *page) run(script string, flags ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append(flags, "-c", script)...)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the block left running
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%v (timed out after %v)", err, blockTimeout)
	}
	return out.String(), err
}

// server is a stepd serve that a page started.
type server struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// serve starts a block's stepd serve and waits until it listens.
func (p *page) serve(b block, command string) *server {
	t := p.t
	ready := make(chan struct{})
	var once sync.Once
	cmd := exec.Command("bash", "-c", "exec "+command)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout = &logWriter{t: t, prefix: b.where() + ": ", onLine: func(l string) {
		if strings.HasPrefix(l, "listening on") {
			once.Do(func() { close(ready) })
		}
	}}
	cmd.Stderr = &logWriter{t: t, prefix: b.where() + ": "}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	s := &server{cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(blockTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		t.Logf("%s: %s is listening on port %s", b.where(), command, p.port)
		return s
	case <-s.exited:
		t.Fatalf("%s: %s ended before it listened: %v", b.where(), command, s.err)
	case <-timer.C:
		s.stop()
		t.Fatalf("%s: %s did not print \"listening on\" within %v", b.where(), command, blockTimeout)
	}
	return nil
}

// stop ends the server (SIGTERM, then SIGKILL after 30 s) and waits for it.
func (s *server) stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// logWriter writes a process's output to the test's log, a line at a time.
type logWriter struct {
	t      *testing.T
	prefix string
	onLine func(string)
	mu     sync.Mutex
	buf    []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		w.t.Log(w.prefix + "| " + line)
		if w.onLine != nil {
			w.onLine(line)
		}
	}
}

// workdir makes a copy of the repository for a page's blocks: its files
// copied (without .git), its node_modules folders linked.
func workdir(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dir, rel)
		switch {
		case rel == ".git" && d.IsDir():
			return filepath.SkipDir
		case rel == ".git":
			return nil // a worktree's .git is a file naming its repository: not copied
		case d.IsDir() && d.Name() == "node_modules":
			if err := os.Symlink(path, to); err != nil {
				return err
			}
			return filepath.SkipDir
		case d.IsDir():
			return os.Mkdir(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copying the repository: %v", err)
	}
	return dir
}

func copyFile(from, to string) error {
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// freePort returns a port of 127.0.0.1 that nothing listened on a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// environ is the blocks' environment: this process's, with stepd first on
// PATH, dummy AWS credentials and region, and neither AWS configuration,
// proxies nor stepd's own variables.
func environ(bin, tmp, port string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch u := strings.ToUpper(k); {
		case strings.HasPrefix(u, "AWS_"), strings.HasPrefix(u, "STEPD_"), u == "SFN_MOCK_CONFIG", u == "WAIT_TIME_SCALE",
			strings.HasSuffix(u, "_PROXY"), u == "PATH", u == "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+filepath.Join(tmp, "tmp"),
		"AWS_ACCESS_KEY_ID=docs-test",
		"AWS_SECRET_ACCESS_KEY=docs-test",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+filepath.Join(tmp, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(tmp, "aws-credentials"),
		"STEPD_ADDR=127.0.0.1:"+port,
		"STEPD_DATA="+filepath.Join(tmp, "data"),
	)
}

// TestParse checks the parser on the marks the pages use.
func TestParse(t *testing.T) {
	page := "<!-- not run: needs Docker -->\n" +
		"```sh\ndocker run stepd\n```\n\n" +
		"  ```sh\n  stepd version\n  ```\n" +
		"<!-- not run -->\n```sh\nx\n```\n" +
		"```bash\ny\n```\n" +
		"```console\nstepd\n```\n" +
		"<!-- not run: why -->\n\ntext in between\n```sh\nz\n```\n"
	blocks, problems := parse("p.md", page)
	want := []block{
		{page: "p.md", line: 2, info: "sh", text: "docker run stepd\n", marked: true, reason: "needs Docker"},
		{page: "p.md", line: 6, info: "sh", text: "stepd version\n"},
		{page: "p.md", line: 10, info: "sh", text: "x\n", marked: true},
		{page: "p.md", line: 13, info: "bash", text: "y\n"},
		{page: "p.md", line: 16, info: "console", text: "stepd\n"},
		{page: "p.md", line: 22, info: "sh", text: "z\n"},
	}
	if fmt.Sprint(blocks) != fmt.Sprint(want) {
		t.Errorf("blocks:\n%v\nwant\n%v", blocks, want)
	}
	wantProblems := []string{
		"p.md:9: a not-run comment without a reason",
		"p.md:13: a bash block",
		"p.md:16: a console block starts with",
		"p.md:19: a not-run comment must come right before",
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	for i, w := range wantProblems {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d: %q, want %q…", i, problems[i], w)
		}
	}
	if c, ok, _ := serveCommand("# in one terminal\nstepd serve --template t.yaml \\\n    --parameter Stage=prod\n"); !ok || c != "stepd serve --template t.yaml --parameter Stage=prod" {
		t.Errorf("serveCommand: %q %v", c, ok)
	}
	if _, ok, problem := serveCommand("stepd serve &\naws stepfunctions list-state-machines\n"); ok || problem == "" {
		t.Errorf("serveCommand of a block with another command: %v %q", ok, problem)
	}
	if got := rewrite("go run ./cmd/stepd run x --endpoint-url http://localhost:8083 http://127.0.0.1:8083/", "4242"); got != "stepd run x --endpoint-url http://localhost:4242 http://127.0.0.1:4242/" {
		t.Errorf("rewrite: %q", got)
	}
	if got := anchors("# A `b` c\n```sh\n# not a heading\n```\n## Schedules (EventBridge Scheduler API)\n## A `b` c\n"); fmt.Sprint(got) != "map[a-b-c:true a-b-c-1:true schedules-eventbridge-scheduler-api:true]" {
		t.Errorf("anchors: %v", got)
	}
}

// TestLinks checks that the pages' relative links lead to files that exist,
// and their anchors to headings of those files.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	anchorsOf := map[string]map[string]bool{}
	checked := 0
	defer func() { t.Logf("checked %d relative links", checked) }()
	for _, page := range pages(t, root) {
		text := prose(readPage(t, root, page))
		for _, m := range linkRe.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			line := strings.Count(text[:m[0]], "\n") + 1
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
				t.Errorf("%s:%d: link %s: %v", page, line, target, err)
				continue
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if anchorsOf[file] == nil {
				anchorsOf[file] = anchors(readPage(t, root, file))
			}
			if !anchorsOf[file][anchor] {
				var have []string
				for a := range anchorsOf[file] {
					have = append(have, a)
				}
				sort.Strings(have)
				t.Errorf("%s:%d: link %s: %s has no heading #%s; it has %s", page, line, target, file, anchor, strings.Join(have, ", "))
			}
		}
	}
}

var (
	linkRe    = regexp.MustCompile(`\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	headingRe = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inlineRe  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// unfenced returns a page with the lines of its fenced blocks left empty.
func unfenced(page string) string {
	lines := strings.Split(page, "\n")
	var fence string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if m := fenceRe.FindStringSubmatch(l); m != nil {
			fence = m[2]
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// prose returns a page without its fenced blocks and code spans, their lines
// left empty.
func prose(page string) string {
	s := unfenced(page)
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		end := -1 // of the closing run of as many backticks
		for k := j; k < len(s); {
			if s[k] != '`' {
				k++
				continue
			}
			e := k
			for e < len(s) && s[e] == '`' {
				e++
			}
			if e-k == j-i {
				end = e
				break
			}
			k = e
		}
		if end < 0 {
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteString(strings.Repeat("\n", strings.Count(s[i:end], "\n")))
		i = end
	}
	return b.String()
}

// anchors returns the anchors GitHub gives a page's headings.
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range strings.Split(unfenced(page), "\n") {
		m := headingRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor for a heading: in lower case, links as their text,
// letters, digits, hyphens and underscores kept, spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(inlineRe.ReplaceAllString(h, "$1"))
	var b strings.Builder
	for _, r := range h {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestReadmeIsAFrontDoor keeps the README short: the manual is in docs/.
func TestReadmeIsAFrontDoor(t *testing.T) {
	readme := readPage(t, repoRoot(t), "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it to 250 and move the rest into docs/", n)
	}
}
