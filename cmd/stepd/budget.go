package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
)

// budgetFlags are the flags that set the evaluation budget (engine.Budget)
// of stepd serve, run and test-state. They are read as text and checked
// once parsed, so that an error names the flag (or the environment
// variable the default came from).
type budgetFlags struct {
	timeout, steps, memory, valueLimit, pathValues budgetFlag
}

type budgetFlag struct {
	name, env, value string
	fromEnv          bool // the value is the environment variable's
}

// addBudgetFlags registers the budget flags on fs; with env, their
// defaults come from STEPD_EVAL_TIMEOUT and the like when set.
func addBudgetFlags(fs *flag.FlagSet, env bool) *budgetFlags {
	b := &budgetFlags{
		timeout:    budgetFlag{name: "eval-timeout", env: "STEPD_EVAL_TIMEOUT", value: engine.DefaultEvalTime.String()},
		steps:      budgetFlag{name: "eval-steps", env: "STEPD_EVAL_STEPS", value: strconv.Itoa(engine.DefaultEvalSteps)},
		memory:     budgetFlag{name: "eval-memory", env: "STEPD_EVAL_MEMORY", value: "128MiB"},
		valueLimit: budgetFlag{name: "value-limit", env: "STEPD_VALUE_LIMIT", value: "16MiB"},
		pathValues: budgetFlag{name: "path-values", env: "STEPD_PATH_VALUES", value: strconv.Itoa(interp.DefaultPathNodes)},
	}
	usage := map[*budgetFlag]string{
		&b.timeout:    "wall-clock time one JSONata evaluation may take (a Go duration such as 2s or 500ms; 0: no limit)",
		&b.steps:      "steps one JSONata evaluation may take: function calls and items a filter, sort or range visits (0: no limit)",
		&b.memory:     "bytes the process may allocate while one JSONata evaluation runs (a size such as 128MiB or 1GB; 0: no limit)",
		&b.valueLimit: "JSON size the value of one JSONPath path or intrinsic function may have (a size such as 16MiB)",
		&b.pathValues: "values one JSONPath path may collect on its way (such as $..*..*)",
	}
	for _, f := range []*budgetFlag{&b.timeout, &b.steps, &b.memory, &b.valueLimit, &b.pathValues} {
		text := usage[f]
		if env {
			f.fromEnv = os.Getenv(f.env) != ""
			f.value = envOr(f.env, f.value)
			text += " (env " + f.env + ")"
		}
		fs.StringVar(&f.value, f.name, f.value, text)
	}
	return b
}

// budget returns the budget the flags of fs set, once parsed, or an error
// naming the flag (or the environment variable) whose value is not valid.
func (b *budgetFlags) budget(fs *flag.FlagSet) (engine.Budget, error) {
	fs.Visit(func(f *flag.Flag) {
		for _, bf := range []*budgetFlag{&b.timeout, &b.steps, &b.memory, &b.valueLimit, &b.pathValues} {
			if bf.name == f.Name {
				bf.fromEnv = false
			}
		}
	})
	var out engine.Budget
	d, err := time.ParseDuration(b.timeout.value)
	if err == nil && d < 0 {
		err = errors.New("must not be negative")
	}
	if err != nil {
		return out, b.timeout.err("a duration such as 2s or 500ms, or 0 for no limit", err)
	}
	if out.Time = d; d == 0 {
		out.Time = -1
	}
	n, err := parseCount(b.steps.value)
	if err != nil {
		return out, b.steps.err("a whole number of steps, or 0 for no limit", err)
	}
	if out.Steps = n; n == 0 {
		out.Steps = -1
	}
	n, err = parseSize(b.memory.value)
	if err != nil {
		return out, b.memory.err("a size such as 128MiB, or 0 for no limit", err)
	}
	if out.Alloc = n; n == 0 {
		out.Alloc = -1
	}
	n, err = parseSize(b.valueLimit.value)
	if err == nil && n == 0 {
		err = errors.New("must be more than 0")
	}
	if err == nil && n > math.MaxInt32 {
		err = errors.New("must be at most 2GiB")
	}
	if err != nil {
		return out, b.valueLimit.err("a size such as 16MiB", err)
	}
	out.ValueBytes = int(n)
	n, err = parseCount(b.pathValues.value)
	if err == nil && n == 0 {
		err = errors.New("must be more than 0")
	}
	if err == nil && n > math.MaxInt32 {
		err = errors.New("is too large")
	}
	if err != nil {
		return out, b.pathValues.err("a whole number of values", err)
	}
	out.PathNodes = int(n)
	return out, nil
}

func (f *budgetFlag) err(want string, err error) error {
	if f.fromEnv {
		return fmt.Errorf("%s=%q: want %s: %w", f.env, f.value, want, err)
	}
	return fmt.Errorf("--%s %q: want %s: %w", f.name, f.value, want, err)
}

// parseCount parses a whole number of at least 0 (digits, optionally
// grouped with _ or ,: 10_000_000).
func parseCount(s string) (int64, error) {
	t := strings.NewReplacer("_", "", ",", "").Replace(strings.TrimSpace(s))
	if t == "" || strings.ContainsAny(t, "+-") {
		return 0, errors.New("not a whole number of at least 0")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, errors.New("not a whole number of at least 0")
	}
	return n, nil
}

// sizeUnits are the suffixes parseSize accepts, lower-cased.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize parses a number of bytes: a whole number with an optional unit
// (B, KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB, and K, M, G, T,
// in powers of 1024; any case).
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, factor = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.factor
			break
		}
	}
	n, err := parseCount(t)
	if err != nil {
		return 0, errors.New("not a size: a whole number with an optional unit B, KB, MB, GB, KiB, MiB or GiB")
	}
	if n > math.MaxInt64/factor {
		return 0, errors.New("too large")
	}
	return n * factor, nil
}
