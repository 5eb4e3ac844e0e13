package api

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"unicode/utf8"
)

// Requests to a server that checks no signatures (no --access-keys) must
// be addressed to a loopback host or an IP address: a web page that
// resolves its own domain name to 127.0.0.1 (DNS rebinding) would
// otherwise reach the API from the user's browser with the page's Host.
// The operations endpoints take the same check (opsguard.go).

// hostAllowed reports whether a request's Host header names this server:
// localhost (and *.localhost), any IP literal (127.0.0.1, [::1], a pod's
// address: no DNS rebinding gives a page an IP literal as its host), their
// "sync-" forms (the SDKs' host prefix of StartSyncExecution and
// TestState), or one of the extra hosts ("*" allows any).
func hostAllowed(hostport string, extra []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	host = strings.TrimPrefix(host, "sync-")
	for _, e := range extra {
		if e == "*" || strings.EqualFold(strings.TrimPrefix(e, "sync-"), host) {
			return true
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i] // an IPv6 zone
	}
	return net.ParseIP(host) != nil
}

func hostError(host string) error {
	return &apiError{status: 403, code: "AccessDeniedException", message: fmt.Sprintf(
		"stepd serve answers unsigned requests only when addressed to localhost or an IP address (127.0.0.1, [::1], …), not to %s (a DNS-rebinding guard); "+
			"start it with --allow-host to name this host, or, for the API, --access-keys to require signed requests", quote(clip(host, 100)))}
}

// clip shortens s to at most n bytes (on a rune boundary), saying how long
// it was: error messages never echo megabyte-long values back.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

func quote(s string) string { return "'" + s + "'" }

// maxQuoted bounds a quoted value inside an error message: above the
// longest value AWS echoes whole (a ListExecutions nextToken of 3,097
// characters, recorded), far below a megabyte.
const maxQuoted = 4096

// clipMessage shortens every quoted value ('…' or "…") of an error message
// that is longer than maxQuoted bytes, and the message as a whole, so that
// an error never echoes a megabyte-long ARN, token or input back.
func clipMessage(msg string) string {
	if len(msg) <= maxQuoted {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		c := msg[i]
		if c == '\'' || c == '"' {
			if j := strings.IndexByte(msg[i+1:], c); j > maxQuoted {
				b.WriteByte(c)
				b.WriteString(clip(msg[i+1:i+1+j], maxQuoted))
				b.WriteByte(c)
				i += j + 2
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return clip(b.String(), 4096)
}

// trailing reports what follows the first JSON value of a request body, if
// anything but white space does.
func trailing(body []byte, offset int64) error {
	rest := bytes.TrimLeft(body[offset:], " \t\r\n")
	if len(rest) == 0 {
		return nil
	}
	return &apiError{status: 400, code: "SerializationException", message: fmt.Sprintf(
		"the request body holds more than one JSON value: unexpected %s at offset %d", quote(clip(string(rest), 32)), len(body)-len(rest))}
}
