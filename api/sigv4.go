package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Auth verifies AWS Signature Version 4 on every request when Keys is not
// empty: service "states", the server's region (any when Region is empty),
// a clock skew of at most MaxSkew.
type Auth struct {
	// Keys maps access key ids to secret keys.
	Keys map[string]string
	// Region is the region credentials must be scoped to.
	Region  string
	MaxSkew time.Duration // default 15 minutes
	Now     func() time.Time
}

func authError(code, format string, args ...any) *apiError {
	return &apiError{status: 403, code: code, message: fmt.Sprintf(format, args...)}
}

// verify checks the request's signature over body, for the service
// "states".
func (a *Auth) verify(r *http.Request, body []byte) error { return a.verifyService(r, body, "states") }

// verifyService checks the request's signature over body, for service.
func (a *Auth) verifyService(r *http.Request, body []byte, service string) error {
	h := r.Header.Get("Authorization")
	if h == "" {
		return authError("MissingAuthenticationTokenException", "Missing Authentication Token")
	}
	alg, rest, _ := strings.Cut(h, " ")
	if alg != "AWS4-HMAC-SHA256" {
		return authError("IncompleteSignatureException", "Unsupported authorization algorithm %q", alg)
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok {
			fields[k] = v
		}
	}
	cred, signed, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if cred == "" || signed == "" || sig == "" {
		return authError("IncompleteSignatureException", "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature'")
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[3] != service || scope[4] != "aws4_request" {
		return authError("IncompleteSignatureException", "Credential should be scoped to a valid region and the service '%s'", service)
	}
	if a.Region != "" && scope[2] != a.Region {
		return authError("InvalidSignatureException", "Credential should be scoped to a valid region, not %s: this server is region %s.", quote(clip(scope[2], 64)), a.Region)
	}
	secret, ok := a.Keys[scope[0]]
	if !ok {
		return authError("UnrecognizedClientException", "The security token included in the request is invalid.")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil {
		return authError("IncompleteSignatureException", "the request needs a valid X-Amz-Date header")
	}
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	skew := a.MaxSkew
	if skew == 0 {
		skew = 15 * time.Minute
	}
	if d := now.Sub(t); d > skew || d < -skew {
		return authError("InvalidSignatureException", "Signature expired: %s is now earlier than %s (%s - %s.)", amzDate,
			now.Add(-skew).UTC().Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"), skew)
	}
	if scope[1] != amzDate[:8] {
		return authError("InvalidSignatureException", "Credential date does not match the X-Amz-Date header")
	}
	if p := r.Header.Get("X-Amz-Content-Sha256"); p != "" && p != "UNSIGNED-PAYLOAD" {
		sum := sha256.Sum256(body)
		if subtle.ConstantTimeCompare([]byte(p), []byte(hex.EncodeToString(sum[:]))) != 1 {
			return authError("InvalidSignatureException", "The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
	}
	canonical := canonicalRequest(r, signed, body)
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+secret), scope[1])
	key = hmacSHA256(key, scope[2])
	key = hmacSHA256(key, scope[3])
	key = hmacSHA256(key, "aws4_request")
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return authError("InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalRequest builds the SigV4 canonical request.
func canonicalRequest(r *http.Request, signed string, body []byte) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path + "\n")
	b.WriteString(canonicalQuery(r.URL.Query()) + "\n")
	for _, h := range strings.Split(signed, ";") {
		var v string
		if h == "host" {
			v = r.Host
		} else {
			v = strings.Join(r.Header.Values(h), ",")
		}
		b.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	b.WriteString("\n" + signed + "\n")
	if p := r.Header.Get("X-Amz-Content-Sha256"); p != "" {
		b.WriteString(p)
	} else {
		sum := sha256.Sum256(body)
		b.WriteString(hex.EncodeToString(sum[:]))
	}
	return b.String()
}

func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vals := append([]string(nil), q[k]...)
		sort.Strings(vals)
		for _, v := range vals {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	return strings.Join(parts, "&")
}
