package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/value"
)

func testCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json (one object per case)")
	run := fs.String("run", "", "run only the cases whose names match this regular expression")
	verbose := fs.Bool("v", false, "also list the cases that pass")
	config := fs.String("config", "", "resource registry (as for stepd run) for the cases that do not name their own with \"config\"")
	defs := addDefFlags(fs, false)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd test PATH... [--format text|json] [--run REGEXP] [--config FILE] [--definition-substitutions FILE|NAME=VALUE] [-v]\n\nA case's definitionFile may be JSON, YAML or a SAM or CloudFormation template (the case names the state machine with \"stateMachine\" and gives \"parameters\").")
		fs.PrintDefaults()
	}
	paths, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(paths) == 0 {
		fs.Usage()
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "stepd test: --format must be text or json, not %q\n", *format)
		return exitUsage
	}
	var filter *regexp.Regexp
	if *run != "" {
		if filter, err = regexp.Compile(*run); err != nil {
			fmt.Fprintf(stderr, "stepd test: --run: %v\n", err)
			return exitUsage
		}
	}
	if len(defs.params) > 0 {
		fmt.Fprintln(stderr, "stepd test: --parameter: a case gives its template's parameters with \"parameters\"")
		return exitUsage
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
			if *format == "text" {
				fmt.Fprintf(stdout, "--- SKIP: %s (kind %q is not run by stepd test yet)\n", c.Name, c.Kind)
			}
			continue
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
		fmt.Fprint(stdout, indent(explain(r)))
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

// explain describes why a case failed.
func explain(r *conformance.Result) string {
	var b strings.Builder
	if r.Err != nil {
		fmt.Fprintf(&b, "cannot run: %v\n", r.Err)
		return b.String()
	}
	for _, d := range r.OutcomeErr {
		fmt.Fprintf(&b, "%s\n", d.String())
	}
	if r.History != nil && !r.History.Tolerant {
		b.WriteString("history differs:\n")
		for _, d := range r.History.Diffs {
			fmt.Fprintf(&b, "%s\n", d.String())
		}
	}
	return b.String()
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
