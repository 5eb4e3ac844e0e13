package main

import (
	"strings"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	cgroup := func() int64 { return 1 << 30 }
	none := func() int64 { return 0 }
	for _, c := range []struct {
		in     string
		cgroup func() int64
		want   int64
		bad    bool
	}{
		{"auto", cgroup, (1 << 30) / 10 * 9, false},
		{"auto", none, 0, false},
		{"off", cgroup, 0, false},
		{"2GiB", none, 2 << 30, false},
		{"512MiB", none, 512 << 20, false},
		{"1073741824", none, 1 << 30, false},
		{"-1GiB", none, 0, true},
		{"lots", none, 0, true},
		{"1.5GiB", none, 0, true},
		{"9999999TiB", none, 0, true},
	} {
		got, err := memoryLimit(c.in, c.cgroup)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("memoryLimit(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestMemoryFlagsRefused: a bad --memory-limit or --gc-percent stops
// stepd serve with a usage error naming it, as does a bad
// STEPD_MEMORY_LIMIT.
func TestMemoryFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--memory-limit", "lots"}, "--memory-limit=lots"},
		{"", []string{"--gc-percent", "0"}, "--gc-percent 0"},
		{"1.5GiB", nil, "STEPD_MEMORY_LIMIT=1.5GiB"},
	} {
		t.Setenv("STEPD_MEMORY_LIMIT", c.env)
		code, _, stderr := runMain(t, "", append([]string{"serve", "--data", "", "--addr", "127.0.0.1:0"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v with STEPD_MEMORY_LIMIT=%q: exit %d, %q; want %d naming %q", c.args, c.env, code, stderr, exitUsage, c.want)
		}
	}
}
