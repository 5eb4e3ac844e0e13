package main

import "testing"

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
