package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const healthUsage = `usage: stepd health [--addr HOST:PORT | --endpoint URL] [--live] [--timeout D]

Asks a stepd serve whether it is ready (GET /readyz; with --live, whether
it is alive: GET /healthz) and exits 0 when it answers 200, 1 otherwise,
printing why. For a container's HEALTHCHECK and orchestrators' exec probes.
The server is the one this environment would start (STEPD_ADDR, by default
127.0.0.1:8083; an address of every interface, 0.0.0.0 or [::], is asked
on the loopback one), or the one --addr or --endpoint names.
`

func healthCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCLI("stepd health", healthUsage, stdout, stderr)
	fs.positional("", 0, 0)
	addr := fs.String("addr", envOr("STEPD_ADDR", "127.0.0.1:8083"), "HOST:PORT of the server (env STEPD_ADDR, as stepd serve reads it)")
	endpoint := fs.String("endpoint", "", "URL of the server, e.g. http://stepd:8083 (instead of --addr)")
	live := fs.Bool("live", false, "ask whether the process serves at all (/healthz) rather than whether it is ready (/readyz)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if _, code, ok := fs.parse(args); !ok {
		return code
	}
	if *timeout <= 0 {
		return fs.fail("--timeout must be positive, not %s", *timeout)
	}
	base, err := healthBase(*addr, *endpoint, flagSet(fs.FlagSet, "addr"))
	if err != nil {
		return fs.fail("%v", err)
	}
	path := "/readyz"
	if *live {
		path = "/healthz"
	}
	u := base + path
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fs.fail("%v", err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		fmt.Fprintf(stderr, "stepd health: %s: %v\n", u, err)
		return exitFail
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	text := strings.TrimSpace(string(body))
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "stepd health: %s: %s %s\n", u, res.Status, text)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: %s\n", u, text)
	return exitOK
}

// healthBase is the URL of the server without a path: the endpoint when
// one is given, else http://addr, an unspecified host (0.0.0.0, [::], none)
// replaced by the loopback address.
func healthBase(addr, endpoint string, addrGiven bool) (string, error) {
	if endpoint != "" {
		if addrGiven {
			return "", fmt.Errorf("give --addr or --endpoint, not both")
		}
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--endpoint: want a URL such as http://stepd:8083, got %q", endpoint)
		}
		return strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("--addr: want HOST:PORT, got %q", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
