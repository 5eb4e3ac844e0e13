// Command stepdload is a load client for stepd serve: an external process
// that sends AWS JSON 1.0 requests (X-Amz-Target: AWSStepFunctions.*,
// Content-Type application/x-amz-json-1.0) over HTTP from N concurrent
// clients, each sending its next request when the last one is answered,
// and reports requests per second, the 50th and 99th percentile latency
// and, with -pid, the server process's CPU time (user + system, from
// /proc/PID/stat) per request or per state transition.
//
// Modes (-mode):
//   - start: StartExecution of a 3-state Standard machine;
//   - mixed: 30 % StartExecution, 30 % DescribeExecution, 20 %
//     GetExecutionHistory and 20 % ListExecutions, after -warmup starts
//     (api's BenchmarkAPILoad over a real socket);
//   - express: StartSyncExecution of the same machine as Express;
//   - durable: -executions Standard executions of a chain of 10 Task
//     states at once, their results mocked; the server must run with
//     --mock-config cmd/stepdload/mock.json. It reports the server's CPU
//     per transition (state entered), from the first start to the last end.
//
// It creates the state machines it uses (named load…, once per server:
// it reuses those that exist) and prints one line of figures. Measuring
// commands are in docs/performance.md. It is a measuring tool, not part
// of stepd, and imports nothing of stepd's.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const role = "arn:aws:iam::123456789012:role/load"

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "the server's address")
	mode := flag.String("mode", "start", "start, mixed, express or durable")
	clients := flag.Int("clients", 64, "concurrent clients")
	duration := flag.Duration("duration", 10*time.Second, "how long the clients send requests (start, mixed, express)")
	warmup := flag.Int("warmup", 1000, "requests sent before measuring (mixed: the executions started that Describe and History read)")
	executions := flag.Int("executions", 1000, "durable: executions started at once")
	pid := flag.Int("pid", 0, "the server's process id, to read its CPU time; 0: not read")
	label := flag.String("label", "", "a label printed first on the line of figures")
	defSize := flag.Int("definition-size", 0, "start, mixed, express: pad the state machine's definition with a Comment to about this many bytes, as a real definition's size (0: the bare three states)")
	flag.Parse()
	c := &client{url: "http://" + *addr + "/", http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: *clients + 8, MaxIdleConnsPerHost: *clients + 8, DisableCompression: true}}, definitionSize: *defSize}
	var err error
	switch *mode {
	case "start", "mixed", "express":
		err = c.closedLoop(*mode, *clients, *duration, *warmup, *pid, *label)
	case "durable":
		err = c.durable(*executions, *pid, *label)
	default:
		err = fmt.Errorf("-mode: want start, mixed, express or durable, got %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stepdload:", err)
		os.Exit(1)
	}
}

// client sends the requests.
type client struct {
	url  string
	http *http.Client
	// definitionSize pads the closed loop's definition (-definition-size).
	definitionSize int
}

// call sends op with body and returns the answer's body.
func (c *client) call(op, body string) ([]byte, error) {
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return b, fmt.Errorf("%s: status %d: %s", op, resp.StatusCode, b)
	}
	return b, nil
}

// machine creates the state machine name of type typ with definition def,
// or finds it, and returns its ARN.
func (c *client) machine(name, typ, def string) (string, error) {
	in, _ := json.Marshal(map[string]string{"name": name, "type": typ, "roleArn": role, "definition": def})
	b, err := c.call("CreateStateMachine", string(in))
	if err != nil && !bytes.Contains(b, []byte("StateMachineAlreadyExists")) {
		return "", err
	}
	if err == nil {
		var out struct{ StateMachineArn string }
		if err := json.Unmarshal(b, &out); err != nil {
			return "", err
		}
		return out.StateMachineArn, nil
	}
	b, err = c.call("ListStateMachines", `{"maxResults":1000}`)
	if err != nil {
		return "", err
	}
	var list struct {
		StateMachines []struct{ Name, StateMachineArn string }
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", err
	}
	for _, sm := range list.StateMachines {
		if sm.Name == name {
			return sm.StateMachineArn, nil
		}
	}
	return "", fmt.Errorf("state machine %s exists but is not listed", name)
}

// threeStates is the machine of start, mixed and express (BenchmarkAPILoad's).
const threeStates = `{"StartAt":"A","States":{
	"A":{"Type":"Pass","Parameters":{"order.$":"$.order","step":1},"Next":"B"},
	"B":{"Type":"Pass","Result":{"ok":true},"ResultPath":"$.result","Next":"C"},
	"C":{"Type":"Pass","End":true}}}`

// padded returns def with a top-level Comment that brings it to about
// size bytes, or def itself when it is that long already.
func padded(def string, size int) string {
	if size <= len(def)+16 {
		return def
	}
	return `{"Comment":"` + strings.Repeat("x", size-len(def)-14) + `",` + def[1:]
}

// run is a unique part of execution names, so that runs against one
// server do not collide.
var run = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

// closedLoop runs mode start, mixed or express.
func (c *client) closedLoop(mode string, clients int, duration time.Duration, warmup, pid int, label string) error {
	typ, name := "STANDARD", "load"
	if mode == "express" {
		typ, name = "EXPRESS", "loadexpress"
	}
	sm, err := c.machine(name, typ, padded(threeStates, c.definitionSize))
	if err != nil {
		return err
	}
	execPrefix := strings.Replace(sm, ":stateMachine:", ":execution:", 1) + ":"
	var (
		mu    sync.Mutex
		names []string
		seq   atomic.Int64
	)
	start := func() error {
		n := "e" + run + "-" + strconv.FormatInt(seq.Add(1), 10)
		body := `{"stateMachineArn":"` + sm + `","name":"` + n + `","input":"{\"order\":{\"id\":\"` + n + `\",\"items\":[1,2,3]}}"}`
		if mode == "express" {
			b, err := c.call("StartSyncExecution", body)
			if err == nil && !bytes.Contains(b, []byte(`"SUCCEEDED"`)) {
				err = fmt.Errorf("StartSyncExecution: %s", b)
			}
			return err
		}
		if _, err := c.call("StartExecution", body); err != nil {
			return err
		}
		if mode == "mixed" {
			mu.Lock()
			names = append(names, n)
			mu.Unlock()
		}
		return nil
	}
	// Warm up from a few clients at once.
	var wg sync.WaitGroup
	var warmErr atomic.Value
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < warmup; i += 8 {
				if err := start(); err != nil {
					warmErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := warmErr.Load().(error); err != nil {
		return err
	}
	pick := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		return execPrefix + names[r.IntN(len(names))]
	}
	ops := []string{"start", "describe", "history", "list"}
	byOp := make([][4][]time.Duration, clients)
	var failures atomic.Int64
	var firstErr atomic.Value
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	began := time.Now()
	deadline := began.Add(duration)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for time.Now().Before(deadline) {
				op := 0
				if mode == "mixed" {
					switch x := r.IntN(10); {
					case x < 3:
						op = 0
					case x < 6:
						op = 1
					case x < 8:
						op = 2
					default:
						op = 3
					}
				}
				t0 := time.Now()
				var err error
				switch op {
				case 0:
					err = start()
				case 1:
					_, err = c.call("DescribeExecution", `{"executionArn":"`+pick(r)+`"}`)
				case 2:
					_, err = c.call("GetExecutionHistory", `{"executionArn":"`+pick(r)+`","maxResults":100}`)
				case 3:
					_, err = c.call("ListExecutions", `{"stateMachineArn":"`+sm+`","maxResults":100}`)
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				byOp[i][op] = append(byOp[i][op], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	var all []time.Duration
	var perOp [4][]time.Duration
	for _, l := range byOp {
		for op := range l {
			all = append(all, l[op]...)
			perOp[op] = append(perOp[op], l[op]...)
		}
	}
	n := len(all)
	line := fmt.Sprintf("%s mode=%s clients=%d requests=%d req/s=%.0f p50=%s p99=%s", label, mode, clients, n,
		float64(n)/elapsed.Seconds(), pct(all, 50), pct(all, 99))
	if pid != 0 && n > 0 {
		line += fmt.Sprintf(" cpu/req=%.0fµs", (cpu1-cpu0)/float64(n)*1e6)
	}
	if mode == "mixed" {
		for op, l := range perOp {
			line += fmt.Sprintf(" p99.%s=%s", ops[op], pct(l, 99))
		}
	}
	line += fmt.Sprintf(" errors=%d", failures.Load())
	fmt.Println(strings.TrimSpace(line))
	if err, _ := firstErr.Load().(error); err != nil {
		fmt.Fprintln(os.Stderr, "stepdload: first error:", err)
	}
	return nil
}

// durableStates is how many Task states an execution of mode durable runs.
const durableStates = 10

// durable runs mode durable.
func (c *client) durable(executions, pid int, label string) error {
	var def strings.Builder
	def.WriteString(`{"StartAt":"T0","States":{`)
	for i := range durableStates {
		next := `"Next":"T` + strconv.Itoa(i+1) + `"`
		if i == durableStates-1 {
			next = `"End":true`
		}
		if i > 0 {
			def.WriteString(",")
		}
		fmt.Fprintf(&def, `"T%d":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload.$":"$"},"OutputPath":"$.Payload",%s}`, i, next)
	}
	def.WriteString(`}}`)
	sm, err := c.machine("loaddurable", "STANDARD", def.String())
	if err != nil {
		return err
	}
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	began := time.Now()
	var wg sync.WaitGroup
	var firstErr atomic.Value
	sem := make(chan struct{}, 64)
	for i := range executions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := `{"stateMachineArn":"` + sm + `#Ok","name":"d` + run + "-" + strconv.Itoa(i) + `","input":"{}"}`
			if _, err := c.call("StartExecution", body); err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	// Wait for the last to end, asking every 50 ms.
	for {
		b, err := c.call("ListExecutions", `{"stateMachineArn":"`+sm+`","statusFilter":"RUNNING","maxResults":1}`)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(`"executions":[]`)) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(began)
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	b, err := c.call("ListExecutions", `{"stateMachineArn":"`+sm+`","statusFilter":"FAILED","maxResults":1}`)
	if err != nil {
		return err
	}
	if !bytes.Contains(b, []byte(`"executions":[]`)) {
		return fmt.Errorf("an execution failed: %s", b)
	}
	tr := float64(executions * durableStates)
	line := fmt.Sprintf("%s mode=durable executions=%d transitions=%.0f transitions/s=%.0f", label, executions, tr, tr/elapsed.Seconds())
	if pid != 0 {
		line += fmt.Sprintf(" cpu/transition=%.1fµs", (cpu1-cpu0)/tr*1e6)
	}
	fmt.Println(strings.TrimSpace(line))
	return nil
}

// pct is the p-th percentile of d (sorted here).
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)].Round(10 * time.Microsecond)
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTicks = 100

// cpuSeconds is the user + system CPU time of process pid; 0 if pid is 0.
func cpuSeconds(pid int) (float64, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command's name, in parentheses, may hold spaces: count fields
	// after its closing one (state is field 3, utime 14, stime 15).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc/PID/stat: no )")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("/proc/PID/stat: too few fields")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("/proc/PID/stat: bad times")
	}
	return (utime + stime) / clockTicks, nil
}
