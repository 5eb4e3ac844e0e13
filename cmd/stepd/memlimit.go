package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryFlags are stepd serve's flags of the garbage collector: its target
// (GOGC) and the soft memory limit (GOMEMLIMIT).
type memoryFlags struct {
	gcPercent *int
	limit     *string
}

func newMemoryFlags(fs *flag.FlagSet) memoryFlags {
	return memoryFlags{
		gcPercent: fs.Int("gc-percent", serveGCPercent, "the garbage collector's target (GOGC): a server trades memory for CPU; the environment's GOGC wins unless this is given"),
		limit: fs.String("memory-limit", envOr("STEPD_MEMORY_LIMIT", "auto"),
			"soft memory limit of the Go heap (GOMEMLIMIT): SIZE (e.g. 2GiB, 512MiB), auto (90% of the container's memory limit, when it has one) or off; the collector works harder near it, so that a burst under a high --gc-percent does not run the container out of memory (env STEPD_MEMORY_LIMIT; GOMEMLIMIT wins unless this is given)"),
	}
}

// apply sets the collector's target and the memory limit, and says what it
// set, for the log; the environment's GOGC and GOMEMLIMIT win over the
// defaults (not over flags given).
func (m memoryFlags) apply(fs *flag.FlagSet) (string, error) {
	gc := "GOGC from the environment"
	if flagSet(fs, "gc-percent") || os.Getenv("GOGC") == "" {
		if *m.gcPercent <= 0 {
			return "", fmt.Errorf("--gc-percent %d: want a positive percentage", *m.gcPercent)
		}
		debug.SetGCPercent(*m.gcPercent)
		gc = fmt.Sprintf("GOGC=%d", *m.gcPercent)
	}
	if !flagSet(fs, "memory-limit") && os.Getenv("STEPD_MEMORY_LIMIT") == "" && os.Getenv("GOMEMLIMIT") != "" {
		return gc + ", GOMEMLIMIT from the environment", nil
	}
	limit, err := memoryLimit(*m.limit, cgroupLimit)
	if err != nil {
		source := "--memory-limit"
		if !flagSet(fs, "memory-limit") {
			source = "STEPD_MEMORY_LIMIT"
		}
		return "", fmt.Errorf("%s=%s: %w", source, *m.limit, err)
	}
	if limit <= 0 {
		return gc + ", no memory limit", nil
	}
	debug.SetMemoryLimit(limit)
	return fmt.Sprintf("%s, memory limit %d MiB", gc, limit>>20), nil
}

// memoryLimit reads a --memory-limit: a size in bytes, 0 for none.
// cgroup returns the container's memory limit (0: none).
func memoryLimit(s string, cgroup func() int64) (int64, error) {
	switch s {
	case "off", "0", "":
		return 0, nil
	case "auto":
		return cgroup() / 10 * 9, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	num, shift := s, uint(0)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num, shift = strings.TrimSuffix(s, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, errors.New("want a size such as 2GiB, 512MiB or 1073741824, auto or off")
	}
	return n << shift, nil
}

// cgroupLimit is the memory limit of the process's cgroup (v2, then v1),
// or 0 when there is none.
func cgroupLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's "unlimited"
			return 0
		}
		return n
	}
	return 0
}
