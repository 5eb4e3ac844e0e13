package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/graph"
	"github.com/stepd/stepd/value"
)

const graphUsage = `usage: stepd graph DEFINITION [--format mermaid|svg] [-o FILE] [--cover-report FILE] [--definition-substitutions FILE|NAME=VALUE] [--parameter NAME=VALUE] [--state-machine NAME]

Draws a state machine: as a Mermaid flowchart (GitHub, GitLab and most
wikis render it in a mermaid code block), or as a standalone SVG picture
laid out and drawn like the console's graph. DEFINITION is what stepd run takes:
a definition (JSON or YAML; - for standard input) or a SAM or
CloudFormation template (--state-machine picks one of several). The format defaults to svg when -o ends in .svg, else
mermaid. With --cover-report (a JSON report of stepd test --cover-report),
states the cases entered are drawn green and the others red.
`

func graphCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCLI("stepd graph", graphUsage, stdout, stderr)
	fs.positional("DEFINITION", 1, 1)
	format := fs.String("format", "", "mermaid or svg (default: svg when -o ends in .svg, else mermaid)")
	out := fs.String("o", "", "write to `FILE` instead of standard output")
	cover := fs.String("cover-report", "", "colour the states by the coverage in this JSON `FILE` (stepd test --cover-report)")
	region := fs.String("region", arn.DefaultRegion, "region of a template's ARNs (AWS::Region)")
	account := fs.String("account", arn.DefaultAccount, "account id of a template's ARNs (AWS::AccountId)")
	defs := addDefFlags(fs.FlagSet, true, stderr)
	pos, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *format == "" {
		*format = "mermaid"
		if strings.HasSuffix(*out, ".svg") {
			*format = "svg"
		}
	}
	if *format != "mermaid" && *format != "svg" {
		return fs.fail("--format must be mermaid or svg, not %q", *format)
	}
	path := pos[0]
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "stepd graph: %v\n", err)
		return exitUsage
	}
	subs, err := defs.substitutions()
	if err == nil {
		var params map[string]string
		if params, err = defs.parameters(); err == nil {
			var ds []*loadedDef
			if ds, err = defs.loadData(path, data, false, *region, *account, subs, params); err == nil {
				path, data = ds[0].source, ds[0].text
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "stepd graph: %v\n", err)
		return exitUsage
	}
	def, err := value.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "stepd graph: %v\n", value.Locate(path, data, err))
		return exitUsage
	}
	if o, ok := def.(*value.Object); !ok || !o.Has("States") {
		fmt.Fprintf(stderr, "stepd graph: %s: a definition is a JSON object with States\n", path)
		return exitUsage
	}
	var status map[string]string
	if *cover != "" {
		if status, err = coverStatus(*cover, pos[0]); err != nil {
			fmt.Fprintf(stderr, "stepd graph: --cover-report: %v\n", err)
			return exitUsage
		}
	}
	top := graph.Build(def)
	text := graph.Mermaid(top, status)
	if *format == "svg" {
		text = graph.SVG(top, status)
	}
	if *out == "" {
		fmt.Fprint(stdout, text)
		return exitOK
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fmt.Fprintf(stderr, "stepd graph: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// coverStatus reads a coverage report and returns, for the state machine
// of the definition at path (the report's only one, or the one named by
// that file), "succeeded" for each state entered and "failed" for the
// others.
func coverStatus(report, path string) (map[string]string, error) {
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	v, err := value.Parse(data)
	if err != nil {
		return nil, value.Locate(report, data, err)
	}
	root, _ := v.(*value.Object)
	list, _ := objGet(root, "stateMachines").([]any)
	var chosen *value.Object
	var names []string
	for _, m := range list {
		mo, _ := m.(*value.Object)
		name, _ := objGet(mo, "name").(string)
		names = append(names, name)
		if len(list) == 1 || sameFile(name, path) {
			chosen = mo
		}
	}
	if chosen == nil {
		return nil, fmt.Errorf("%s has no state machine for %s (it has %s)", report, path, strings.Join(names, ", "))
	}
	status := map[string]string{}
	detail, _ := objGet(chosen, "detail").([]any)
	for _, s := range detail {
		so, _ := s.(*value.Object)
		name, _ := objGet(so, "name").(string)
		visits, _ := objGet(so, "visits").(value.Number)
		if n, _ := visits.Int64(); n > 0 {
			status[name] = "succeeded"
		} else {
			status[name] = "failed"
		}
	}
	return status, nil
}

func objGet(o *value.Object, k string) any {
	if o == nil {
		return nil
	}
	v, _ := o.Get(k)
	return v
}

func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
