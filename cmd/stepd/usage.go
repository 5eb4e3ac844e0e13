package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/stepd/stepd/asl"
)

// cli is one command's flag set and how it tells its usage: -h prints
// the usage text and the flags on standard output; a usage error is one
// line naming the problem, then how to get help, on standard error, and
// exit code 2.
type cli struct {
	*flag.FlagSet
	name  string // "stepd run"
	usage string // the usage line, then any text before the flags
	// args names the positional arguments ("DEFINITION"), and min and max
	// bound their number (max < 0: no bound).
	args     string
	min, max int
	stdout   io.Writer
	stderr   io.Writer
}

// newCLI makes the flag set of a command: name is "stepd run", usage
// starts with its usage line ("usage: stepd run DEFINITION [flags]").
func newCLI(name, usage string, stdout, stderr io.Writer) *cli {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &cli{FlagSet: fs, name: name, usage: usage, stdout: stdout, stderr: stderr}
}

// positional says what positional arguments the command takes: what
// names them, and how many (max < 0: any number).
func (c *cli) positional(what string, min, max int) {
	c.args, c.min, c.max = what, min, max
}

// help prints the usage text and the flags on standard output.
func (c *cli) help() {
	fmt.Fprint(c.stdout, strings.TrimRight(c.usage, "\n")+"\n")
	n := 0
	c.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(c.stdout, "\nFlags:\n")
	c.SetOutput(c.stdout)
	c.PrintDefaults()
	c.SetOutput(io.Discard)
}

// fail prints a usage error (one line naming the problem, then how to get
// help) and returns the usage exit code.
func (c *cli) fail(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(c.stderr, "run '%s -h' for help\n", c.name)
	return exitUsage
}

// parse parses args, whose flags may come before, between or after the
// positional arguments, and checks their number. ok is false when the
// command is to end with code: after -h (0) or a usage error (2).
func (c *cli) parse(args []string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(c.FlagSet, args)
	if errors.Is(err, flag.ErrHelp) {
		c.help()
		return nil, exitOK, false
	}
	if err != nil {
		return nil, c.fail("%s", c.flagError(err)), false
	}
	switch {
	case len(pos) < c.min:
		return nil, c.fail("missing %s", c.args), false
	case c.max >= 0 && len(pos) > c.max:
		extra := pos[c.max]
		switch c.max {
		case 0:
			return nil, c.fail("unexpected argument %q: it takes flags only", extra), false
		case 1:
			return nil, c.fail("unexpected argument %q after %s %q: one %s is taken", extra, c.args, pos[0], c.args), false
		}
		return nil, c.fail("unexpected argument %q: at most %d %s", extra, c.max, c.args), false
	}
	return pos, exitOK, true
}

// flagName is how the help and the errors write a flag: -o, --input.
func flagName(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

var (
	unknownFlagRe  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	invalidValueRe = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-+([^:]+): (.*)$`)
	flagInErrorRe  = regexp.MustCompile(`(flag |for |: )-([A-Za-z][A-Za-z0-9-]*)`)
)

// flagError rewrites an error of package flag in the command's words: an
// unknown flag with the nearest known one, flags written as the help
// writes them.
func (c *cli) flagError(err error) string {
	msg := err.Error()
	if m := unknownFlagRe.FindStringSubmatch(msg); m != nil {
		name, _, _ := strings.Cut(m[1], "=")
		known := map[string]bool{}
		c.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
		out := "unknown flag " + flagName(name)
		if near := asl.Nearest(name, maps.Keys(known)); near != "" {
			out += " (did you mean " + flagName(near) + "?)"
		}
		return out
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return flagName(name) + " needs a value"
	}
	if m := invalidValueRe.FindStringSubmatch(msg); m != nil {
		what := m[3]
		if f := c.Lookup(m[2]); f != nil && what == "parse error" {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case int, int64, uint, uint64:
					what = "want a whole number"
				case float64:
					what = "want a number"
				case time.Duration:
					what = "want a duration such as 500ms, 30s or 2m"
				case bool:
					what = "want true or false"
				}
			}
		}
		return fmt.Sprintf("%s %s: %s", flagName(m[2]), m[1], what)
	}
	return flagInErrorRe.ReplaceAllStringFunc(msg, func(s string) string {
		m := flagInErrorRe.FindStringSubmatch(s)
		return m[1] + flagName(m[2])
	})
}
