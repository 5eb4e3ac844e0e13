package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/value"
)

// testUsage is stepd test --help: the flags come after it.
const testUsage = `usage: stepd test PATH... [--format text|json] [--run REGEXP] [--config FILE] [-v]
                  [--junit FILE] [--cover] [--cover-report FILE]
                  [--definition-substitutions FILE|NAME=VALUE]

Runs case files: a definition (or definitionFile), an input, mocks (inline
"mocks", or "mockConfigFile" + "testCase": a test case of an AWS Step
Functions Local MockConfigFile) and what is "expected". Every member of
expected is optional; the ones present are checked: status, output, error,
cause, history. A case's definitionFile may be JSON, YAML or a SAM or
CloudFormation template (the case names the state machine with
"stateMachine" and gives "parameters").

Expected values may hold wildcards:
  "<anything>"          a string that is one <...> matches any JSON value
  "id-<x>-end"          <...> inside a string matches any text there
  "date", "datetime",
  "timestamp"           these bare words match any JSON value
  "<uuid:1>"            matches any text, but the same text wherever <uuid:1>
                        recurs in the case (a plain wildcard inside Map and
                        Parallel segments of a history)
  "placeholders"        {"<name>": "concrete"}: the concrete text in stepd's
                        values stands for <name>
  ARNs                  arn:aws: may be written arn:<partition>:, us-east-1 <region>
  SdkHttpMetadata,
  SdkResponseMetadata   the contents of these objects are not compared
Numbers compare by value and object members in any order. A history is
compared in order, except the events of each top-level Map or Parallel
state, compared as a multiset.
`

func testCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCLI("stepd test", testUsage, stdout, stderr)
	fs.positional("PATH", 1, -1)
	format := fs.String("format", "text", "output format: text or json (one object per case)")
	run := fs.String("run", "", "run only the cases whose names match this regular expression")
	verbose := fs.Bool("v", false, "also list the cases that pass")
	config := fs.String("config", "", "resource registry (as for stepd run) for the cases that do not name their own with \"config\"")
	junit := fs.String("junit", "", "also write the results as JUnit XML to `FILE`, for CI systems")
	cover := fs.Bool("cover", false, "print, per state machine, the share of states and branches (Choice rules and Default, Retry and Catch rules) the cases exercised")
	coverReport := fs.String("cover-report", "", "write the detailed coverage to `FILE`: JSON when it ends in .json (the console reads it), text otherwise; implies --cover")
	defs := addDefFlags(fs.FlagSet, false, stderr)
	paths, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return fs.fail("--format must be text or json, not %q", *format)
	}
	var filter *regexp.Regexp
	var err error
	if *run != "" {
		if filter, err = regexp.Compile(*run); err != nil {
			return fs.fail("--run: %v", err)
		}
	}
	if len(defs.params) > 0 {
		return fs.fail("--parameter: a case gives its template's parameters with \"parameters\"")
	}
	subs, err := defs.substitutions()
	if err != nil {
		fmt.Fprintf(stderr, "stepd test: %v\n", err)
		return exitUsage
	}
	cases, err := conformance.Load(paths...)
	if err != nil {
		fmt.Fprintf(stderr, "stepd test: %v\n", err)
		return exitUsage
	}
	var coverage *conformance.Coverage
	if *cover || *coverReport != "" {
		coverage = &conformance.Coverage{}
	}
	var results []junitResult
	passed, failed, skipped := 0, 0, 0
	for _, c := range cases {
		if filter != nil && !filter.MatchString(c.Name) {
			continue
		}
		if c.Config == "" {
			c.Config = *config
		}
		var r *conformance.Result
		if err := substituteCase(c, subs); err != nil {
			r = &conformance.Result{Case: c, Err: err}
		}
		switch {
		case r != nil:
		case c.Kind == "execution":
			r = conformance.Check(ctx, c)
		case c.Kind == "invalid-definition", c.Kind == "validate-definition":
			r = conformance.CheckDefinition(c)
		case c.Kind == "test-state":
			r = conformance.CheckTestState(ctx, c)
		default:
			skipped++
			reason := fmt.Sprintf("kind %q is not run by stepd test yet", c.Kind)
			results = append(results, junitResult{c: c, skip: reason})
			if *format == "text" {
				fmt.Fprintf(stdout, "--- SKIP: %s (%s)\n", c.Name, reason)
			}
			continue
		}
		results = append(results, junitResult{c: c, r: r})
		if coverage != nil {
			coverage.Add(r)
		}
		if r.Passed() {
			passed++
		} else {
			failed++
		}
		if *format == "json" {
			fmt.Fprintln(stdout, value.String(resultJSON(r)))
			continue
		}
		secs := r.Elapsed.Seconds()
		if r.Passed() {
			if *verbose {
				fmt.Fprintf(stdout, "--- PASS: %s (%.2fs)\n", c.Name, secs)
			}
			continue
		}
		fmt.Fprintf(stdout, "--- FAIL: %s (%.2fs)\n", c.Name, secs)
		fmt.Fprint(stdout, indent(r.Explain()))
	}
	if *junit != "" {
		if err := writeJUnit(*junit, results); err != nil {
			fmt.Fprintf(stderr, "stepd test: --junit: %v\n", err)
			return exitUsage
		}
	}
	if coverage != nil {
		if *format == "text" {
			for _, m := range coverage.Machines() {
				fmt.Fprintf(stdout, "%s: %s\n", m.Name, m.Summary())
			}
		}
		if *coverReport != "" {
			text := coverage.Text()
			if strings.HasSuffix(*coverReport, ".json") {
				text = value.Indent(coverage.JSON()) + "\n"
			}
			if err := os.WriteFile(*coverReport, []byte(text), 0o644); err != nil {
				fmt.Fprintf(stderr, "stepd test: --cover-report: %v\n", err)
				return exitUsage
			}
		}
	}
	if *format == "text" {
		line := fmt.Sprintf("%d passed, %d failed", passed, failed)
		if skipped > 0 {
			line += fmt.Sprintf(", %d skipped", skipped)
		}
		fmt.Fprintln(stdout, line)
	}
	if failed > 0 {
		return exitFail
	}
	return exitOK
}

// substituteCase applies the --definition-substitutions to a case's
// definition and, for a case that runs it, refuses a ${Name} placeholder
// left in a Resource.
func substituteCase(c *conformance.Case, subs definition.Substitutions) error {
	if len(subs) > 0 {
		text := c.DefinitionString
		if c.Definition != nil {
			text = value.String(c.Definition)
		}
		text, err := definition.Substitute(text, subs)
		if err != nil {
			return err
		}
		if v, err := value.ParseString(text); err == nil {
			c.Definition, c.DefinitionString = v, ""
		} else {
			c.Definition, c.DefinitionString = nil, text
		}
	}
	if c.Kind != "execution" || c.Definition == nil {
		return nil
	}
	for _, u := range definition.Find(c.Definition) {
		if u.Resource {
			return fmt.Errorf("%s: ${%s} has no substitution and is not a resource (give it with --definition-substitutions %s=VALUE)", u.Pointer, u.Name, u.Name)
		}
	}
	return nil
}

// resultJSON is the --format json line of one case.
func resultJSON(r *conformance.Result) *value.Object {
	o := value.NewObject(8)
	o.Set("name", r.Case.Name)
	o.Set("kind", r.Case.Kind)
	o.Set("passed", r.Passed())
	if r.Err != nil {
		o.Set("status", nil)
		o.Set("output", nil)
		o.Set("error", "stepd.CaseError")
		o.Set("cause", r.Err.Error())
		o.Set("history", nil)
		return o
	}
	out := r.Outcome
	if out == nil {
		// A definition check.
		for _, k := range []string{"status", "output", "error", "cause", "history"} {
			o.Set(k, nil)
		}
		return o
	}
	o.Set("status", out.Status)
	if out.Status == "SUCCEEDED" {
		o.Set("output", out.Output)
	} else {
		o.Set("output", nil)
	}
	if out.Error != "" || out.Cause != "" {
		o.Set("error", out.Error)
		o.Set("cause", out.Cause)
	} else {
		o.Set("error", nil)
		o.Set("cause", nil)
	}
	o.Set("history", out.History)
	return o
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
