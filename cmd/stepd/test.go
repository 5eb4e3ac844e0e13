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
	"github.com/stepd/stepd/value"
)

func testCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json (one object per case)")
	run := fs.String("run", "", "run only the cases whose names match this regular expression")
	verbose := fs.Bool("v", false, "also list the cases that pass")
	config := fs.String("config", "", "resource registry (as for stepd run) for the cases that do not name their own with \"config\"")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd test PATH... [--format text|json] [--run REGEXP] [--config FILE] [-v]")
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
		switch c.Kind {
		case "execution":
			r = conformance.Check(ctx, c)
		case "invalid-definition", "validate-definition":
			r = conformance.CheckDefinition(c)
		case "test-state":
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
