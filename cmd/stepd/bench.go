package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stepd/stepd/bench"
)

// skipByDefault lists workloads that `stepd bench` leaves out unless named.
var skipByDefault = map[string]string{
	"w3-map-10k": "its output exceeds 256 KiB, so AWS (and stepd) fail it with States.DataLimitExceeded; w3n measures the same Map",
}

const benchUsage = `usage: stepd bench [WORKLOAD...] [--workloads DIR] [--runs N] [--warmup N] [--rounds N] [--inline] [--peer [--node PATH] [--peer-dir DIR]] [--json]

Measures the engine on the benchmark workloads (all of them, or those
named), and with --peer against aws-local-stepfunctions.
`

func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCLI("stepd bench", benchUsage, stdout, stderr)
	fs.positional("WORKLOAD", 0, -1)
	dir := fs.String("workloads", filepath.Join("testdata", "shared", "bench", "workloads"), "the workloads folder (NAME.asl.json, NAME.input.json, NAME.meta.json; the repository's copy of ../shared/bench/workloads by default)")
	runs := fs.Int("runs", 10, "timed runs per measurement (the median is reported)")
	warmup := fs.Int("warmup", 2, "untimed runs before the timed ones")
	rounds := fs.Int("rounds", 1, "measurements per workload; with --peer, stepd and the peer alternate in each round")
	peer := fs.Bool("peer", false, "also run the npm peer aws-local-stepfunctions alternately and print the ratios")
	node := fs.String("node", envOr("STEPD_BENCH_NODE", "node"), "with --peer: the node binary (Node ≥ 22)")
	peerDir := fs.String("peer-dir", envOr("PEER_DIR", "/tmp/peers"), "with --peer: a folder whose node_modules holds aws-local-stepfunctions")
	runner := fs.String("peer-runner", "", "with --peer: the peer's runner script (default: ../peer/run_aws_local_stepfunctions.mjs beside the workloads)")
	asJSON := fs.Bool("json", false, "print one JSON line per measurement instead of a table")
	inline := fs.Bool("inline", false, "also measure Task states through the engine's inline path for Immediate invokers (mocks), beside the generic invoker's that every real handler takes")
	names, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if !*peer {
		var stray []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "node" || f.Name == "peer-dir" || f.Name == "peer-runner" {
				stray = append(stray, "--"+f.Name)
			}
		})
		if len(stray) > 0 {
			return fs.fail("%s only apply with --peer", strings.Join(stray, ", "))
		}
	}
	if *runs < 1 || *warmup < 0 || *rounds < 1 {
		return fs.fail("--runs and --rounds must be at least 1, --warmup at least 0")
	}
	all, err := bench.Load(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "stepd bench: %v\n", err)
		return exitUsage
	}
	var todo []*bench.Workload
	for _, w := range all {
		if len(names) == 0 {
			if why, skip := skipByDefault[w.Name]; skip {
				fmt.Fprintf(stderr, "stepd bench: leaving out %s: %s (name it to run it)\n", w.Name, why)
				continue
			}
			todo = append(todo, w)
		} else if slices.Contains(names, w.Name) {
			todo = append(todo, w)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(todo, func(w *bench.Workload) bool { return w.Name == n }) {
			var have []string
			for _, w := range all {
				have = append(have, w.Name)
			}
			return fs.fail("no workload %q in %s; it has %s", n, *dir, strings.Join(have, ", "))
		}
	}
	var p *bench.Peer
	if *peer {
		r := *runner
		if r == "" {
			r = filepath.Join(*dir, "..", "peer", "run_aws_local_stepfunctions.mjs")
		}
		p = &bench.Peer{Node: *node, Runner: r, PkgDir: *peerDir, Workloads: *dir}
	}
	opts := bench.Options{Runs: *runs, Warmup: *warmup}
	enc := json.NewEncoder(stdout)
	m, err := gauge(ctx, p, opts)
	if err != nil {
		fmt.Fprintf(stderr, "stepd bench: %v\n", err)
		return exitFail
	}
	if *asJSON {
		enc.Encode(map[string]any{"machine": m})
	} else {
		fmt.Fprintln(stdout, m)
		fmt.Fprintln(stdout)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !*asJSON {
		head := "workload\ttransitions\tstepd tr/s\tallocs/tr\tB/tr\tstatus\t"
		if *inline {
			head += "inline tr/s\tgeneric cost÷inline\t"
		}
		if p != nil {
			head += "peer tr/s\tstepd/peer\t"
		}
		fmt.Fprintln(tw, head)
	}
	var ratios []float64
	var engineName string
	code = exitOK
	for _, w := range todo {
		var ours, theirs, inl []float64
		peerWrong := false
		var last *bench.Result
		for range *rounds {
			if *inline {
				o := opts
				o.Inline = true
				r, err := bench.Run(ctx, w, o)
				if err != nil {
					fmt.Fprintf(stderr, "stepd bench: %v\n", err)
					return exitFail
				}
				inl = append(inl, r.TransitionsPerSec)
				if *asJSON {
					enc.Encode(map[string]any{"engine": "stepd", "result": r})
				}
			}
			r, err := bench.Run(ctx, w, opts)
			if err != nil {
				fmt.Fprintf(stderr, "stepd bench: %v\n", err)
				return exitFail
			}
			last = r
			ours = append(ours, r.TransitionsPerSec)
			if *asJSON {
				enc.Encode(map[string]any{"engine": "stepd", "result": r})
			}
			if !r.OK {
				code = exitFail
				fmt.Fprintf(stderr, "stepd bench: %s: %s\n", w.Name, strings.Join(r.Problems, "; "))
			}
			if p != nil {
				pr, err := p.Run(ctx, w.Name, opts)
				if err != nil {
					fmt.Fprintf(stderr, "stepd bench: %v\n", err)
					return exitFail
				}
				engineName = pr.Engine + " on Node " + pr.Node
				theirs = append(theirs, pr.TransitionsPerSec)
				if *asJSON {
					enc.Encode(map[string]any{"engine": pr.Engine, "result": pr})
				}
				if !pr.OK {
					peerWrong = true
					fmt.Fprintf(stderr, "stepd bench: the peer on %s: %s\n", w.Name, strings.Join(pr.Problems, "; "))
				}
			}
		}
		if *asJSON {
			continue
		}
		slices.Sort(ours)
		line := fmt.Sprintf("%s\t%d\t%s\t%.2f\t%.0f\t%s\t", w.Name, last.Transitions, rate(bench.Median(ours)), last.AllocsPerTransition, last.BytesPerTransition, status(last))
		if *inline {
			slices.Sort(inl)
			line += fmt.Sprintf("%s\t%.2f\t", rate(bench.Median(inl)), bench.Median(inl)/bench.Median(ours))
		}
		switch {
		case p != nil && peerWrong:
			// The peer cannot run it (j1 needs JSONata, which it lacks):
			// no ratio, and none in the median.
			line += "—\tpeer fails\t"
		case p != nil:
			slices.Sort(theirs)
			ratio := bench.Median(ours) / bench.Median(theirs)
			ratios = append(ratios, ratio)
			line += fmt.Sprintf("%s\t%.1f×\t", rate(bench.Median(theirs)), ratio)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(ratios) > 0 && !*asJSON {
		slices.Sort(ratios)
		fmt.Fprintf(stdout, "\nmedian stepd/peer ratio: %.1f× (lowest %.1f×); peer: %s; %d round(s) of %d timed runs after %d warm-up, alternating\n",
			bench.Median(ratios), ratios[0], engineName, *rounds, *runs, *warmup)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "load average at the end: %s\n", loadAverage())
	}
	return code
}

func rate(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func status(r *bench.Result) string {
	if r.OK {
		return "ok"
	}
	return "WRONG"
}

// machine describes the machine a bench run measured on, so that figures
// from different machines can be compared: its cores, its load, and two
// gauges of its speed, a fixed computation (SHA-256 over 64 MiB) and,
// with --peer, the peer's rate on w1-pass-chain.
type machine struct {
	Cores       int     `json:"cores"`
	LoadAverage string  `json:"load_average"`
	SHA256MBps  float64 `json:"sha256_mb_per_sec"`
	PeerW1      float64 `json:"peer_w1_transitions_per_sec,omitempty"`
}

func (m machine) String() string {
	s := fmt.Sprintf("machine: %d cores, load average %s; gauge: SHA-256 %.0f MB/s", m.Cores, m.LoadAverage, m.SHA256MBps)
	if m.PeerW1 > 0 {
		s += fmt.Sprintf(", peer w1-pass-chain %s tr/s", rate(m.PeerW1))
	}
	return s
}

// gauge measures the machine (see machine).
func gauge(ctx context.Context, p *bench.Peer, opts bench.Options) (machine, error) {
	m := machine{Cores: runtime.NumCPU(), LoadAverage: loadAverage()}
	buf := make([]byte, 1<<20)
	best := time.Duration(math.MaxInt64)
	for range 3 {
		t0 := time.Now()
		h := sha256.New()
		for range 64 {
			h.Write(buf)
		}
		h.Sum(nil)
		best = min(best, time.Since(t0))
	}
	m.SHA256MBps = 64 / best.Seconds()
	if p != nil {
		r, err := p.Run(ctx, "w1-pass-chain", opts)
		if err != nil {
			return m, err
		}
		m.PeerW1 = r.TransitionsPerSec
	}
	return m, nil
}

// loadAverage is the first three fields of /proc/loadavg ("unknown" where
// there is none).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
