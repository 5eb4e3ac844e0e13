package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
)

// Peer runs workloads through the npm package aws-local-stepfunctions with
// the peer's runner script (../shared/bench/peer), one Node process per
// measurement.
type Peer struct {
	Node      string // the node binary (Node ≥ 22)
	Runner    string // run_aws_local_stepfunctions.mjs
	PkgDir    string // a folder whose node_modules holds aws-local-stepfunctions
	Workloads string // the workloads folder
}

// PeerResult is the runner's JSON line.
type PeerResult struct {
	Workload          string   `json:"workload"`
	Transitions       int      `json:"transitions"`
	SecondsMedian     float64  `json:"seconds_median"`
	TransitionsPerSec float64  `json:"transitions_per_sec"`
	PeakRSSMB         float64  `json:"peak_rss_mb"`
	Engine            string   `json:"engine"`
	Node              string   `json:"node"`
	OK                bool     `json:"ok"`
	Problems          []string `json:"problems"`
}

// Run measures one workload with the peer.
func (p *Peer) Run(ctx context.Context, name string, opts Options) (*PeerResult, error) {
	cmd := exec.CommandContext(ctx, p.Node, p.Runner, name, "--runs", strconv.Itoa(opts.Runs),
		"--warmup", strconv.Itoa(opts.Warmup), "--workloads", p.Workloads, "--pkg", p.PkgDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var r PeerResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return nil, fmt.Errorf("bench: peer on %s: %v: %s%s", name, runErr, stdout.String(), stderr.String())
	}
	return &r, nil
}
