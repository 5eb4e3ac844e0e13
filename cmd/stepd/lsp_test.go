package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/lsp/lsptest"
)

// TestLSPProcess runs the JSON-RPC matrix against stepd lsp as a process,
// through its stdin and stdout.
func TestLSPProcess(t *testing.T) {
	cmd := exec.Command(stepdBinary(t), "lsp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := lsptest.New(t, out, in)
	lsptest.Matrix(t, c)
	if err := cmd.Wait(); err != nil {
		t.Errorf("stepd lsp after exit: %v\n%s", err, stderr.String())
	}
}

// nvimDefinition is the broken definition Neovim opens: an unknown field
// (Nxt) and a Next being written.
const nvimDefinition = `{
  "StartAt": "First",
  "States": {
    "First": {
      "Type": "Pass",
      "Nxt": "Second",
      "Next": "Se"
    },
    "Second": {
      "Type": "Pass",
      "End": true
    }
  }
}
`

// TestLSPNeovim has Neovim's own LSP client drive stepd lsp
// (testdata/lsp/nvim.lua): the diagnostics of a broken definition, the
// completion of a Next, the rename of a state. .ci/run installs Debian's
// neovim, so CI never skips it.
func TestLSPNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed (apt-get install neovim; .ci/run installs it): the Neovim client test cannot run")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "flow.asl.json")
	if err := os.WriteFile(file, []byte(nvimDefinition), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/lsp/nvim.lua")
	if err != nil {
		t.Fatal(err)
	}
	resultFile := filepath.Join(dir, "result.json")
	cmd := exec.Command(nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STEPD_BIN="+stepdBinary(t), "LSP_FILE="+file, "LSP_RESULT="+resultFile,
		"XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	out, runErr := cmd.CombinedOutput()
	data, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("nvim wrote no result (%v): %v\n%s", runErr, err, out)
	}
	var res struct {
		Steps []struct {
			Name, Detail string
			OK           bool
		}
		Diagnostics []struct {
			Lnum, Col int
			Message   string
		}
		Completion []string
		Completed  string
		Text       string
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("the result %s: %v", data, err)
	}
	for _, s := range res.Steps {
		if !s.OK {
			t.Errorf("step %s failed: %s", s.Name, s.Detail)
		}
	}
	if runErr != nil {
		t.Fatalf("nvim: %v\n%s\nresult: %s", runErr, out, data)
	}
	if len(res.Steps) != 5 {
		t.Errorf("steps run: %+v", res.Steps)
	}
	found := false
	for _, d := range res.Diagnostics {
		if strings.Contains(d.Message, "Field 'Nxt' is not supported") && d.Lnum == 5 && d.Col == 6 {
			found = true
		}
	}
	if !found {
		t.Errorf("Neovim's diagnostics: %+v, want Field 'Nxt' is not supported at line 6, column 7", res.Diagnostics)
	}
	if !strings.Contains(res.Text, `"Final": {`) || strings.Count(res.Text, `"Final"`) != 2 || strings.Contains(res.Text, `"Second"`) != strings.Contains(res.Text, `"Nxt": "Second"`) {
		t.Errorf("after the rename:\n%s", res.Text)
	}
}

// TestLSPUsage: a usage error is one line naming the problem and where
// help is, exit 2; -h prints the usage.
func TestLSPUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"extra"}, exitUsage, `stepd lsp: unexpected argument "extra": it takes flags only` + "\nrun 'stepd lsp -h' for help\n"},
		{[]string{"--inptu"}, exitUsage, "stepd lsp: unknown flag --inptu\nrun 'stepd lsp -h' for help\n"},
		{[]string{"--type", "BATCH"}, exitUsage, `stepd lsp: --type "BATCH": want STANDARD or EXPRESS` + "\nrun 'stepd lsp -h' for help\n"},
		{[]string{"--definition-substitutions", "nofile"}, exitUsage, `stepd lsp: --definition-substitutions "nofile": no such file, and not NAME=VALUE` + "\nrun 'stepd lsp -h' for help\n"},
		{[]string{"--parameter", "x"}, exitUsage, `stepd lsp: --parameter "x": want NAME=VALUE` + "\nrun 'stepd lsp -h' for help\n"},
	} {
		var out, errOut strings.Builder
		code := Main(t.Context(), append([]string{"lsp"}, tc.args...), strings.NewReader(""), &out, &errOut)
		if code != tc.code || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("stepd lsp %v: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, code, errOut.String(), out.String(), tc.code, tc.want)
		}
	}
	var out, errOut strings.Builder
	if code := Main(t.Context(), []string{"lsp", "-h"}, strings.NewReader(""), &out, &errOut); code != exitOK || !strings.HasPrefix(out.String(), "usage: stepd lsp ") || !strings.Contains(out.String(), "-definition-substitutions") {
		t.Errorf("stepd lsp -h: exit %d, %q", code, out.String())
	}
	// no input: the server ends at once, without error
	out.Reset()
	if code := Main(t.Context(), []string{"lsp"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Errorf("stepd lsp on an empty input: exit %d", code)
	}
}
